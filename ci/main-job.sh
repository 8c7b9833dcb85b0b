#!/usr/bin/env bash
# The README's main job: installs dependencies, builds what the harness needs (Release), lists
# the allocator registry (versions, digests, availability), runs the `quick` paired campaign
# across every available allocator (throughput and memory) and the `quick-latency` campaign
# (open-loop latency, paced samples) and prints their reports (medians, paired effects with
# bootstrap CIs), then publishes both as one sealed static site (hsbench publish, appending to
# the main job's history) and verifies the site (hsbench verify).
# Usage: bash ci/main-job.sh [extra `hsbench run` flags, e.g. --seed 42]
set -euo pipefail
cd "$(dirname "$0")/.."

bash ci/install-deps.sh
cmake --preset release >/dev/null
# Only what the main job runs; the test command builds the rest.
cmake --build --preset release --target hsbench hs-workload heapscope heapscope_noprof

out=build/release/main-job
mkdir -p "$out"
hsbench=build/release/harness/cli/hsbench
# One raw run per invocation (hsbench run never overwrites a raw run), so the job can be run
# again: each run joins history.jsonl and the site shows the newest with the history.
stamp=$(date -u +%Y%m%dT%H%M%SZ)
run="$out/quick-$stamp"
latency="$out/quick-latency-$stamp"
"$hsbench" allocators
"$hsbench" allocators --json > "$out/allocators.json"
"$hsbench" run --campaign quick --out "$run.raw.json" "$@"
"$hsbench" report "$run.raw.json" --summary-out "$run.summary.json" | tee "$run.report.txt"
"$hsbench" run --campaign quick-latency --out "$latency.raw.json" "$@"
"$hsbench" report "$latency.raw.json" --summary-out "$latency.summary.json" |
  tee "$latency.report.txt"
"$hsbench" publish "$run.raw.json" "$latency.raw.json" --out "$out/site" \
  --history "$out/history.jsonl"
"$hsbench" verify "$out/site"
echo "main job: raw runs, summaries and reports: $run.{raw.json,summary.json,report.txt}"
echo "  and $latency.{raw.json,summary.json,report.txt}"
echo "reproduce any sample: $hsbench reproduce $run.raw.json <sample-id>"
echo "site: $out/site/index.html"
