#!/usr/bin/env bash
# Runs clang-tidy (checks from the checked-in .clang-tidy, every finding an error) over the
# C/C++ translation units of the Release build's compile_commands.json.
# Usage: ci/check-tidy.sh [--all] [--base REF] [--build-dir DIR]
#   default:     the files changed against REF (tracked changes and new files in the work
#                tree included); a changed header selects the translation units that include it.
#   --base REF:  compare against REF; default: merge-base with origin/main when that exists
#                and is not HEAD, else HEAD~1.
#   --all:       every translation unit of the build.
#   --build-dir: where compile_commands.json lives; default build/release (configured when
#                missing). Generated sources must exist, so build the Release preset first.
#   --self-test: the gate's positive control: a planted finding must fail it, a clean file pass.
# HEAPSCOPE_TIDY_JOBS sets the parallelism (default 2).
# Exits non-zero when clang-tidy reports anything (or is missing).
set -euo pipefail
cd "$(dirname "$0")/.."

all=0
self_test=0
base=""
build_dir=build/release
while [ $# -gt 0 ]; do
  case "$1" in
    --all) all=1 ;;
    --self-test) self_test=1 ;;
    --base) base="$2"; shift ;;
    --build-dir) build_dir="$2"; shift ;;
    *) echo "check-tidy: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

clang_tidy="${CLANG_TIDY:-$(command -v clang-tidy || command -v clang-tidy-14 || true)}"
if [ -z "$clang_tidy" ]; then
  echo "check-tidy: clang-tidy not found (run ci/install-deps.sh)" >&2
  exit 2
fi
# The invocation every check uses: the checked-in configuration, every finding an error. The
# build is GCC's: its compile commands carry GCC-only flags (-Wno-restrict, ...) and the code
# GCC-only attributes (noipa, noclone), which clang would report as unknown.
tidy=("$clang_tidy" --config-file="$PWD/.clang-tidy" --quiet --warnings-as-errors='*'
      --extra-arg=-Wno-unknown-warning-option --extra-arg=-Wno-unknown-attributes)

if [ $self_test -eq 1 ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  printf 'int* planted() { return 0; }\n' >"$tmp/planted.cc"         # modernize-use-nullptr
  printf 'int* clean() { return nullptr; }\n' >"$tmp/clean.cc"
  if "${tidy[@]}" "$tmp/planted.cc" -- -std=c++20 >"$tmp/planted.log" 2>&1 ||
     ! grep -q 'modernize-use-nullptr' "$tmp/planted.log"; then
    echo "check-tidy self-test: the planted finding did not fail the gate" >&2
    cat "$tmp/planted.log" >&2
    exit 1
  fi
  if ! "${tidy[@]}" "$tmp/clean.cc" -- -std=c++20 >"$tmp/clean.log" 2>&1; then
    echo "check-tidy self-test: a clean file failed the gate" >&2
    cat "$tmp/clean.log" >&2
    exit 1
  fi
  echo "check-tidy self-test: the planted finding failed the gate, the clean file passed"
  exit 0
fi

if [ ! -f "$build_dir/compile_commands.json" ]; then
  cmake --preset release >/dev/null
fi

# One entry per source file: some sources are compiled into several targets with the same
# flags, and clang-tidy would otherwise check each of them once per entry. A batched (unity)
# unit stands for the sources it includes: each gets the unit's command. Only tracked sources
# of the repository count (generated files in the build tree are not ours to lint).
tidy_db="$build_dir/check-tidy"
mkdir -p "$tidy_db"
mapfile -t units < <(python3 - "$build_dir/compile_commands.json" "$tidy_db/compile_commands.json" \
                       "$PWD" <<'EOF'
import json, os, re, sys
src, dst, root = sys.argv[1], sys.argv[2], os.path.realpath(sys.argv[3])
seen, out = set(), []

def clang_compatible(entry):
    # GCC-only code-generation flags make clang's driver stop with "unknown argument".
    return dict(entry, command=re.sub(r" -fno-ipa-[a-z-]+", "", entry["command"]))

def sources(entry):
    path = os.path.realpath(os.path.join(entry["directory"], entry["file"]))
    if not re.search(r"/Unity/unity_\d+_(c|cxx)\.(c|cxx)$", path):
        return [(path, entry)]
    included = re.findall(r'^#include "([^"]+)"', open(path).read(), re.M)
    return [(os.path.realpath(inc),
             dict(entry, file=inc, command=entry["command"].replace(entry["file"], inc)))
            for inc in included]

for unit in json.load(open(src)):
    for path, entry in sources(unit):
        if path in seen or not path.startswith(root + "/") or "/build/" in path[len(root):]:
            continue
        seen.add(path)
        out.append(clang_compatible(entry))
        print(os.path.relpath(path, root))
json.dump(out, open(dst, "w"), indent=1)
EOF
)

if [ $all -eq 1 ]; then
  files=("${units[@]}")
else
  if [ -z "$base" ]; then
    # A clean clone of what is being tested has origin/main at HEAD: then the last commit.
    if git rev-parse -q --verify origin/main >/dev/null; then
      base=$(git merge-base HEAD origin/main)
    fi
    if [ -z "$base" ] || [ "$(git rev-parse "$base")" = "$(git rev-parse HEAD)" ]; then
      base=HEAD~1
    fi
  fi
  mapfile -t changed < <({ git diff --name-only --diff-filter=ACMR "$base" --;
                           git ls-files --others --exclude-standard; } |
                         grep -E '\.(c|cc|cpp|h|hpp)$' | sort -u || true)
  declare -A pick=()
  for unit in "${units[@]}"; do
    for f in "${changed[@]}"; do
      if [ "$unit" = "$f" ]; then pick[$unit]=1; fi
    done
  done
  # A changed header: every unit whose text includes it by its repository-relative path
  # or, for includes relative to the header's folder, by its file name.
  for f in "${changed[@]}"; do
    case "$f" in *.h|*.hpp) ;; *) continue ;; esac
    name=$(basename "$f")
    for unit in "${units[@]}"; do
      if grep -qE "#[[:space:]]*include[[:space:]]*[\"<]([^\">]*/)?$name[\">]" "$unit"; then
        pick[$unit]=1
      fi
    done
  done
  files=("${!pick[@]}")
  echo "check-tidy: base $(git rev-parse --short "$base"), ${#changed[@]} changed C/C++ files"
fi

if [ ${#files[@]} -eq 0 ]; then
  echo "check-tidy: no translation units to check"
  exit 0
fi

jobs="${HEAPSCOPE_TIDY_JOBS:-2}"
log="$tidy_db/last.log"
start=$(date +%s)
status=0
printf '%s\0' "${files[@]}" |
  xargs -0 -P "$jobs" -n 1 "${tidy[@]}" -p "$tidy_db" >"$log" 2>&1 || status=$?
elapsed=$(( $(date +%s) - start ))
# clang-tidy prints "N warnings generated." for findings suppressed by the header filter or
# NOLINT; only real diagnostics matter.
grep -vE '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$|^Suppressed [0-9]+ warnings|^Use -header-filter|^Use -system-headers' \
  "$log" || true
if [ $status -ne 0 ]; then
  echo "check-tidy: findings in ${#files[@]} translation units (${elapsed} s)" >&2
  exit 1
fi
echo "check-tidy: ${#files[@]} translation units clean (${elapsed} s)"
