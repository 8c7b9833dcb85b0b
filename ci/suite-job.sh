#!/usr/bin/env bash
# The README's suite job (apart from the main job's quick campaigns): installs dependencies
# (the suite's Debian programs among them), builds hsbench and the engine, runs the built-in
# `debian` suite (harness/docs/suite.md: real programs on seeded generated inputs, every case
# under every available allocator in paired blocks, the preload probe per case), prints its
# report (per-case effects and the geometric mean per allocator, with bootstrap CIs), and
# publishes it as a sealed static site whose front page leads with that geometric mean; when
# the main job has run, its newest quick campaign is published beside it.
# Usage: bash ci/suite-job.sh [extra `hsbench suite` flags, e.g. --quick or --blocks 5]
set -euo pipefail
cd "$(dirname "$0")/.."

bash ci/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target hsbench hs-workload heapscope heapscope_noprof

out=build/release/suite-job
mkdir -p "$out"
hsbench=build/release/harness/cli/hsbench
stamp=$(date -u +%Y%m%dT%H%M%SZ)
run="$out/debian-$stamp"
"$hsbench" suite debian --out "$run.raw.json" "$@"
"$hsbench" report "$run.raw.json" --summary-out "$run.summary.json" | tee "$run.report.txt"
raws=("$run.raw.json")
quick=$(ls -t build/release/main-job/quick-2*.raw.json 2>/dev/null | grep -v latency | head -1 || true)
if [ -n "$quick" ]; then raws+=("$quick"); fi
"$hsbench" publish "${raws[@]}" --out "$out/site" --history "$out/history.jsonl"
"$hsbench" verify "$out/site"
echo "suite job: raw run, summary and report: $run.{raw.json,summary.json,report.txt}"
echo "resume an interrupted run: $hsbench suite --resume --out $run.raw.json"
echo "reproduce any sample: $hsbench reproduce $run.raw.json <case>/t1/b<block>/<allocator>"
echo "site: $out/site/index.html"
