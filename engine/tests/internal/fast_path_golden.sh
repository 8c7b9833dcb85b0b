#!/usr/bin/env bash
# Pins the size of the allocation fast paths: the instructions of `malloc` and `free` in a
# built library from the entry to the first `ret`, padding excluded. The compiler lays the
# likely path out as fall-through (HS_LIKELY/HS_UNLIKELY), so that stretch is exactly what a
# small malloc served by the direct table, or a free by the owner into a flag-free page, runs.
# Usage: fast_path_golden.sh <library.so> <malloc count> <free count>
# Fails when either count differs: grown is a regression; shrunk means update the golden
# counts (and the README's figure) on purpose.
set -euo pipefail
lib=$1
want_malloc=$2
want_free=$3

listing=$(objdump -d --no-show-raw-insn "$lib")

count() {
  awk -v fn="<$1>:" '
    $2 == fn { inside = 1; n = 0; next }
    inside && /^$/ { exit 1 }
    inside && /\t/ {
      # Alignment padding between blocks is not executed on the fast path.
      if ($0 ~ /\t(nop|xchg +%ax,%ax|data16|cs nop)/) next
      n++
      if ($0 ~ /\tret/) { print n; exit 0 }
    }' <<<"$listing"
}

status=0
for pair in "malloc:$want_malloc" "free:$want_free"; do
  fn=${pair%%:*}
  want=${pair#*:}
  got=$(count "$fn") || { echo "FAIL: no '$fn' ending in ret found in $lib"; exit 1; }
  if [[ $got -ne $want ]]; then
    echo "FAIL: $fn fast path is $got instructions, golden $want ($lib)"
    status=1
  else
    echo "ok: $fn fast path $got instructions"
  fi
done
exit $status
