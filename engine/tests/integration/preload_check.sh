#!/usr/bin/env bash
# Runs a real program three ways: without preload, under LD_PRELOAD=<libheapscope.so>, and under
# the preload with HEAPSCOPE_SHOW_STATS=1. Passes when all three exit alike with identical
# stdout (and identical stderr for the first two), and the third's stderr holds heapscope's
# statistics block (a line starting "heapscope stats"), which proves our allocator served it.
#
# usage: preload_check.sh LIB PROGRAM DATA_DIR REPO_DIR WORK_DIR
#   PROGRAM: python3 | sort | git | gxx
set -euo pipefail
lib=$1 program=$2 data_dir=$3 repo_dir=$4 work=$5

[ -f "$lib" ] || { echo "preload_check: library $lib not built" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work" && cd "$work"
for v in $(env | grep -o '^HEAPSCOPE_[A-Z_]*' || true); do unset "$v"; done
export LC_ALL=C

case "$program" in
  python3)
    # The system interpreter itself, not a version-manager shim script in front of it.
    py=/usr/bin/python3
    [ -x "$py" ] || py=$(command -v python3)
    cmd=(env PYTHONMALLOC=malloc PYTHONHASHSEED=0 "$py" "$data_dir/alloc_heavy.py")
    ;;
  sort)
    # ~10 MB of pseudo-random lines; a small buffer forces temporary files and merges.
    awk 'BEGIN { srand(7); for (i = 0; i < 400000; i++)
           printf "%08d %s\n", int(rand() * 1e8),
                  substr("abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz", int(rand() * 26) + 1, int(rand() * 24) + 1) }' \
      > input.txt
    cmd=(sort -S 4M --parallel=2 -k2,2 -k1,1n input.txt)
    ;;
  git)
    if rev=$(git -C "$repo_dir" rev-parse --verify -q HEAD 2>/dev/null); then
      # A fixed revision: others may commit between the runs.
      cmd=(git -C "$repo_dir" --no-pager -c color.ui=never log --stat --format=fuller "$rev")
    else
      cmd=(git --version)
    fi
    ;;
  gxx)
    cat > unit.cc <<'CXX'
#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>
template <typename T> struct Tree { std::map<std::string, std::vector<std::unique_ptr<T>>> kids; };
int main() {
  Tree<int> t;
  for (int i = 0; i < 100; ++i) t.kids[std::to_string(i % 7)].push_back(std::make_unique<int>(i));
  std::vector<std::string> keys;
  for (auto& [k, v] : t.kids) keys.push_back(k + ":" + std::to_string(v.size()));
  std::sort(keys.begin(), keys.end());
  for (auto& k : keys) std::cout << k << '\n';
}
CXX
    # The object file is the output; -frandom-seed keeps it byte-for-byte reproducible.
    cmd=(sh -c 'g++ -std=c++20 -O2 -frandom-seed=1 -c unit.cc -o "$1" && cat "$1"' sh)
    ;;
  *)
    echo "preload_check: unknown program $program" >&2
    exit 2
    ;;
esac

run() {  # run NAME [VAR=VALUE...]: stdout, stderr and status into NAME.{out,err,rc}
  local name=$1
  shift
  local status=0
  if [ "$program" = gxx ]; then
    env "$@" "${cmd[@]}" "$name.o" > "$name.out" 2> "$name.err" || status=$?
  else
    env "$@" "${cmd[@]}" > "$name.out" 2> "$name.err" || status=$?
  fi
  echo "$status" > "$name.rc"
}

run plain
run preload "LD_PRELOAD=$lib"
run stats "LD_PRELOAD=$lib" HEAPSCOPE_SHOW_STATS=1

fail=0
check() { if ! "$@"; then fail=1; fi; }
report() { echo "preload_check[$program]: $*" >&2; }

plain_rc=$(cat plain.rc)
[ "$plain_rc" = 0 ] || { report "the program fails without preload (exit $plain_rc): $(head -c 500 plain.err)"; exit 1; }
for v in preload stats; do
  rc=$(cat "$v.rc")
  [ "$rc" = "$plain_rc" ] || { report "$v: exit $rc, without preload $plain_rc"; head -c 2000 "$v.err" >&2; fail=1; }
  cmp -s plain.out "$v.out" || { report "$v: stdout differs ($(wc -c < plain.out) vs $(wc -c < "$v.out") bytes)"; fail=1; }
done
cmp -s plain.err preload.err || { report "preload: stderr differs:"; head -c 2000 preload.err >&2; fail=1; }
grep -q '^heapscope stats' stats.err || { report "HEAPSCOPE_SHOW_STATS=1 printed no 'heapscope stats' block"; head -c 2000 stats.err >&2; fail=1; }
[ -s plain.out ] || { report "empty output: the test would prove nothing"; fail=1; }
[ "$fail" = 0 ] && echo "preload_check[$program]: ok ($(wc -c < plain.out) bytes of identical output; $(grep -c '^heapscope stats' stats.err) stats block(s))"
exit "$fail"
