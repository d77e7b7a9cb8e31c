#!/usr/bin/env bash
# run_zoo.sh: g-SpMM's and g-SDDMM's default schedules against the best cached cuSPARSE algorithm over the graph zoo,
# the twins and the real graphs, on a GPU host, in one command:
#   1. builds gsparse-data and gsparse-bench-spmm in $BUILD_DIR (configuring it when it has no cache),
#   2. writes the zoo members of $MEMBERS (datasets/zoo/zoo.txt names; default: the held-out part) into
#      $GRAPH_DIR once,
#   3. runs gsparse-bench-spmm on them (and on $EXTRA: twin or real graph names) with the points of
#      $SCHEDULES (default: the default schedule and the expert rules it replaced), F = $FEATS, ops $OPS,
#   3b. with TUNE=1, first tunes every graph at every F of $TUNE_FEATS (gsparse-tune, genetic search ranked by
#      the shipped cost model, and g-SpMM by nonzeros for sum and mean; results in $RESULTS/tunes/) and adds each tuned point to the benchmark
#      (label "tuned": report_zoo.py's gsparse_tuned_ms),
#   4. runs gsparse-bench-sddmm (u_dot_v, default schedule) on the same graphs, F = $SDDMM_FEATS,
#   5. report_zoo.py writes summary.json, report.md and a plot per family into $RESULTS.
# Several runs into the same $RESULTS (other members, ops or feature lengths) add to one report.
#
# Settings (environment, defaults in brackets):
#   RESULTS   [benchmarks/results/<date>-<device>-zoo]   BUILD_DIR [build]   GRAPH_DIR [$BUILD_DIR/zoo-graphs]
#   MEMBERS   comma list of zoo members [every held-out member]   EXTRA  [none; e.g. reddit,cora]
#   FEATS     [1,2,4,8,16,32,47,64,100,128,256,512]   OPS [copy_lhs:sum,mul:sum]   RUNS [10]   WARMUP [3]
#   SCHEDULES [benchmarks/schedules/zoo_default_vs_expert.json]   SCALE (twins) [1.0]   TAG (file name part) [run]
#   TIME_LIMIT seconds each benchmark may run, then it stops (the cases done so far are kept) [none]
#   EDGE_IDS  [file]: the zoo files' edge ids; positions: renumbered to CSR positions, so that the edge
#             weights of u_mul_e lie in CSR order for gsparse as they do for cuSPARSE (gsparse-bench-spmm)
#   SDDMM_FEATS [1,4,16,32,64,128,256]   SKIP_SDDMM=1  g-SpMM only
#   TUNE=1  tune before benchmarking   TUNE_FEATS [FEATS]   TUNE_OPS (ops of OPS to tune) [copy_lhs:sum]
#   SKIP_BUILD=1   PYTHON [python3]
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 1
BUILD_DIR=${BUILD_DIR:-build}
GRAPH_DIR=${GRAPH_DIR:-$BUILD_DIR/zoo-graphs}
MEMBERS=${MEMBERS:-$(awk '$2 == "heldout" {printf "%s%s", sep, $1; sep=","}' datasets/zoo/zoo.txt)}
EXTRA=${EXTRA:-}
FEATS=${FEATS:-1,2,4,8,16,32,47,64,100,128,256,512}
OPS=${OPS:-copy_lhs:sum,mul:sum}
RUNS=${RUNS:-10}
WARMUP=${WARMUP:-3}
SCALE=${SCALE:-1.0}
TAG=${TAG:-run}
SCHEDULES=${SCHEDULES:-benchmarks/schedules/zoo_default_vs_expert.json}
PYTHON=${PYTHON:-python3}

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  [ -f "$BUILD_DIR/CMakeCache.txt" ] || cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} || exit 1
  targets=(gsparse-data gsparse-bench-spmm gsparse-bench-sddmm)
  [ "${TUNE:-0}" = 1 ] && targets+=(gsparse-tune)
  cmake --build "$BUILD_DIR" --target "${targets[@]}" -j"$(nproc)" || exit 1
fi
data=$BUILD_DIR/datasets/gsparse-data
bench=$BUILD_DIR/benchmarks/gsparse-bench-spmm
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')
RESULTS=${RESULTS:-benchmarks/results/$(date +%F)-${device:-gpu}-zoo}
mkdir -p "$GRAPH_DIR" "$RESULTS"

graphs=""
IFS=, read -ra members <<< "$MEMBERS"
for n in "${members[@]}"; do
  [ -n "$n" ] || continue
  if [ ! -s "$GRAPH_DIR/$n.gcsr" ]; then
    "$data" zoo gen "$n" -o "$GRAPH_DIR" --quiet > /dev/null || { echo "run_zoo.sh: generating $n failed" >&2; continue; }
  fi
  graphs+="${graphs:+,}$GRAPH_DIR/$n.gcsr"
done
[ -n "$EXTRA" ] && graphs="$EXTRA${graphs:+,}$graphs"  # twins and real graphs first
[ -n "$graphs" ] || { echo "run_zoo.sh: no graphs" >&2; exit 1; }

limit=()
[ -n "${TIME_LIMIT:-}" ] && limit=(timeout "$TIME_LIMIT")

if [ "${TUNE:-0}" = 1 ]; then
  # One genetic tune per graph, op and F (a fresh tune each time: --no-cache), then the tuned points as
  # benchmark points filtered to their graph, op and F.
  mkdir -p "$RESULTS/tunes"
  IFS=, read -ra tune_feats <<< "${TUNE_FEATS:-$FEATS}"
  IFS=, read -ra tune_ops <<< "${TUNE_OPS:-copy_lhs:sum}"
  IFS=, read -ra tune_graphs <<< "$graphs"  # graph files; twins and real graphs (EXTRA) are not tuned here
  for g in "${tune_graphs[@]}"; do
    [ -f "$g" ] || { echo "run_zoo.sh: $g is not a graph file; not tuned"; continue; }
    name=$(basename "$g" .gcsr)
    for op in "${tune_ops[@]}"; do
      binary=${op%%:*} reduce=${op##*:}
      edge=()
      [ "$binary" = copy_lhs ] || edge=(--edge-feat 1)  # the benchmark's edge operand: a scalar per edge
      # Sum and mean: the search also measures g-SpMM by nonzeros, the form the default may take.
      case "$reduce" in sum|mean) edge+=(--segments) ;; esac
      for f in "${tune_feats[@]}"; do
        out="$RESULTS/tunes/$name-$binary-$reduce-F$f.json"
        [ -s "$out" ] && continue
        "${limit[@]}" "$BUILD_DIR/autotune/gsparse-tune" --graph "$g" --op spmm --binary "$binary" --reduce "$reduce" \
          --feat "$f" "${edge[@]}" --target cuda --mode genetic --runs 10 --no-cache --cache "$RESULTS/tunes/cache.json" \
          --quiet --json "$out" > "$RESULTS/tunes/$name-$binary-$reduce-F$f.log" 2>&1 \
          || echo "run_zoo.sh: tuning $name $op F=$f failed (see its log)"
      done
    done
  done
  "$PYTHON" benchmarks/tuned_points.py "$RESULTS/tunes" --base "$SCHEDULES" -o "$RESULTS/tunes/points.json" || exit 1
  SCHEDULES=$RESULTS/tunes/points.json
fi
"${limit[@]}" "$bench" --graphs "$graphs" --scale "$SCALE" --order shuffled --feats "$FEATS" --ops "$OPS" --runs "$RUNS" \
  --edge-ids "${EDGE_IDS:-file}" --warmup "$WARMUP" --schedules "$SCHEDULES" --json "$RESULTS/spmm-$TAG.json" --md "$RESULTS/spmm-$TAG.md" \
  2>&1 | tail -n 400 > "$RESULTS/spmm-$TAG.log"
status=${PIPESTATUS[0]}
echo "run_zoo.sh: gsparse-bench-spmm exited with $status (log $RESULTS/spmm-$TAG.log)"
if [ "${SKIP_SDDMM:-0}" != 1 ]; then
  "${limit[@]}" "$BUILD_DIR/benchmarks/gsparse-bench-sddmm" --graphs "$graphs" --scale "$SCALE" --order shuffled \
    --feats "${SDDMM_FEATS:-1,4,16,32,64,128,256}" --runs "$RUNS" --warmup "$WARMUP" \
    --schedules benchmarks/schedules/default_only.json --json "$RESULTS/sddmm-$TAG.json" --md "$RESULTS/sddmm-$TAG.md" \
    2>&1 | tail -n 400 > "$RESULTS/sddmm-$TAG.log"
  sddmm_status=${PIPESTATUS[0]}
  echo "run_zoo.sh: gsparse-bench-sddmm exited with $sddmm_status (log $RESULTS/sddmm-$TAG.log)"
  [ "$status" != 0 ] || status=$sddmm_status
fi
"$PYTHON" benchmarks/report_zoo.py "$RESULTS" || exit 1
exit "$status"
