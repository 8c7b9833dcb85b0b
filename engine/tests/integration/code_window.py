#!/usr/bin/env python3
"""Fails when a run of a small program maps more of an engine library's code than the kernel
maps around one fault: the code every program runs must lie in the first window of the
library's code (engine/hot_text.ld, docs/allocator.md "The library's own pages"). Fails too when
the run maps any page of the segment that holds the unwind tables: the read-only data a run
reads lies elsewhere, so that segment stays on disk until something unwinds through the engine.

How much of a file one fault maps depends on the page cache: a file written in large pieces is
cached in large folios, and Linux 6.18 maps a whole folio at once. So each library is first
copied 4 KiB per write (page-sized folios), the program runs with the copy preloaded, and the
window is measured on the same copy.

usage: code_window.py HELPER LIBRARY...
"""
import os
import subprocess
import sys
import tempfile


def copy_in_pages(source, target):
    with open(source, "rb") as src, open(target, "wb") as dst:
        while True:
            chunk = src.read(4096)
            if not chunk:
                break
            dst.write(chunk)
            dst.flush()
    os.chmod(target, 0o755)


def fini_in_hot_section(library):
    """DT_FINI must name code in the hot section: the default, _fini, is the last page of the
    code, and the loader's call of it at exit would map the window around it."""
    dynamic = subprocess.run(["readelf", "-dW", library], stdout=subprocess.PIPE, text=True,
                             check=True).stdout
    sections = subprocess.run(["readelf", "-SW", library], stdout=subprocess.PIPE, text=True,
                              check=True).stdout
    fini = next((int(line.split()[2], 16) for line in dynamic.splitlines()
                 if "(FINI)" in line), None)
    for line in sections.splitlines():
        fields = line.replace("[ ", "[").split()
        if len(fields) > 5 and fields[1] == ".text.heapscope_hot":
            start, size = int(fields[3], 16), int(fields[5], 16)
            return fini is not None and start <= fini < start + size
    return False


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    helper, libraries = sys.argv[1], sys.argv[2:]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("HEAPSCOPE_") and k != "LD_PRELOAD"}
    failed = False
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(helper))) as scratch:
        for library in libraries:
            copy = os.path.join(scratch, os.path.basename(library))
            # Up to three tries: a page of the fresh copy that the kernel reclaimed before the
            # helper touched it is not mapped by the fault (a CI run measured a window of 13
            # pages). Code outside the window maps more pages every time.
            for _ in range(3):
                copy_in_pages(library, copy)
                run = subprocess.run([helper, copy], env=dict(env, LD_PRELOAD=copy),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                fields = run.stdout.split()
                if run.returncode != 0 or len(fields) != 6:
                    break
                code, window, unwind = int(fields[1]), int(fields[3]), int(fields[5])
                ok = 0 < code <= window
                unwind_ok = unwind == 0
                if unwind < 0:
                    unwind_verdict = "FAIL, no loaded segment holds PT_GNU_EH_FRAME"
                else:
                    unwind_verdict = "ok" if unwind_ok else "FAIL, unwind tables mapped"
                print(f"{os.path.basename(library)}: {code} pages of code mapped, one fault "
                      f"maps {window}: {'ok' if ok else 'FAIL, code outside the first window'}; "
                      f"{unwind} pages of the unwind tables' segment mapped: {unwind_verdict}")
                if ok and unwind_ok:
                    break
            if run.returncode != 0 or len(fields) != 6:
                print(f"{library}: helper failed ({run.returncode}): {run.stderr.strip()}")
                failed = True
                continue
            fini_ok = fini_in_hot_section(library)
            if not fini_ok:
                print(f"{os.path.basename(library)}: FAIL, DT_FINI is not in .text.heapscope_hot")
            failed |= not (ok and unwind_ok and fini_ok)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
