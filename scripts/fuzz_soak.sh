#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# fuzz_soak.sh — runs each libFuzzer target for N minutes (not part of CI; ctest runs
# each for 30 s). Usage, after `bash scripts/build.sh test` (needs clang):
#
#   scripts/fuzz_soak.sh [MINUTES=10] [BUILD_DIR=build] [TARGET...]
#
# TARGETs (default: all): fuzz_parser fuzz_convert fuzz_graph fuzz_json_value
# fuzz_requests. Runs two at a time (-jobs would take every core). Each target's corpus
# grows in BUILD_DIR/fuzz_soak/<target>/corpus (seeded from the committed corpus) and
# its log is BUILD_DIR/fuzz_soak/<target>/log; crashes are written there as crash-*.
# The summary prints the executions, coverage (cov/ft) and crashes per target.
set -u
minutes=${1:-10}
build=${2:-build}
[ $# -ge 2 ] && shift 2 || shift $#
targets=${*:-"fuzz_parser fuzz_convert fuzz_graph fuzz_json_value fuzz_requests"}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$build/fuzz_soak"
mkdir -p "$out"

corpus_of() {
  case $1 in
    fuzz_parser|fuzz_convert) echo "$root/tests/convert/fuzz_corpus" ;;
    fuzz_graph) echo "$root/tests/graph/fuzz_corpus" ;;
    fuzz_json_value) echo "$root/tests/graph/fuzz_json_corpus" ;;
    fuzz_requests) echo "$root/tests/server/fuzz_corpus" ;;
  esac
}
bin_of() { find "$(cd "$build" && pwd)/tests" -name "$1" -type f -perm -u+x | head -n 1; }
args_of() {
  case $1 in
    fuzz_graph) echo "-dict=$root/tests/graph/fuzz_graph.dict -max_len=4096" ;;
    fuzz_parser) echo "-max_len=65536" ;;
    *) echo "-max_len=65536" ;;
  esac
}

run_one() {
  t=$1
  bin=$(bin_of "$t")
  if [ -z "$bin" ]; then echo "$t: not built (is clang installed?)"; return; fi
  d="$out/$t"
  mkdir -p "$d/corpus"
  cp "$(corpus_of "$t")"/* "$d/corpus/" 2>/dev/null
  # shellcheck disable=SC2046
  (cd "$d" && "$bin" $(args_of "$t") -max_total_time=$((minutes * 60)) -timeout=10 -rss_limit_mb=2048 \
     -print_final_stats=1 corpus > log 2>&1)
  echo "$t: exit $?"
}

set -- $targets
while [ $# -gt 0 ]; do
  run_one "$1" &
  if [ $# -gt 1 ]; then run_one "$2" & shift; fi
  shift
  wait
done

echo "target            execs        cov     ft   crashes"
for t in $targets; do
  log="$out/$t/log"
  [ -f "$log" ] || continue
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
  cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
  ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
  crashes=$(ls "$out/$t" | grep -c -E '^(crash|leak|timeout|oom)-')
  printf '%-17s %-12s %-6s %-6s %s\n' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$crashes"
done
