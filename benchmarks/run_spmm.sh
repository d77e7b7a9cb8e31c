#!/usr/bin/env bash
# run_spmm.sh: the whole g-SpMM benchmark on a GPU host, in one command, from any folder:
#   1. builds gsparse-bench-spmm and gsparse-data (configuring $BUILD_DIR first when it has no cache),
#   2. writes the dataset twins as .gcsr files with gsparse-data for the PyTorch script (the same graphs
#      gsparse-bench-spmm generates in-process: same scale, order and seed),
#   3. runs gsparse-bench-spmm (gsparse vs cached cuSPARSE, copy bandwidth) and torch_baselines.py,
#   4. merges both with report.py into ${OUT:-benchmarks/results}/<date>-<device-slug>/
#      (report.md, speedup.png, times.png, merged.json, the raw spmm.json / spmm.md / torch.json, run.log).
# A failing benchmark does not stop the others; the report covers what ran. Exit status: 0 when the
# report was written, 1 otherwise.
#
# Settings (environment variables, defaults in brackets):
#   OUT        results root [benchmarks/results]       BUILD_DIR  CMake build folder [build]
#   GRAPHS     comma list [reddit,ogbn-proteins,ogbn-products,cora,citeseer,pubmed,ca-CondMat,p2p-Gnutella31]
#   FEATS      [1,2,4,8,16,32,64,128,256,512]          OPS        [copy_lhs:sum,mul:sum,copy_lhs:max]
#   SCALE      twin scale [1.0]                        ORDER      shuffled|community|both [both]
#   RUNS [10]  WARMUP [3]
#   SCHEDULES  schedule-point JSON for gsparse [benchmarks/schedules/small_f_lanes.json: the default
#              schedule, plus for F <= 32 the kNnzLanes points and the one-thread-per-row points they
#              replace as defaults]; SCHEDULES= (empty) runs the default schedule only
#   REAL_DIR   real graphs [datasets/real]
#   GRAPH_DIR  where twin .gcsr files go [$BUILD_DIR/bench-graphs]
#   SKIP_BUILD=1   use the existing binaries           SKIP_TORCH=1  no PyTorch baselines
#   SKIP_GSPARSE_BENCH=1  no gsparse-bench-spmm run    PYTHON     [python3]
#   BENCH_ARGS / TORCH_ARGS  extra arguments of gsparse-bench-spmm / torch_baselines.py
#   CMAKE_ARGS extra arguments of the first configure  JOBS       build jobs [nproc]
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root" || exit 1

OUT=${OUT:-benchmarks/results}
BUILD_DIR=${BUILD_DIR:-build}
GRAPHS=${GRAPHS:-reddit,ogbn-proteins,ogbn-products,cora,citeseer,pubmed,ca-CondMat,p2p-Gnutella31}
FEATS=${FEATS:-1,2,4,8,16,32,64,128,256,512}
OPS=${OPS:-copy_lhs:sum,mul:sum,copy_lhs:max}
SCALE=${SCALE:-1.0}
ORDER=${ORDER:-both}
RUNS=${RUNS:-10}
WARMUP=${WARMUP:-3}
GRAPH_DIR=${GRAPH_DIR:-$BUILD_DIR/bench-graphs}
PYTHON=${PYTHON:-python3}
JOBS=${JOBS:-$(nproc)}
SCHEDULES=${SCHEDULES-benchmarks/schedules/small_f_lanes.json}
REAL_DIR=${REAL_DIR:-datasets/real}

mkdir -p "$OUT" "$GRAPH_DIR"
work=$(mktemp -d "${TMPDIR:-/tmp}/gsparse-bench.XXXXXX")
log=$work/run.log
say() { echo "run_spmm.sh: $*" | tee -a "$log"; }
say "results root $OUT, work folder $work"

# --- 1. Build ---------------------------------------------------------------------------------------
bench_bin=$BUILD_DIR/benchmarks/gsparse-bench-spmm
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
  say "building gsparse-bench-spmm and gsparse-data"
  cmake --build "$BUILD_DIR" --target gsparse-bench-spmm gsparse-data -j"$JOBS" 2>&1 | tee -a "$log" | tail -3
  if [ "${PIPESTATUS[0]}" != 0 ]; then say "build failed (see $log)"; exit 1; fi
fi
for b in "$bench_bin" "$data_bin"; do
  [ -x "$b" ] || { say "missing $b (build it, or unset SKIP_BUILD)"; exit 1; }
done

# --- 2. Graph files for the PyTorch script ------------------------------------------------------------
orders=$ORDER
[ "$ORDER" = both ] && orders="shuffled community"
torch_graphs=()
IFS=',' read -r -a graph_list <<<"$GRAPHS"
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

# --- 3. Benchmarks -----------------------------------------------------------------------------------
inputs=()
if [ "${SKIP_GSPARSE_BENCH:-0}" != 1 ]; then
  sched_args=()
  [ -n "${SCHEDULES:-}" ] && sched_args=(--schedules "$SCHEDULES")
  say "running gsparse-bench-spmm"
  # shellcheck disable=SC2086
  "$bench_bin" --graphs "$GRAPHS" --scale "$SCALE" --order "$ORDER" --feats "$FEATS" --ops "$OPS" \
    --runs "$RUNS" --warmup "$WARMUP" --real-dir "$REAL_DIR" --measure-copy-bw "${sched_args[@]}" \
    --json "$work/spmm.json" --md "$work/spmm.md" ${BENCH_ARGS:-} 2>&1 | tee -a "$log"
  rc=${PIPESTATUS[0]}
  [ "$rc" != 0 ] && say "gsparse-bench-spmm exited with $rc"
  [ -s "$work/spmm.json" ] && inputs+=("$work/spmm.json")
fi
if [ "${SKIP_TORCH:-0}" != 1 ] && [ ${#torch_graphs[@]} -gt 0 ]; then
  say "running torch_baselines.py"
  # shellcheck disable=SC2086
  PYTHONUNBUFFERED=1 "$PYTHON" benchmarks/torch_baselines.py "${torch_graphs[@]}" --scale "$SCALE" \
    --feats "$FEATS" --ops "$OPS" --runs "$RUNS" --warmup "$WARMUP" --json "$work/torch.json" ${TORCH_ARGS:-} 2>&1 |
    tee -a "$log"
  rc=${PIPESTATUS[0]}
  [ "$rc" != 0 ] && say "torch_baselines.py exited with $rc"
  [ -s "$work/torch.json" ] && inputs+=("$work/torch.json")
fi

# --- 4. Report ---------------------------------------------------------------------------------------
if [ ${#inputs[@]} -eq 0 ]; then
  say "no benchmark produced results (see $log)"
  exit 1
fi
extra=()
[ -s "$work/spmm.md" ] && extra+=("$work/spmm.md")
dir=$("$PYTHON" benchmarks/report.py "${inputs[@]}" --results-root "$OUT" --copy-inputs --print-dir 2>>"$log")
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
  say "report.py failed (see $log)"
  exit 1
fi
for f in "${extra[@]}"; do cp "$f" "$dir/"; done
say "report written to $dir"
cp "$log" "$dir/run.log"
ls -l "$dir"
