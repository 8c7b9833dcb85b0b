#!/usr/bin/env bash
# Checks C/C++ formatting against the checked-in .clang-format.
# Usage: ci/check-format.sh [--fix] [PATH...]
#   no PATH: every tracked C/C++ file; with PATHs: the files under them (tracked or new).
#   --fix:   rewrite the files in place instead of reporting.
# Exits non-zero when a file is not formatted (or clang-format is missing).
set -euo pipefail
cd "$(dirname "$0")/.."

fix=0
if [ "${1:-}" = "--fix" ]; then fix=1; shift; fi

clang_format="${CLANG_FORMAT:-$(command -v clang-format || command -v clang-format-14 || true)}"
if [ -z "$clang_format" ]; then
  echo "check-format: clang-format not found (run ci/install-deps.sh)" >&2
  exit 2
fi

patterns=('*.c' '*.cc' '*.cpp' '*.h' '*.hpp')
if [ $# -eq 0 ]; then
  mapfile -t files < <(git ls-files -- "${patterns[@]}")
else
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- "$@" |
                       grep -E '\.(c|cc|cpp|h|hpp)$' || true)
fi
if [ ${#files[@]} -eq 0 ]; then
  echo "check-format: no C/C++ files"
  exit 0
fi

if [ $fix -eq 1 ]; then
  "$clang_format" -i --style=file "${files[@]}"
  echo "check-format: formatted ${#files[@]} files"
  exit 0
fi

# One clang-format process per batch of files, two batches at a time: starting clang-format
# once per file cost ~10x the formatting itself. Each unformatted file yields
# "FILE:LINE:COL: error: code should be clang-formatted" on stderr; the file names are
# collected from those lines.
jobs="${HEAPSCOPE_FORMAT_JOBS:-2}"
batch=$(( (${#files[@]} + jobs - 1) / jobs ))
diagnostics=$(printf '%s\0' "${files[@]}" |
              xargs -0 -P "$jobs" -n "$batch" "$clang_format" --dry-run --Werror --style=file 2>&1 ||
              true)
mapfile -t bad < <(printf '%s\n' "$diagnostics" |
                   sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' |
                   sort -u)
if [ ${#bad[@]} -eq 0 ] && printf '%s\n' "$diagnostics" | grep -q 'error:'; then
  printf '%s\n' "$diagnostics" >&2
  echo "check-format: clang-format failed" >&2
  exit 2
fi
if [ ${#bad[@]} -ne 0 ]; then
  printf 'check-format: not formatted: %s\n' "${bad[@]}" >&2
  echo "check-format: ${#bad[@]} of ${#files[@]} files need formatting;" \
       "see 'clang-format --dry-run FILE', fix with 'ci/check-format.sh --fix FILE'" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
