#!/usr/bin/env bash
# run_sddmm.sh: the whole g-SDDMM benchmark on a GPU host, in one command, from any folder:
#   1. builds gsparse-bench-sddmm and gsparse-data (configuring $BUILD_DIR first when it has no cache),
#   2. writes the dataset twins as .gcsr files with gsparse-data for the PyTorch script (the same graphs
#      gsparse-bench-sddmm generates in-process: same scale, order and seed; shared with run_spmm.sh),
#   3. runs gsparse-bench-sddmm (gsparse vs cached cusparseSDDMM, copy bandwidth) and
#      torch_sddmm_baselines.py (torch.sparse.sampled_addmm, (X[src] * Y[dst]).sum(-1)),
#   4. merges both with report_sddmm.py into ${OUT:-benchmarks/results}/<date>-<device-slug>/
#      (sddmm_report.md, sddmm_speedup.png, sddmm_times.png, sddmm_lanes.png, sddmm_merged.json, the raw
#      sddmm.json / sddmm.md / torch_sddmm.json, sddmm_run.log).
# A failing benchmark does not stop the others; the report covers what ran. Exit status: 0 when the
# report was written, 1 otherwise.
#
# The defaults fit about 8 minutes on an H100 including the build: the built-in gpu_sddmm grid at 128
# and 256 threads per block, at most 64 features per lane, every point screened with 1 + 3 runs and
# the 2 fastest timed in full (warm-up 3, median of 10). Widen with GRID_THREADS=32,64,128,256,
# MAX_FEATS_PER_LANE=0 (no pruning), SCREEN_RUNS=0 (every point timed in full), or SCHEDULES=file.
#
# Settings (environment variables, defaults in brackets):
#   OUT        results root [benchmarks/results]       BUILD_DIR  CMake build folder [build]
#   GRAPHS     comma list [reddit,ogbn-proteins,ogbn-products,cora,citeseer,pubmed,ca-CondMat,p2p-Gnutella31]
#   FEATS      [1,2,4,8,16,32,64,128,256,512,1024]     OPS        dot, add, sub, mul, div [dot]
#   SCALE      twin scale [1.0]                        ORDER      shuffled|community|both [both]
#   RUNS [10]  WARMUP [3]                              SCHEDULES  schedule-point JSON (replaces the grid) [none]
#   GRID_THREADS [128,256]  MAX_FEATS_PER_LANE [64]    SCREEN_RUNS [3]  FINALISTS [2]
#   REAL_DIR   real graphs [datasets/real]
#   GRAPH_DIR  where twin .gcsr files go [$BUILD_DIR/bench-graphs]
#   SKIP_BUILD=1   use the existing binaries           SKIP_TORCH=1  no PyTorch baselines
#   SKIP_GSPARSE_BENCH=1  no gsparse-bench-sddmm run   PYTHON     [python3]
#   BENCH_ARGS / TORCH_ARGS  extra arguments of gsparse-bench-sddmm / torch_sddmm_baselines.py
#   CMAKE_ARGS extra arguments of the first configure  JOBS       build jobs [nproc]
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root" || exit 1

OUT=${OUT:-benchmarks/results}
BUILD_DIR=${BUILD_DIR:-build}
GRAPHS=${GRAPHS:-reddit,ogbn-proteins,ogbn-products,cora,citeseer,pubmed,ca-CondMat,p2p-Gnutella31}
FEATS=${FEATS:-1,2,4,8,16,32,64,128,256,512,1024}
OPS=${OPS:-dot}
SCALE=${SCALE:-1.0}
ORDER=${ORDER:-both}
RUNS=${RUNS:-10}
WARMUP=${WARMUP:-3}
GRID_THREADS=${GRID_THREADS:-128,256}
MAX_FEATS_PER_LANE=${MAX_FEATS_PER_LANE:-64}
SCREEN_RUNS=${SCREEN_RUNS:-3}
FINALISTS=${FINALISTS:-2}
GRAPH_DIR=${GRAPH_DIR:-$BUILD_DIR/bench-graphs}
PYTHON=${PYTHON:-python3}
JOBS=${JOBS:-$(nproc)}
REAL_DIR=${REAL_DIR:-datasets/real}

mkdir -p "$OUT" "$GRAPH_DIR"
work=$(mktemp -d "${TMPDIR:-/tmp}/gsparse-bench-sddmm.XXXXXX")
log=$work/sddmm_run.log
say() { echo "run_sddmm.sh: $*" | tee -a "$log"; }
say "results root $OUT, work folder $work"
start=$(date +%s)

# --- 1. Build ---------------------------------------------------------------------------------------
bench_bin=$BUILD_DIR/benchmarks/gsparse-bench-sddmm
data_bin=$BUILD_DIR/datasets/gsparse-data
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  # A GPU host without Debian packages gets Halide and friends from the carried bundle.
  if [ -z "${HALIDE_INCLUDE_DIR:-}" ] && [ ! -f /usr/include/halide14/Halide.h ] && [ -f .gpu-deps/gpu-env.sh ]; then
    say "sourcing .gpu-deps/gpu-env.sh"
    # shellcheck disable=SC1091
    source .gpu-deps/gpu-env.sh .gpu-deps
  fi
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
    say "configuring $BUILD_DIR"
    # shellcheck disable=SC2086
    cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} 2>&1 | tee -a "$log" | tail -5 ||
      { say "configure failed (see $log)"; exit 1; }
  fi
  say "building gsparse-bench-sddmm and gsparse-data"
  cmake --build "$BUILD_DIR" --target gsparse-bench-sddmm gsparse-data -j"$JOBS" 2>&1 | tee -a "$log" | tail -3
  if [ "${PIPESTATUS[0]}" != 0 ]; then say "build failed (see $log)"; exit 1; fi
  say "built in $(( $(date +%s) - start )) s"
fi
for b in "$bench_bin" "$data_bin"; do
  [ -x "$b" ] || { say "missing $b (build it, or unset SKIP_BUILD)"; exit 1; }
done

# --- 2. Graph files for the PyTorch script ------------------------------------------------------------
orders=$ORDER
[ "$ORDER" = both ] && orders="shuffled community"
torch_graphs=()
IFS=',' read -r -a graph_list <<<"$GRAPHS"
if [ "${SKIP_TORCH:-0}" != 1 ]; then
  for g in "${graph_list[@]}"; do
    case "$g" in
      reddit|ogbn-proteins|ogbn-products)
        for o in $orders; do
          f=$GRAPH_DIR/$g.$o.s$SCALE.gcsr
          if [ ! -s "$f" ]; then
            say "writing $f"
            "$data_bin" gen "$g" --scale "$SCALE" --order "$o" -o "$f" >>"$log" 2>&1 ||
              { say "gsparse-data gen $g failed (see $log)"; rm -f "$f"; continue; }
          fi
          torch_graphs+=(--graph "$g:$o=$f")
        done ;;
      *)
        f=""
        for ext in mtx gcsr; do
          if [ -f "$REAL_DIR/$g.$ext" ]; then f=$REAL_DIR/$g.$ext; break; fi
        done
        if [ -n "$f" ]; then torch_graphs+=(--graph "$g=$f"); else say "no $g.{mtx,gcsr} in $REAL_DIR: skipped for PyTorch"; fi ;;
    esac
  done
fi

# --- 3. Benchmarks -----------------------------------------------------------------------------------
inputs=()
if [ "${SKIP_GSPARSE_BENCH:-0}" != 1 ]; then
  sched_args=(--grid-threads "$GRID_THREADS" --max-feats-per-lane "$MAX_FEATS_PER_LANE")
  [ -n "${SCHEDULES:-}" ] && sched_args=(--schedules "$SCHEDULES")
  sched_args+=(--screen-runs "$SCREEN_RUNS" --finalists "$FINALISTS")
  say "running gsparse-bench-sddmm"
  # shellcheck disable=SC2086
  "$bench_bin" --graphs "$GRAPHS" --scale "$SCALE" --order "$ORDER" --feats "$FEATS" --ops "$OPS" \
    --runs "$RUNS" --warmup "$WARMUP" --real-dir "$REAL_DIR" --measure-copy-bw "${sched_args[@]}" \
    --json "$work/sddmm.json" --md "$work/sddmm.md" ${BENCH_ARGS:-} 2>&1 | tee -a "$log"
  rc=${PIPESTATUS[0]}
  [ "$rc" != 0 ] && say "gsparse-bench-sddmm exited with $rc"
  [ -s "$work/sddmm.json" ] && inputs+=("$work/sddmm.json")
  say "gsparse-bench-sddmm done at $(( $(date +%s) - start )) s"
fi
if [ "${SKIP_TORCH:-0}" != 1 ] && [ ${#torch_graphs[@]} -gt 0 ]; then
  say "running torch_sddmm_baselines.py"
  # shellcheck disable=SC2086
  PYTHONUNBUFFERED=1 "$PYTHON" benchmarks/torch_sddmm_baselines.py "${torch_graphs[@]}" --scale "$SCALE" \
    --feats "$FEATS" --ops "$OPS" --runs "$RUNS" --warmup "$WARMUP" --json "$work/torch_sddmm.json" \
    ${TORCH_ARGS:-} 2>&1 | tee -a "$log"
  rc=${PIPESTATUS[0]}
  [ "$rc" != 0 ] && say "torch_sddmm_baselines.py exited with $rc"
  [ -s "$work/torch_sddmm.json" ] && inputs+=("$work/torch_sddmm.json")
  say "torch_sddmm_baselines.py done at $(( $(date +%s) - start )) s"
fi

# --- 4. Report ---------------------------------------------------------------------------------------
if [ ${#inputs[@]} -eq 0 ]; then
  say "no benchmark produced results (see $log)"
  exit 1
fi
dir=$("$PYTHON" benchmarks/report_sddmm.py "${inputs[@]}" --results-root "$OUT" --copy-inputs --print-dir 2>>"$log")
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
  say "report_sddmm.py failed (see $log)"
  exit 1
fi
[ -s "$work/sddmm.md" ] && cp "$work/sddmm.md" "$dir/"
say "report written to $dir in $(( $(date +%s) - start )) s"
cp "$log" "$dir/sddmm_run.log"
ls -l "$dir"
