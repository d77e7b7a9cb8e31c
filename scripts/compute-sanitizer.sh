#!/usr/bin/env bash
# Runs NVIDIA's compute-sanitizer (memcheck, racecheck, synccheck) over the GPU test binary (tests/gpu,
# built as <build>/tests/test_gpu) on the grid of small graphs: every schedule family, op and reduce,
# empty rows, one huge row, F = 1 and odd F. Every test runs in a process of its own under every tool,
# --jobs of them at once (the tools slow kernels and module loads down many times; one process per
# test keeps a slow or failing test from hiding the others). Writes one log per tool and test under
# OUT_DIR/<tool>/ and a summary.md; exits non-zero when any tool reports an error, a test fails or
# times out, or no GPU ran the tests. docs/reliability.md.
#
#   scripts/compute-sanitizer.sh OUT_DIR [--build-dir build] [--filter GTEST_FILTER] [--tools memcheck,racecheck,synccheck]
#                                [--jobs N] [--timeout SECONDS] [--leaks]
# --jobs: processes at once (default 1); --timeout: limit per test and tool (default 1800 s).
# --leaks adds memcheck's leak check: device memory still allocated at exit counts as errors (the
# process-lifetime caches -- graphs' device copies, Halide's reused allocations -- show up there).
set -euo pipefail
cd "$(dirname "$0")/.."
out=""
build=build
# The small-graph grid; the real graphs and the tuner's timing runs are too slow under the tools.
filter='GpuSpmm.*:GpuSddmm.*-*RealGraphs*'
tools=memcheck,racecheck,synccheck
leaks=0
jobs=1
timeout_s=1800
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift ;;
    --filter) filter=$2; shift ;;
    --tools) tools=$2; shift ;;
    --leaks) leaks=1 ;;
    --jobs) jobs=$2; shift ;;
    --timeout) timeout_s=$2; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    -*) echo "compute-sanitizer.sh: unknown option $1" >&2; exit 2 ;;
    *) out=$1 ;;
  esac
  shift
done
[ -n "$out" ] || { echo "usage: scripts/compute-sanitizer.sh OUT_DIR [options] (--help)" >&2; exit 2; }
cs=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || true)}
if [ -z "$cs" ]; then
  for c in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda-*/bin/compute-sanitizer /opt/cuda/bin/compute-sanitizer; do
    [ -x "$c" ] && { cs=$c; break; }
  done
fi
[ -n "$cs" ] || { echo "compute-sanitizer not found (set COMPUTE_SANITIZER or add the CUDA toolkit's bin to PATH)" >&2; exit 2; }
bin=$build/tests/test_gpu
[ -x "$bin" ] || { echo "no GPU test binary $bin (build gsparse with the CUDA toolkit: scripts/build.sh)" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
# Kernels compiled for graph views go to a cache folder of this run.
export GSPARSE_KERNEL_CACHE=$out/kernel-cache

# One process per test: the tests the filter selects, as "Suite.Name".
mapfile -t tests < <("$bin" --gtest_filter="$filter" --gtest_list_tests |
  awk '/^[^ ]/ { suite = $1 } /^  / { print suite $1 }')
[ "${#tests[@]}" -gt 0 ] || { echo "compute-sanitizer.sh: the filter '$filter' selects no test" >&2; exit 2; }

summary=$out/summary.md
{
  echo "# compute-sanitizer on the GPU test grid"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1);"
  echo "$("$cs" --version | tail -1); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); filter \`$filter\`;"
  echo "${#tests[@]} tests, each in a process of its own per tool ($jobs at once, at most $timeout_s s each)"
  echo
  echo "| tool | test | exit | errors reported | passed | failed | seconds |"
  echo "|---|---|---|---|---|---|---|"
} > "$summary"

# run_one TOOL TEST: one test under one tool; prints its summary row.
run_one() {
  local tool=$1 test=$2 extra=() log gtest rc t0 secs errors passed failed
  [ "$tool" = memcheck ] && [ "$leaks" = 1 ] && extra=(--leak-check full)
  log=$out/$tool/$test.log
  gtest=$out/$tool/$test.gtest.txt
  t0=$(date +%s)
  set +e
  timeout "$timeout_s" "$cs" --tool "$tool" "${extra[@]}" --error-exitcode 99 --print-limit 200 --log-file "$log" \
    "$bin" --gtest_filter="$test" > "$gtest" 2>&1
  rc=$?
  set -e
  secs=$(( $(date +%s) - t0 ))
  # memcheck and synccheck end with "ERROR SUMMARY: N errors", racecheck with
  # "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)".
  errors=$(grep -oE 'ERROR SUMMARY: [0-9]+' "$log" 2>/dev/null | tail -1 | grep -oE '[0-9]+' || true)
  [ -n "$errors" ] || errors=$(grep -oE 'RACECHECK SUMMARY: [0-9]+ hazard' "$log" 2>/dev/null | tail -1 | grep -oE '[0-9]+' || true)
  [ -n "$errors" ] || errors='?'
  passed=$(grep -oE '\[  PASSED  \] [0-9]+' "$gtest" | grep -oE '[0-9]+' || echo 0)
  failed=$(grep -oE '\[  FAILED  \] [0-9]+ test' "$gtest" | grep -oE '[0-9]+' || echo 0)
  [ "$rc" = 124 ] && failed="timeout"
  echo "| $tool | $test | $rc | $errors | $passed | $failed | $secs |"
}
export -f run_one
export cs bin out leaks timeout_s

IFS=, read -ra tool_list <<< "$tools"
for tool in "${tool_list[@]}"; do
  case $tool in
    memcheck|racecheck|synccheck|initcheck) mkdir -p "$out/$tool" ;;
    *) echo "unknown tool $tool" >&2; exit 2 ;;
  esac
done
echo "compute-sanitizer: ${#tests[@]} tests x ${#tool_list[@]} tools, $jobs at once, logs under $out/<tool>/"
rows=$out/rows.txt
for tool in "${tool_list[@]}"; do
  for t in "${tests[@]}"; do printf '%s %s\n' "$tool" "$t"; done
done | xargs -P "$jobs" -L 1 bash -c 'run_one "$0" "$1"' | tee "$rows"
sort "$rows" >> "$summary"

# Clean when every row exited 0, reported 0 errors, passed its test and failed none.
bad=$(awk -F'|' '{ gsub(/ /, "") } $4 != "0" || $5 != "0" || $6 != "1" || $7 != "0" { n++ } END { print n + 0 }' "$rows")
echo >> "$summary"
if [ "$bad" = 0 ]; then
  echo "Clean: every test passed under every tool, no errors reported." >> "$summary"
else
  echo "NOT clean: $bad of $(wc -l < "$rows") runs reported errors, failed, timed out or ran no test; see the logs next to this file." >> "$summary"
fi
cat "$summary"
[ "$bad" = 0 ]
