#!/usr/bin/env bash
# Fails when an engine shared library needs anything but libc: every library a process loads
# costs resident memory before it allocates (engine/README.md, "Dependencies"). Checks the
# NEEDED entries (exactly libc.so.6) and the versioned symbol references (only GLIBC_*: no
# GLIBCXX/CXXABI from libstdc++, GCC_* from libgcc_s, ZLIB_* from libz).
# usage: deps_libc_only.sh LIB...
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: deps_libc_only.sh LIB..." >&2; exit 2; }
status=0
for lib in "$@"; do
  needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
  if [ "$needed" != "libc.so.6 " ]; then
    echo "$lib: NEEDED is '$needed', expected only libc.so.6"
    status=1
  fi
  # Every versioned reference names GLIBC_x (unversioned weak ones are allowed: those are
  # resolved from the program's C++ runtime when it has one).
  foreign=$(readelf -W --dyn-syms "$lib" | awk '$7 == "UND" && $8 ~ /@/ && $8 !~ /@GLIBC_[0-9.]+$/ {print $8}')
  if [ -n "$foreign" ]; then
    echo "$lib: references symbols from other libraries:"
    echo "$foreign"
    status=1
  fi
  strong=$(readelf -W --dyn-syms "$lib" | awk '$7 == "UND" && $5 == "GLOBAL" && $8 !~ /@/ {print $8}')
  if [ -n "$strong" ]; then
    echo "$lib: unversioned strong references (from no versioned library):"
    echo "$strong"
    status=1
  fi
  [ $status -eq 0 ] && echo "$lib: needs only libc"
done
exit $status
