#!/usr/bin/env python3
"""The published site in headless Chromium (harness.publish.browser).

Publishes two fixture runs with the same comparison key (so the history chart has two
points), opens every page from file:// and requires: the load event, no console errors or
exceptions, no network request other than file:// inside the site directory, and on the
chart pages SVG charts with data marks, titles and role="img". Takes a full-page screenshot
of each chart page (index.png, scaling.png, memory.png, latency.png) and prints its path.

Chromium is driven over the DevTools protocol on a pipe (--remote-debugging-pipe: commands
are written to the browser's fd 3 and replies read from its fd 4, each a JSON message ended
by a NUL byte), so no extra Python package is needed. Exits 77 (skipped) when chromium is
not installed."""
import argparse
import base64
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

PAGES = ["index.html", "suite.html", "scaling.html", "memory.html", "latency.html",
         "provenance.html", "reproduce.html"]
CHART_PAGES = {"index.html", "scaling.html", "memory.html", "latency.html"}


class Browser:
    def __init__(self, binary, profile):
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        args = [binary, "--headless=new", "--remote-debugging-pipe", "--disable-gpu",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--user-data-dir=" + profile, "about:blank"]
        # Chromium refuses to sandbox as root, and CI containers often lack the user
        # namespaces its sandbox needs; the pages are our own local files.
        args.insert(1, "--no-sandbox")

        def wire_fds():
            # Copies first, so neither dup2 can overwrite the other pipe's end; dup2 makes
            # 3 and 4 inheritable, everything else Python opened is close-on-exec.
            read_end, write_end = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        self.proc = subprocess.Popen(args, close_fds=False, preexec_fn=wire_fds,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None, timeout=30):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            reply = self.read(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})
            self.events.append(reply)

    def read(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.time()
            if left <= 0 or not select.select([self.from_browser], [], [], left)[0]:
                raise TimeoutError("no reply from chromium")
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def wait_event(self, method, session, timeout=30):
        deadline = time.time() + timeout
        for i, e in enumerate(self.events):
            if e.get("method") == method and e.get("sessionId") == session:
                return self.events.pop(i)
        while True:
            e = self.read(deadline)
            if e.get("method") == method and e.get("sessionId") == session:
                return e
            self.events.append(e)

    def close(self):
        try:
            self.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


PAGE_FACTS = """JSON.stringify({
  charts: document.querySelectorAll('svg.chart').length,
  marks: document.querySelectorAll('svg.chart .mark').length,
  untitled: [...document.querySelectorAll('svg.chart')].filter(s =>
      s.getAttribute('role') !== 'img' || !s.querySelector(':scope > title') ||
      !s.querySelector(':scope > title').textContent.trim() || !s.getAttribute('aria-labelledby')).length,
  emptyCharts: [...document.querySelectorAll('svg.chart')].filter(s =>
      s.querySelectorAll('.mark').length === 0).length,
  scripts: document.scripts.length,
  title: document.title,
  styled: getComputedStyle(document.body).backgroundColor === 'rgb(251, 251, 252)'
})"""


def check_page(browser, session, site_url, page, expect_charts=None):
    """Loads one page; returns (problems, facts)."""
    problems = []
    browser.events = [e for e in browser.events if e.get("sessionId") != session]
    nav = browser.send("Page.navigate", {"url": site_url + page}, session=session)
    if nav.get("errorText"):
        return ["%s: navigation failed: %s" % (page, nav["errorText"])], None
    browser.wait_event("Page.loadEventFired", session)
    evaluated = browser.send("Runtime.evaluate", {"expression": PAGE_FACTS, "returnByValue": True},
                             session=session)
    if "exceptionDetails" in evaluated:
        return ["%s: page check failed: %s" % (page, evaluated["exceptionDetails"])], None
    facts = json.loads(evaluated["result"]["value"])
    # Let late console messages and requests arrive, then look at everything queued.
    time.sleep(0.3)
    browser.send("Runtime.evaluate", {"expression": "1"}, session=session, timeout=5)
    facts["requests"] = 0
    for e in browser.events:
        if e.get("sessionId") != session:
            continue
        method, params = e.get("method"), e.get("params", {})
        if method == "Network.requestWillBeSent":
            facts["requests"] += 1
            url = params["request"]["url"]
            if not url.startswith(site_url):
                problems.append("%s: network request to %s" % (page, url))
        elif method == "Network.loadingFailed":
            problems.append("%s: a resource failed to load: %s" % (page, params.get("errorText")))
        elif method == "Runtime.exceptionThrown":
            problems.append("%s: exception: %s" % (page, params["exceptionDetails"].get("text")))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            problems.append("%s: console error (console.%s)" % (page, params.get("type")))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            problems.append("%s: console error: %s" % (page, params["entry"].get("text")))
    if facts["scripts"]:
        problems.append("%s: has %d script elements" % (page, facts["scripts"]))
    if not facts["title"]:
        problems.append("%s: no <title>" % page)
    if facts["untitled"]:
        problems.append("%s: %d charts without role=img/title/aria-labelledby" % (page, facts["untitled"]))
    if expect_charts is None:
        expect_charts = page in CHART_PAGES
        if not facts["styled"]:
            problems.append("%s: style.css not applied" % page)
    if expect_charts:
        if facts["charts"] == 0 or facts["marks"] == 0:
            problems.append("%s: no charts with data (charts=%d, marks=%d)"
                            % (page, facts["charts"], facts["marks"]))
        if facts["emptyCharts"]:
            problems.append("%s: %d charts without data marks" % (page, facts["emptyCharts"]))
    return problems, facts


def publish(args, work):
    raws = []
    for n, created in enumerate(["2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"]):
        raw = os.path.join(work, "raw-%d.json" % n)
        # The newer run carries the memory and latency protocols and a pair (raw-run v4), the
        # older is a v1 run: both publish, and the memory and latency pages have data.
        subprocess.run([args.fixture, "--out", raw, "--allocators", "7", "--workloads", "4",
                        "--threads", "1,2,4,8", "--blocks", "6", "--seed", str(100 + n),
                        "--created", created, "--engine-version", "0.1.0+%07d" % n]
                       + (["--protocols"] if n == 1 else []), check=True)
        raws.append(raw)
    site = os.path.join(work, "site")
    history = os.path.join(work, "history.jsonl")
    subprocess.run([args.hsbench, "publish", raws[0], "--out", site, "--history", history],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([args.hsbench, "publish", raws[1], "--out", site, "--history", history],
                   check=True, stdout=subprocess.DEVNULL)
    return site


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hsbench", required=True)
    ap.add_argument("--fixture", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = ap.parse_args()
    if not os.path.exists(args.chromium):
        print("SKIP: chromium not installed (%s)" % args.chromium)
        return 77
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    site = os.path.realpath(publish(args, args.work))
    site_url = "file://" + site + "/"

    failures = []
    profile = tempfile.mkdtemp(prefix="hs-chromium-")
    browser = Browser(args.chromium, profile)
    try:
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.send(domain + ".enable", session=session)
        browser.send("Emulation.setDeviceMetricsOverride",
                     {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False},
                     session=session)
        for page in PAGES:
            problems, facts = check_page(browser, session, site_url, page)
            failures += problems
            if facts is None:
                continue
            print("%-16s charts=%-3d marks=%-5d requests=%d, all file:// inside the site: %s"
                  % (page, facts["charts"], facts["marks"], facts["requests"],
                     "no" if any(": network" in p for p in problems) else "yes"))
            if page in CHART_PAGES:
                size = browser.send("Page.getLayoutMetrics", session=session)["cssContentSize"]
                shot = browser.send("Page.captureScreenshot", {
                    "format": "png", "captureBeyondViewport": True,
                    "clip": {"x": 0, "y": 0, "width": 1280,
                             "height": min(size["height"], 6000), "scale": 1}}, session=session)
                path = os.path.join(args.work, page.replace(".html", ".png"))
                with open(path, "wb") as f:
                    f.write(base64.b64decode(shot["data"]))
                print("screenshot: %s" % path)
        # Positive control: a page with a remote image, a console error and no charts must
        # trip every check above, or the checks prove nothing.
        control_dir = os.path.join(args.work, "control")
        os.makedirs(control_dir, exist_ok=True)
        with open(os.path.join(control_dir, "index.html"), "w") as f:
            f.write("<!DOCTYPE html><html><head><title>control</title></head><body>"
                    "<img src=\"http://remote.invalid/x.png\" alt=\"remote\">"
                    "<script>console.error('planted')</script></body></html>")
        problems, _ = check_page(browser, session, "file://" + os.path.realpath(control_dir) + "/",
                                 "index.html", expect_charts=True)
        tripped = {name for name in ("network request", "console error", "no charts", "script")
                   if any(name in p for p in problems)}
        print("control page tripped: %s" % ", ".join(sorted(tripped)))
        if len(tripped) < 4:
            failures.append("control page: only %s of the checks fired: %s" % (sorted(tripped), problems))
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)
    for f in failures:
        print("FAIL " + f)
    print("%d pages checked, %d failures" % (len(PAGES), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
