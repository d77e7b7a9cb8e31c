#!/usr/bin/env bash
# run_tune_eval.sh: the autotuner evaluation on a GPU host, in one command (the paper's Fig. 11).
# For every twin and feature length it runs gsparse-tune three times on the same problem:
#   genetic     cost-model seeded genetic search (the product's default), timed end to end (wall_s);
#   random      uniform random sampling with as many measured candidates as the genetic search had;
#   exhaustive  every valid point of the space (EX_RUNS timed runs each, the cutoff left on: a point
#               whose warm-up run is over 1.5x the best so far cannot be within 5% of the best), all
#               twins of one F in one gsparse-sweep process that compiles each kernel once;
# then report_tune.py writes tune_eval.md, tune_eval.json and tune_eval.png into
# ${OUT:-benchmarks/results}/<date>-<device-slug>-tune/. Every measurement is also appended to
# records.jsonl there (training data for gsparse-train-cost-model). An exhaustive sweep keeps its own
# records in WORK and resumes from them, so a sweep cut short continues when run again with that WORK.
#
# Settings (environment variables, defaults in brackets):
#   GRAPHS [reddit,ogbn-proteins,ogbn-products]   FEATS [8,16,32,64,128,256,512]   SCALE [1.0]
#   ORDER [shuffled]   MODEL [autotune/models/h100_$OP; empty: no model]   EX_RUNS [5]   RUNS [10]
#   OP [spmm; sddmm tunes u_dot_v]   BUILD_DIR [build]   SKIP_BUILD=1 (use the existing gsparse-tune)
#   OUT [benchmarks/results]
#   SKIP_EXHAUSTIVE=1 (genetic and random only)   PYTHON [python3]
#   SWEEP_TIME_LIMIT (seconds: each sweep stops between chunks after it; rerun with the same WORK)
#   WORK (folder of the tune results; a second run with the same WORK adds its cases to the report)
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 1
GRAPHS=${GRAPHS:-reddit,ogbn-proteins,ogbn-products}
FEATS=${FEATS:-8,16,32,64,128,256,512}
SCALE=${SCALE:-1.0}
ORDER=${ORDER:-shuffled}
OP=${OP:-spmm}
MODEL=${MODEL-autotune/models/h100_$OP}
EX_RUNS=${EX_RUNS:-5}
RUNS=${RUNS:-10}
BUILD_DIR=${BUILD_DIR:-build}
OUT=${OUT:-benchmarks/results}
PYTHON=${PYTHON:-python3}
tune=$BUILD_DIR/autotune/gsparse-tune
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  [ -f "$BUILD_DIR/CMakeCache.txt" ] || cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} || exit 1
  cmake --build "$BUILD_DIR" --target gsparse-tune gsparse-sweep -j"$(nproc)" || exit 1
fi
[ -x "$tune" ] || { echo "run_tune_eval.sh: $tune is missing" >&2; exit 1; }
work=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/gsparse-tune-eval.XXXXXX")}
mkdir -p "$work"
echo "run_tune_eval.sh: work folder $work"
model_args=(--model none)  # gsparse-tune's default (auto) would pick the shipped model
if [ -n "$MODEL" ]; then
  if [ -f "$MODEL.pt" ]; then model_args=(--model "$MODEL"); else echo "run_tune_eval.sh: no $MODEL.pt; tuning without a model"; fi
fi
case "$OP" in
  spmm) op_args=(--op spmm) ;;
  sddmm) op_args=(--op sddmm --binary dot) ;;
  *) echo "run_tune_eval.sh: OP must be spmm or sddmm, got '$OP'" >&2; exit 1 ;;
esac
base_args=(--target cuda --scale "$SCALE" --order "$ORDER" --no-cache --quiet --cache "$work/cache.json" "${op_args[@]}")
common=("${base_args[@]}" --records "$work/records.jsonl")
IFS=, read -ra graphs <<< "$GRAPHS"
IFS=, read -ra feats <<< "$FEATS"
sweep=$BUILD_DIR/autotune/gsparse-sweep
for f in "${feats[@]}"; do
  for g in "${graphs[@]}"; do
    base=$work/$OP-$g-F$f
    echo "== $g F=$f"
    "$tune" "${common[@]}" --dataset "$g" --feat "$f" --mode genetic --runs "$RUNS" "${model_args[@]}" \
      --json "$base-genetic.json" || { echo "genetic tune failed"; continue; }
    n=$("$PYTHON" -c "import json,sys; print(len(json.load(open(sys.argv[1]))['candidates']))" "$base-genetic.json")
    "$tune" "${common[@]}" --dataset "$g" --feat "$f" --mode random --budget "$n" --runs "$RUNS" \
      --json "$base-random.json" || echo "random tune failed"
  done
  if [ "${SKIP_EXHAUSTIVE:-0}" != 1 ]; then
    # All twins of this F in one process (each kernel compiled and loaded once), with their own
    # records files, resumed: a sweep cut short (a time limit) continues where it stopped when run
    # again with the same WORK, and reuses none of the searches' times.
    echo "== exhaustive sweeps, F=$f"
    "$sweep" --datasets "$GRAPHS" --feat "$f" --target cuda --scale "$SCALE" --order "$ORDER" "${op_args[@]}" \
      --runs "$EX_RUNS" --out-dir "$work" --resume --quiet ${SWEEP_TIME_LIMIT:+--time-limit "$SWEEP_TIME_LIMIT"} \
      || echo "exhaustive sweep failed"
  fi
done
# Training data: the searches' records and the exhaustive sweeps' records in one file.
cat "$work/records.jsonl" "$work"/*-exhaustive.records.jsonl > "$work/all-records.jsonl" 2>/dev/null
"$PYTHON" benchmarks/report_tune.py "$work"/*.json --records "$work/all-records.jsonl" --results-root "$OUT"
