#!/usr/bin/env python3
""":"
# Every other gate in ci/ is run as `bash ci/<name>`. Under bash the line above is the no-op
# `:` and the next line hands this file to python3; for Python the lines are one string.
exec python3 "$0" "$@"
":"""
LAYER_DOC = """The layer gate: every #include in the repository must point down the folder order.

Layer table (a folder may include itself and the folders listed; nothing else):

  folder     may include                                         notes
  base       -                                                   shared by all; header-only parts
                                                                 are safe inside the allocator
  engine     base                                                the allocator and profiler
  stats      base                                                pure: no I/O headers
  preload    -                                                   C header for LD_PRELOAD shims
  probe      base, preload                                       which object serves malloc
  workloads  base, stats, probe, preload, engine (public)        op streams, hs-workload
  site       base, stats                                         envelope, manifest, pages
  harness    base, stats, preload, probe, workloads,             hsbench
             engine (public), site (public)
  fuzz       every folder above (public headers)                 fuzz targets and drivers

"engine (public)" is engine/include/heapscope/*; engine/src and engine/tests stay inside engine.
"site (public)" is the headers listed in PUBLIC below, plus site/testing/ for test files.
A folder's tests/ are its own: nothing outside the folder includes them.
Cross-folder includes are written from the repository root ("base/splitmix64.h"), except the
engine's installed API, written as it is installed ("heapscope/heapscope.h").

Usage: check-layers.py [--root DIR] [--graph]    check a tree (default: this repository)
       check-layers.py --self-test               plant violations in copies; each must fire
Exit status 0: no violation and no cycle between folders; 1 otherwise.
"""
import argparse
import os
import re
import shutil
import sys
import tempfile

ALLOWED = {
    "base": set(),
    "engine": {"base"},
    "stats": {"base"},
    "preload": set(),
    "probe": {"base", "preload"},
    "workloads": {"base", "stats", "probe", "preload", "engine"},
    "site": {"base", "stats"},
    "harness": {"base", "stats", "preload", "probe", "workloads", "engine", "site"},
    "fuzz": {"base", "engine", "stats", "preload", "probe", "workloads", "site", "harness"},
}
FOLDERS = set(ALLOWED)

# Folders whose headers others may include only from this list (paths inside the folder).
PUBLIC = {
    "engine": ("include/heapscope/",),
    "site": ("site_json.h", "site_files.h", "site_writer.h", "site_verify.h",
             "schema_validation.h", "manifest.h"),
}
TEST_SUPPORT = {"site": ("testing/",)}  # includable from test files above the folder

# Include roots outside the "<folder>/" spelling: the engine's installed API.
ROOTS = {"heapscope/": "engine/include/heapscope/"}

# Headers that do I/O or reach the system: not in the pure layers' non-test code.
IMPURE = re.compile(r"^(iostream|fstream|cstdio|stdio\.h|filesystem|unistd\.h|fcntl\.h|sys/.*|"
                    r"openssl/.*|nlohmann/.*|CLI/.*|dlfcn\.h|pthread\.h|thread)$")
PURE = {"stats"}

SOURCE = re.compile(r"\.(h|hh|hpp|c|cc|cpp|cxx|inc)(\.in)?$")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
SKIP_DIRS = {".git", "build", "node_modules", "__pycache__"}


def source_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")
                             and not os.path.exists(os.path.join(dirpath, d, "CMakeCache.txt")))
        for name in sorted(filenames):
            if SOURCE.search(name):
                yield os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")


def template_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")
                       and not os.path.exists(os.path.join(dirpath, d, "CMakeCache.txt"))]
        for name in filenames:
            if name.endswith((".h.in", ".hpp.in")):
                yield os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")


def folder_of(path):
    top = path.split("/", 1)[0]
    return top if top in FOLDERS else None


def is_test(path):
    return "/tests/" in path or "/testing/" in path or re.search(r"_test\.(cc|c|cpp)$", path)


class Tree:
    def __init__(self, root):
        self.root = root
        self.files = set(source_files(root))
        # A header CMake generates from a template beside it (configure_file: name.h.in) is
        # found where its template is; the template itself holds no includes to check.
        self.generated = {path[:-len(".in")] for path in template_files(root)}
        self.by_name = {}
        for f in self.files:
            self.by_name.setdefault(f.rsplit("/", 1)[-1], []).append(f)

    def resolve(self, includer, name, angled=False):
        """The repository path an include names, or None for a header from outside."""
        relative = os.path.normpath(os.path.join(os.path.dirname(includer), name))
        if not angled and (relative in self.files or relative in self.generated):
            return relative.replace(os.sep, "/")
        if name.split("/", 1)[0] in FOLDERS and name in self.files:
            return name
        for prefix, target in ROOTS.items():
            if name.startswith(prefix) and target + name[len(prefix):] in self.files:
                return target + name[len(prefix):]
        if angled:
            return None  # <...> reaches the repository only through a root
        own = folder_of(includer)
        suffix = "/" + name
        matches = sorted(f for f in self.by_name.get(name.rsplit("/", 1)[-1], ())
                         if f.endswith(suffix))
        same = [f for f in matches if folder_of(f) == own]
        return (same or matches or [None])[0]


def check(root, show_graph=False, out=sys.stdout):
    tree = Tree(root)
    problems = []
    edges = {}
    for path in sorted(tree.files):
        src = folder_of(path)
        if src is None:
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        for number, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, name = m.groups()
            where = f"{path}:{number}: #include {kind}{name}{'>' if kind == '<' else kind}"
            if kind == "<" and src in PURE and not is_test(path) and IMPURE.match(name):
                problems.append(f"{where}: {src}/ is pure computation, no I/O or system headers")
            target = tree.resolve(path, name, angled=kind == "<")
            if kind == "<" and target is None:
                continue  # a system or third-party header
            if target is None and kind == '"' and folder_of(name):
                target = name  # a missing file still names its folder: check the direction
            if target is None:
                if kind == '"':
                    problems.append(f"{where}: resolves to no file in the repository")
                continue
            dst = folder_of(target)
            if dst is None or dst == src:
                continue
            edges.setdefault(src, {}).setdefault(dst, path)
            inside = target[len(dst) + 1:]
            qualified = name == target or any(
                name.startswith(p) and target == t + name[len(p):] for p, t in ROOTS.items())
            if dst not in ALLOWED[src]:
                problems.append(f"{where}: {src}/ may not include {dst}/ (may include: "
                                f"{', '.join(sorted(ALLOWED[src])) or 'nothing else'})")
            elif "/tests/" in "/" + inside:
                problems.append(f"{where}: {dst}/tests/ is private to {dst}/")
            elif not qualified:
                problems.append(f"{where}: write a cross-folder include from the repository "
                                f"root, as \"{target}\"")
            elif dst in PUBLIC and not inside.startswith(PUBLIC[dst]) and not (
                    is_test(path) and inside.startswith(TEST_SUPPORT.get(dst, ("\0",)))):
                problems.append(f"{where}: {target} is internal to {dst}/ (public: "
                                f"{', '.join(PUBLIC[dst])})")
    cycles = find_cycles(edges)
    if show_graph:
        out.write("folder include graph (folder -> folders it includes; e.g. one includer):\n")
        for src in sorted(edges):
            for dst in sorted(edges[src]):
                out.write(f"  {src} -> {dst}   ({edges[src][dst]})\n")
        out.write(f"cycles between folders: {len(cycles)}\n")
    for cycle in cycles:
        problems.append("cycle between folders: " + " -> ".join(cycle + [cycle[0]]))
    for p in problems:
        out.write(p + "\n")
    return problems


def find_cycles(edges):
    """Strongly connected components with more than one folder (Tarjan)."""
    index, low, stack, on_stack, result = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for v in sorted(set(edges) | {w for d in edges.values() for w in d}):
        if v not in index:
            visit(v)
    return result


# Each plant: (where, line, text its report must contain). `where` ending in "/" means the first
# non-test C++ file under that folder, so the plants survive files moving inside a folder; the
# line is appended, which keeps a plant independent of the file's content.
PLANTS = [
    ("engine/src/", '#include "harness/process/run_command.h"', "engine/ may not include harness/"),
    ("engine/src/", '#include "stats/quantile.h"', "engine/ may not include stats/"),
    ("workloads/", '#include "harness/campaign/campaign_spec.h"', "workloads/ may not include harness/"),
    ("site/", '#include "harness/report/report.h"', "site/ may not include harness/"),
    ("stats/", "#include <fstream>", "stats/ is pure"),
    ("harness/", '#include "site/svg.h"', "internal to site/"),
    ("harness/", '#include "engine/src/internal.h"', "internal to engine/"),
    ("harness/", '#include "quantile.h"', "from the repository root"),
    ("fuzz/", '#include "stats/tests/quantile_test.cc"', "private to stats/"),
    ("base/", '#include "stats/quantile.h"', "base/ may not include stats/"),
    ("engine/src/", '#include "harness/no_such_header.h"', "engine/ may not include harness/"),
]


def plant_target(files, where):
    if not where.endswith("/"):
        return where if where in files else None
    candidates = sorted(f for f in files if f.startswith(where) and f.endswith(".cc")
                        and not is_test(f))
    return candidates[0] if candidates else None


def self_test():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    failures = 0
    with tempfile.TemporaryDirectory(prefix="check-layers-") as tmp:
        copy = os.path.join(tmp, "tree")
        for path in source_files(root):
            os.makedirs(os.path.join(copy, os.path.dirname(path)), exist_ok=True)
            shutil.copy2(os.path.join(root, path), os.path.join(copy, path))
        clean = check(copy, out=open(os.devnull, "w"))
        if clean:
            print("the unplanted copy already fails:\n  " + "\n  ".join(clean))
            return 1
        files = set(source_files(copy))
        for where, line, expected in PLANTS:
            path = plant_target(files, where)
            if path is None:
                print(f"MISSING  no file for {where} (update PLANTS)")
                failures += 1
                continue
            target = os.path.join(copy, path)
            with open(target, encoding="utf-8") as f:
                original = f.read()
            with open(target, "a", encoding="utf-8") as f:
                f.write("\n" + line + "\n")
            found = check(copy, out=open(os.devnull, "w"))
            hit = [p for p in found if p.startswith(path + ":") and expected in p]
            print(f"{'FIRED' if hit else 'MISSED'}  {path}: {line}" +
                  (f"\n         {hit[0]}" if hit else ""))
            failures += 0 if hit else 1
            with open(target, "w", encoding="utf-8") as f:
                f.write(original)
        # A cycle: site including harness is also a cycle (harness includes site).
        with open(os.path.join(copy, plant_target(files, "site/")), "a", encoding="utf-8") as f:
            f.write('\n#include "harness/report/report.h"\n')
        found = check(copy, out=open(os.devnull, "w"))
        cyc = [p for p in found if p.startswith("cycle between folders") and "harness" in p]
        print(f"{'FIRED' if cyc else 'MISSED'}  cycle harness <-> site" +
              (f"\n         {cyc[0]}" if cyc else ""))
        failures += 0 if cyc else 1
    print("self-test:", "every planted violation fired" if failures == 0
          else f"{failures} planted violation(s) not seen")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=LAYER_DOC.split("\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    parser.add_argument("--graph", action="store_true", help="print the folder include graph")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    problems = check(args.root, show_graph=args.graph)
    print(f"check-layers: {len(problems)} problem(s)" if problems else "check-layers: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
