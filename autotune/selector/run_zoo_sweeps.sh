#!/usr/bin/env bash
# run_zoo_sweeps.sh: the candidate sweeps of g-SpMM (copy_lhs + sum) over the graph zoo that the
# default selector learns from (training part) and is checked on (held-out part), on a GPU host:
#   1. builds gsparse-data and gsparse-sweep in $BUILD_DIR (configuring it when it has no cache),
#   2. writes the zoo's graphs ($TRAIN and $HELDOUT, names from datasets/zoo/zoo.txt) into $GRAPH_DIR
#      once, with their statistics ($SWEEP_DIR/graphs.jsonl, `gsparse-data stats --json`),
#   3. for every F of $FEATS: the structured candidates of candidates.py plus a deterministic sample of
#      $SAMPLE other points, measured on every graph of a part in one gsparse-sweep (each kernel compiled
#      once), records in $SWEEP_DIR/<part>/. Sweeps resume from their records, so a run cut short by
#      $TIME_LIMIT (seconds a sweep may start chunks for) goes on where it stopped when run again.
# TARGET=cpu runs the same on the CPU (cpu_spmm; a check of the pipeline).
# Then `python3 autotune/selector/train_selector.py $SWEEP_DIR` learns the selector.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 1
BUILD_DIR=${BUILD_DIR:-build}
GRAPH_DIR=${GRAPH_DIR:-$BUILD_DIR/zoo-graphs}
SWEEP_DIR=${SWEEP_DIR:-$BUILD_DIR/zoo-sweeps}
FEATS=${FEATS:-1,2,4,8,16,32,47,64,100,128,256}
PARTS=${PARTS:-train,heldout}
SAMPLE=${SAMPLE:-40}
RUNS=${RUNS:-5}
TIME_LIMIT=${TIME_LIMIT:-0}
TARGET=${TARGET:-cuda}
PYTHON=${PYTHON:-python3}
# The training graphs up to 32 M edges (the 60-100 M ones cost sweep time and add no new shape).
TRAIN=${TRAIN:-cl-1m,cl-3m-sparse,cl-8m,cl-32m,rmat-s16,rmat-s20,rmat-s21-nat,lat-1m,lat-8m,mesh-24m,lat-4m-shuf,knn-1m,knn-8m,knn-32m,er-1m,er-16m,bip-2m,bip-16m,batch-1m,batch-10m,reddit-s05-i0,reddit-s10-i04,proteins-s10-i05,products-s10-i0}
HELDOUT=${HELDOUT:-$(awk '$2 == "heldout" {printf "%s%s", sep, $1; sep=","}' datasets/zoo/zoo.txt)}

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  [ -f "$BUILD_DIR/CMakeCache.txt" ] || cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} || exit 1
  cmake --build "$BUILD_DIR" --target gsparse-data gsparse-sweep -j"$(nproc)" || exit 1
fi
data=$BUILD_DIR/datasets/gsparse-data
sweep=$BUILD_DIR/autotune/gsparse-sweep
mkdir -p "$GRAPH_DIR" "$SWEEP_DIR"

# graph_list NAMES: the graph files of the zoo members NAMES (comma list), generated when missing.
graph_list() {
  local names=$1 files="" n
  IFS=, read -ra members <<< "$names"
  for n in "${members[@]}"; do
    if [ ! -s "$GRAPH_DIR/$n.gcsr" ]; then
      "$data" zoo gen "$n" -o "$GRAPH_DIR" --quiet > /dev/null || { echo "generating $n failed" >&2; continue; }
      printf '{"graph": "%s", "split": "%s", "stats": %s}\n' "$n" "$2" \
        "$("$data" stats "$GRAPH_DIR/$n.gcsr" --json)" >> "$SWEEP_DIR/graphs.jsonl"
    fi
    files+="${files:+,}$GRAPH_DIR/$n.gcsr"
  done
  echo "$files"
}

IFS=, read -ra parts <<< "$PARTS"
IFS=, read -ra feats <<< "$FEATS"
declare -A files
for part in "${parts[@]}"; do
  case "$part" in
    train) files[$part]=$(graph_list "$TRAIN" train) ;;
    heldout) files[$part]=$(graph_list "$HELDOUT" heldout) ;;
    *) echo "run_zoo_sweeps.sh: PARTS holds train and heldout, got '$part'" >&2; exit 1 ;;
  esac
done
start=$SECONDS
for f in "${feats[@]}"; do
  "$PYTHON" autotune/selector/candidates.py --feat "$f" -o "$SWEEP_DIR/points-F$f.json" || exit 1
  for part in "${parts[@]}"; do
    limit=0
    if [ "$TIME_LIMIT" != 0 ]; then
      limit=$((TIME_LIMIT - (SECONDS - start)))
      [ "$limit" -gt 0 ] || { echo "run_zoo_sweeps.sh: time limit reached before F=$f ($part)"; exit 0; }
    fi
    echo "== F=$f $part"
    "$sweep" --graphs "${files[$part]}" --feat "$f" --target "$TARGET" --runs "$RUNS" --quiet --resume \
      --points "$SWEEP_DIR/points-F$f.json" --sample "$SAMPLE" --out-dir "$SWEEP_DIR/$part" \
      --time-limit "$limit" || echo "sweep F=$f $part failed"
  done
done
