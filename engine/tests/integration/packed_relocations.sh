#!/usr/bin/env bash
# Fails when a shared library keeps its relative relocations as RELA entries (24 bytes each,
# read by the loader from a mapping every process keeps resident) instead of the packed
# DT_RELR bitmap the linker can write (engine/CMakeLists.txt, pack-relative-relocs).
# usage: packed_relocations.sh LIB...
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: packed_relocations.sh LIB..." >&2; exit 2; }
status=0
for lib in "$@"; do
  unpacked=$(readelf -rW "$lib" | grep -c '_RELATIVE ' || true)
  packed=$(readelf -dW "$lib" | grep -c '(RELR)' || true)
  if [ "$unpacked" -ne 0 ] || [ "$packed" -ne 1 ]; then
    echo "$lib: $unpacked relative relocations as RELA entries, DT_RELR entries: $packed"
    status=1
  else
    echo "$lib: relative relocations packed (DT_RELR)"
  fi
done
exit $status
