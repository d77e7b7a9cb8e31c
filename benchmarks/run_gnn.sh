#!/usr/bin/env bash
# run_gnn.sh: the full-batch GNN benchmark (gsparse.nn vs torch_geometric) on a GPU host, in one command:
#   1. builds the gsparse Python module and gsparse-data in $BUILD_DIR (configuring it when it has no cache),
#   2. writes the reddit and ogbn-products twins (full size) as .gcsr files with gsparse-data,
#   3. runs gnn_training.py, which writes gnn.json, gnn.md and gnn.png to ${OUT:-benchmarks/results}/<date>-<device>/.
# Settings: BUILD_DIR [build-gpu], OUT [benchmarks/results], SCALE [1.0], PYTHON [python3],
# GRAPH_DIR [$BUILD_DIR/bench-graphs], JOBS [nproc], ARGS (extra gnn_training.py arguments).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
BUILD_DIR=${BUILD_DIR:-build-gpu}
OUT=${OUT:-benchmarks/results}
SCALE=${SCALE:-1.0}
PYTHON=${PYTHON:-python3}
GRAPH_DIR=${GRAPH_DIR:-$BUILD_DIR/bench-graphs}
JOBS=${JOBS:-$(nproc)}
if [ -z "${HALIDE_INCLUDE_DIR:-}" ] && [ ! -f /usr/include/halide14/Halide.h ] && [ -f .gpu-deps/gpu-env.sh ]; then
  # shellcheck disable=SC1091
  source .gpu-deps/gpu-env.sh .gpu-deps
fi
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DGSPARSE_WITH_TORCH=OFF -DGSPARSE_WITH_PYTHON=ON \
    -DPython3_EXECUTABLE="$(command -v "$PYTHON")" ${CMAKE_ARGS:-}
fi
echo "run_gnn.sh: building gsparse_python and gsparse-data in $BUILD_DIR"
cmake --build "$BUILD_DIR" --target gsparse_python gsparse-data -j"$JOBS"
mkdir -p "$GRAPH_DIR"
graphs=()
for g in reddit ogbn-products; do
  f=$GRAPH_DIR/$g.shuffled.s$SCALE.gcsr
  if [ -s "$f" ]; then
    echo "run_gnn.sh: the $g twin (scale $SCALE): $f"
  else
    echo "run_gnn.sh: generating the $g twin (scale $SCALE) into $f"
    "$BUILD_DIR/datasets/gsparse-data" gen "$g" --scale "$SCALE" -o "$f"
  fi
  graphs+=(--graph "$g=$f")
done
real=datasets/real
echo "run_gnn.sh: training (gnn_training.py), results under $OUT"
# shellcheck disable=SC2086
PYTHONPATH="$root/python:$root/$BUILD_DIR/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 \
  "$PYTHON" benchmarks/gnn_training.py "${graphs[@]}" --cora "$real/cora.mtx" --out-root "$OUT" ${ARGS:-}
