#!/usr/bin/env bash
# run_fuzz.sh BINARY NAME SECONDS WORKDIR FIXTURES: seeds a corpus and fuzzes for SECONDS.
# Fails on any crash, sanitizer report, leak, timeout (10 s per input) or out-of-memory.
set -euo pipefail
bin=$1 name=$2 seconds=$3 work=$4 fixtures=$5
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work/corpus" "$work/seeds" "$work/artifacts"
python3 "$here/make_seeds.py" "$name" "$work/seeds" --fixtures "$fixtures"
echo "$name: $(ls "$work/seeds" | wc -l) seeds, fuzzing for ${seconds}s"
"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=1048576 -print_final_stats=1 \
  -artifact_prefix="$work/artifacts/" "$work/corpus" "$work/seeds" 2>"$work/log.txt" || {
  tail -n 60 "$work/log.txt"
  echo "$name: FAILED (artifacts in $work/artifacts)"
  exit 1
}
grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ *DONE)" "$work/log.txt" || true
echo "$name: no crash"
