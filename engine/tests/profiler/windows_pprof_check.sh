#!/usr/bin/env bash
# Reads the symbolized profile written under Wine by WindowsProfile.* (windows_dump_test.cc)
# with `go tool pprof` on the host: the profile's own function names (from the executable's
# COFF symbols) must name the known chain, and level_two, which calls hs_malloc, must hold
# nearly all of the in-use bytes. Skipped (exit 77) without go.
# Usage: windows_pprof_check.sh <profile.pb.gz>
set -euo pipefail
profile=${1:?usage: windows_pprof_check.sh <profile.pb.gz>}
if ! command -v go >/dev/null; then
  echo "no go: skipped"
  exit 77
fi
[ -s "$profile" ] || { echo "no profile at $profile"; exit 1; }
top=$(HOME=${HOME:-/tmp} go tool pprof -top -sample_index=inuse_space "$profile" 2>&1)
echo "$top"
flat=$(awk '$6 == "level_two" { sub("%", "", $2); print $2 }' <<<"$top")
[ -n "$flat" ] || { echo "level_two is not named in the profile"; exit 1; }
grep -qw level_one <<<"$top" || { echo "level_one is not named in the profile"; exit 1; }
awk -v f="$flat" 'BEGIN { exit !(f >= 90) }' || { echo "level_two holds $flat% (< 90%)"; exit 1; }
echo "level_two holds $flat% of the in-use bytes"
