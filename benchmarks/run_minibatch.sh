#!/usr/bin/env bash
# run_minibatch.sh: the mini-batch GNN benchmark (gsparse vs torch_geometric) on a GPU host, in one command:
#   1. builds the gsparse Python module and gsparse-data in $BUILD_DIR (configuring it when it has no cache),
#   2. writes the reddit and ogbn-products twins as .gcsr files with gsparse-data (once),
#   3. runs minibatch.py, which writes summary.json, minibatch.md and minibatch.png to
#      ${OUT:-benchmarks/results}/<date>-<device>-minibatch/,
#   4. runs minibatch_capture.py (the same models with their steps captured as CUDA graphs) into
#      <date>-<device>-minibatch-capture/ (CAPTURE=0 leaves it out),
#   5. runs graph_build.py (the validated builds of a step's graphs, graph-build kernels against
#      PyTorch operations) into <date>-<device>-graph-build/ (GRAPH_BUILD=0 leaves it out).
# Settings: BUILD_DIR [build-gpu], OUT [benchmarks/results], SCALE [1.0], PYTHON [python3],
# GRAPH_DIR [$BUILD_DIR/bench-graphs], JOBS [nproc], GRAPHS [reddit ogbn-products], ARGS (extra minibatch.py arguments).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=benchmarks/python_bench_env.sh
source benchmarks/python_bench_env.sh
GRAPHS=${GRAPHS:-reddit ogbn-products}
build_python_module
graphs=()
for g in $GRAPHS; do
  graphs+=(--graph "$g=$(twin_file "$g")")
done
# shellcheck disable=SC2086
run_python benchmarks/minibatch.py "${graphs[@]}" --out-root "$OUT" ${ARGS:-}
if [ "${CAPTURE:-1}" != 0 ]; then
  # shellcheck disable=SC2086
  run_python benchmarks/minibatch_capture.py "${graphs[@]}" --out-root "$OUT"
fi
if [ "${GRAPH_BUILD:-1}" != 0 ]; then
  run_python benchmarks/graph_build.py "${graphs[@]}" --out-root "$OUT"
fi
