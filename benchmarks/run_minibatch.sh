#!/usr/bin/env bash
# run_minibatch.sh: the mini-batch GNN benchmark (gsparse vs torch_geometric) on a GPU host, in one command:
#   1. builds the gsparse Python module and gsparse-data in $BUILD_DIR (configuring it when it has no cache),
#   2. writes the reddit and ogbn-products twins as .gcsr files with gsparse-data (once),
#   3. runs minibatch.py, which writes summary.json, minibatch.md and minibatch.png to
#      ${OUT:-benchmarks/results}/<date>-<device>-minibatch/.
# Settings: BUILD_DIR [build-gpu], OUT [benchmarks/results], SCALE [1.0], PYTHON [python3],
# GRAPH_DIR [$BUILD_DIR/bench-graphs], JOBS [nproc], GRAPHS [reddit ogbn-products], ARGS (extra minibatch.py arguments).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
BUILD_DIR=${BUILD_DIR:-build-gpu}
OUT=${OUT:-benchmarks/results}
SCALE=${SCALE:-1.0}
PYTHON=${PYTHON:-python3}
GRAPH_DIR=${GRAPH_DIR:-$BUILD_DIR/bench-graphs}
JOBS=${JOBS:-$(nproc)}
GRAPHS=${GRAPHS:-reddit ogbn-products}
if [ -z "${HALIDE_INCLUDE_DIR:-}" ] && [ ! -f /usr/include/halide14/Halide.h ] && [ -f .gpu-deps/gpu-env.sh ]; then
  # shellcheck disable=SC1091
  source .gpu-deps/gpu-env.sh .gpu-deps
fi
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DGSPARSE_WITH_TORCH=OFF -DGSPARSE_WITH_PYTHON=ON \
    -DPython3_EXECUTABLE="$(command -v "$PYTHON")" ${CMAKE_ARGS:-}
fi
echo "building gsparse_python and gsparse-data in $BUILD_DIR"
cmake --build "$BUILD_DIR" --target gsparse_python gsparse-data -j"$JOBS"
mkdir -p "$GRAPH_DIR"
graphs=()
for g in $GRAPHS; do
  f=$GRAPH_DIR/$g.shuffled.s$SCALE.gcsr
  if [ ! -s "$f" ]; then
    echo "generating the $g twin (scale $SCALE)"
    "$BUILD_DIR/datasets/gsparse-data" gen "$g" --scale "$SCALE" -o "$f"
  fi
  graphs+=(--graph "$g=$f")
done
# shellcheck disable=SC2086
PYTHONPATH="$root/python:$root/$BUILD_DIR/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 \
  "$PYTHON" benchmarks/minibatch.py "${graphs[@]}" --out-root "$OUT" ${ARGS:-}
