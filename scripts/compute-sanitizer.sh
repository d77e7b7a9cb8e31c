#!/usr/bin/env bash
# Runs NVIDIA's compute-sanitizer (memcheck with leak checking, racecheck, synccheck) over the GPU test
# binary (tests/gpu, built as <build>/tests/test_gpu) on the grid of small graphs: every schedule
# family, op and reduce, empty rows, one huge row, F = 1 and odd F. Writes one log per tool and a
# summary.md to OUT_DIR; exits non-zero when any tool reports an error, a test fails, or no GPU ran
# the tests. docs/reliability.md.
#
#   scripts/compute-sanitizer.sh OUT_DIR [--build-dir build] [--filter GTEST_FILTER] [--tools memcheck,racecheck,synccheck]
#                                [--leaks]
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
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift ;;
    --filter) filter=$2; shift ;;
    --tools) tools=$2; shift ;;
    --leaks) leaks=1 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
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

summary=$out/summary.md
{
  echo "# compute-sanitizer on the GPU test grid"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1);"
  echo "$("$cs" --version | tail -1); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); filter \`$filter\`"
  echo
  echo "| tool | exit | errors reported | tests passed | skipped | failed | seconds |"
  echo "|---|---|---|---|---|---|---|"
} > "$summary"

bad=0
IFS=, read -ra tool_list <<< "$tools"
for tool in "${tool_list[@]}"; do
  extra=()
  case $tool in
    memcheck) [ "$leaks" = 1 ] && extra=(--leak-check full) ;;
    racecheck|synccheck|initcheck) ;;
    *) echo "unknown tool $tool" >&2; exit 2 ;;
  esac
  log=$out/$tool.log
  echo "compute-sanitizer --tool $tool: $log"
  t0=$(date +%s)
  set +e
  "$cs" --tool "$tool" "${extra[@]}" --error-exitcode 99 --print-limit 200 --log-file "$log" \
    "$bin" --gtest_filter="$filter" > "$out/$tool.gtest.txt" 2>&1
  rc=$?
  set -e
  secs=$(( $(date +%s) - t0 ))
  # memcheck and synccheck end with "ERROR SUMMARY: N errors", racecheck with
  # "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)".
  errors=$(grep -oE 'ERROR SUMMARY: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || true)
  [ -n "$errors" ] || errors=$(grep -oE 'RACECHECK SUMMARY: [0-9]+ hazard' "$log" | tail -1 | grep -oE '[0-9]+' || true)
  [ -n "$errors" ] || errors='?'

  passed=$(grep -oE '\[  PASSED  \] [0-9]+' "$out/$tool.gtest.txt" | grep -oE '[0-9]+' || echo 0)
  skipped=$(grep -oE '\[  SKIPPED \] [0-9]+ test' "$out/$tool.gtest.txt" | grep -oE '[0-9]+' || echo 0)
  failed=$(grep -oE '\[  FAILED  \] [0-9]+ test' "$out/$tool.gtest.txt" | grep -oE '[0-9]+' || echo 0)
  echo "| $tool | $rc | $errors | $passed | $skipped | $failed | $secs |" >> "$summary"
  if [ "$rc" -ne 0 ] || [ "$errors" != 0 ] || [ "$failed" != 0 ]; then bad=1; fi
  if [ "$passed" = 0 ]; then
    echo "compute-sanitizer.sh: no test passed under $tool (no GPU? see $out/$tool.gtest.txt)" >&2
    bad=1
  fi
done
echo >> "$summary"
if [ "$bad" = 0 ]; then echo "Clean: no errors reported." >> "$summary"; else echo "NOT clean: see the logs next to this file." >> "$summary"; fi
cat "$summary"
exit $bad
