#!/usr/bin/env bash
# run_gnn.sh: the full-batch GNN benchmark (gsparse.nn vs torch_geometric) on a GPU host, in one command:
#   1. builds the gsparse Python module and gsparse-data in $BUILD_DIR (configuring it when it has no cache),
#   2. writes the reddit and ogbn-products twins (full size; $TWINS) and the zoo members of $ZOO as .gcsr files
#      with gsparse-data,
#   3. runs gnn_training.py, which writes gnn.json, gnn.md and gnn.png to ${OUT:-benchmarks/results}/<date>-<device>/.
# Settings: BUILD_DIR [build-gpu], OUT [benchmarks/results], SCALE [1.0], PYTHON [python3],
# GRAPH_DIR [$BUILD_DIR/bench-graphs], JOBS [nproc], ARGS (extra gnn_training.py arguments),
# TWINS [reddit ogbn-products] (space-separated; empty: none), ZOO (comma-separated zoo members, e.g.
# lat-h-11m,knn-h-5m: trained with gnn_training.py's --feat / --classes).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=benchmarks/python_bench_env.sh
source benchmarks/python_bench_env.sh
build_python_module
graphs=()
for g in ${TWINS-reddit ogbn-products}; do
  graphs+=(--graph "$g=$(twin_file "$g")")
done
IFS=, read -ra zoo <<< "${ZOO:-}"
for n in "${zoo[@]}"; do
  [ -n "$n" ] || continue
  mkdir -p "$GRAPH_DIR"
  [ -s "$GRAPH_DIR/$n.gcsr" ] || "$BUILD_DIR/datasets/gsparse-data" zoo gen "$n" -o "$GRAPH_DIR" --quiet > /dev/null
  graphs+=(--graph "$n=$GRAPH_DIR/$n.gcsr")
done
echo "run_gnn.sh: training (gnn_training.py), results under $OUT"
# shellcheck disable=SC2086
run_python benchmarks/gnn_training.py "${graphs[@]}" --cora datasets/real/cora.mtx --out-root "$OUT" ${ARGS:-}
