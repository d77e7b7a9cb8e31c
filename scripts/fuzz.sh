#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang) in a build folder of their own and runs each for a
# given time, starting from the committed seed corpus; writes a report (executions, coverage, corpus,
# crashes) and exits non-zero when any target found a crash. docs/reliability.md has the long run.
#
#   scripts/fuzz.sh [--seconds N] [--jobs J] [--target NAME]... [--build-dir DIR] [--no-build]
#     --seconds N   fuzzing time per target (default 60)
#     --jobs J      parallel fuzzing processes per target (libFuzzer -fork=J; default 1)
#     --target NAME one target (repeatable; default all): mtx edge_list gcsr graph_arrays
#                   schedule_params records tuning_cache
#     --build-dir   where binaries, working corpora, crashes and the report go (default build-fuzz)
#     --no-build    use the binaries already in the build folder (copied from another host, say)
#     --report FILE the report (default <build-dir>/fuzz-report.md)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
seconds=60
jobs=1
dir=build-fuzz
build=1
report=""
targets=()
all=(mtx edge_list gcsr graph_arrays schedule_params records tuning_cache)
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --target) targets+=("$2"); shift ;;
    --build-dir) dir=$2; shift ;;
    --no-build) build=0 ;;
    --report) report=$2; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
for t in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $t "* ]] || { echo "fuzz.sh: unknown target '$t' (known: ${all[*]})" >&2; exit 2; }
done
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
[ -n "$report" ] || report=$dir/fuzz-report.md

if [ "$build" = 1 ]; then
  command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (apt-get install clang libclang-rt-14-dev)" >&2; exit 2; }
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S tests/fuzz -B "$dir" -DCMAKE_CXX_COMPILER=clang++ >/dev/null
  fi
  cmake --build "$dir" -j"${GSPARSE_JOBS:-$(nproc)}" >/dev/null
fi

{
  echo "# gsparse fuzzing report"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -n), $(nproc) cores; commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?');"
  echo "$seconds s per target, $jobs job(s) each; libFuzzer with ASan + UBSan (tests/fuzz)."
  echo
  echo "| target | seconds | executions | exec/s | coverage (edges) | features | corpus files | crashes |"
  echo "|---|---|---|---|---|---|---|---|"
} > "$report"

found=0
for t in "${targets[@]}"; do
  bin=$dir/fuzz_$t
  [ -x "$bin" ] || { echo "fuzz.sh: no binary $bin" >&2; exit 2; }
  corpus=$dir/corpus/$t
  artifacts=$dir/crashes/$t
  mkdir -p "$corpus" "$artifacts"
  cp -n tests/fuzz/corpus/$t/* "$corpus/" 2>/dev/null || true
  dict=()
  case $t in
    mtx|edge_list|schedule_params) dict=(-dict="$root/tests/fuzz/dict/$t.dict") ;;
    records|tuning_cache) dict=(-dict="$root/tests/fuzz/dict/json.dict") ;;
  esac
  par=()
  [ "$jobs" -gt 1 ] && par=(-fork="$jobs")
  log=$dir/fuzz_$t.log
  echo "fuzzing $t for $seconds s ($jobs job(s)); log $log"
  t0=$(date +%s)
  set +e
  (cd "$dir" && "$bin" "$corpus" "${dict[@]}" "${par[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
     -artifact_prefix="$artifacts/" -print_final_stats=1 >"$log" 2>&1)
  rc=$?
  set -e
  elapsed=$(( $(date +%s) - t0 ))
  # Executions: the final stats (single process) or the last status line (fork mode).
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
  [ -n "$execs" ] || execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#' || true)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || true)
  ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || true)
  files=$(find "$corpus" -type f | wc -l)
  crashes=$(find "$artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'oom-*' -o -name 'timeout-*' \) | wc -l)
  rate=$(( ${execs:-0} / (elapsed > 0 ? elapsed : 1) ))
  echo "| $t | $elapsed | ${execs:-?} | $rate | ${cov:-?} | ${ft:-?} | $files | $crashes |" >> "$report"
  if [ "$rc" -ne 0 ] || [ "$crashes" -gt 0 ]; then
    found=1
    echo "fuzz.sh: $t exited $rc with $crashes crash file(s) in $artifacts (see $log)" >&2
  fi
done
{
  echo
  if [ "$found" = 0 ]; then echo "No crashes."; else echo "Crashes: see crashes/<target>/ and fuzz_<target>.log in $dir."; fi
} >> "$report"
cat "$report"
exit $found
