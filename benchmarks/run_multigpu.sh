#!/usr/bin/env bash
# run_multigpu.sh: the several-GPU benchmark (gsparse.distributed on NCCL) on a host with 2 GPUs, in one command:
#   1. builds the gsparse Python module and gsparse-data in $BUILD_DIR (configuring it when it has no cache),
#   2. writes the ogbn-products twin as .gcsr files with gsparse-data (once): shuffled ids, and community order,
#   3. runs multigpu.py (1 GPU against $WORLDS GPUs: mini-batch GraphSAGE, partitioned GCN, a feature matrix
#      larger than one GPU), which writes summary.json and multigpu.md to ${OUT:-benchmarks/results}/<date>-<device>-multigpu/.
# Settings: BUILD_DIR [build-gpu], OUT [benchmarks/results], SCALE [1.0], PYTHON [python3], WORLDS [1,2],
# GRAPH_DIR [$BUILD_DIR/bench-graphs], JOBS [nproc], ARGS (extra multigpu.py arguments, e.g. "--cases minibatch").
# SKIP_BUILD=1 uses the module and gsparse-data already built in $BUILD_DIR.
# DEVICE=cpu checks the whole pipeline with gloo on CPU processes instead (use a small SCALE, e.g. 0.003).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
BUILD_DIR=${BUILD_DIR:-build-gpu}
OUT=${OUT:-benchmarks/results}
SCALE=${SCALE:-1.0}
PYTHON=${PYTHON:-python3}
GRAPH_DIR=${GRAPH_DIR:-$BUILD_DIR/bench-graphs}
JOBS=${JOBS:-$(nproc)}
WORLDS=${WORLDS:-1,2}
DEVICE=${DEVICE:-cuda}
if [ -z "${HALIDE_INCLUDE_DIR:-}" ] && [ ! -f /usr/include/halide14/Halide.h ] && [ -f .gpu-deps/gpu-env.sh ]; then
  # shellcheck disable=SC1091
  source .gpu-deps/gpu-env.sh .gpu-deps
fi
if [ -z "${SKIP_BUILD:-}" ]; then
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
    cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DGSPARSE_WITH_TORCH=OFF -DGSPARSE_WITH_PYTHON=ON \
      -DPython3_EXECUTABLE="$(command -v "$PYTHON")" ${CMAKE_ARGS:-}
  fi
  echo "building gsparse_python and gsparse-data in $BUILD_DIR"
  cmake --build "$BUILD_DIR" --target gsparse_python gsparse-data -j"$JOBS"
fi
mkdir -p "$GRAPH_DIR"
shuffled=$GRAPH_DIR/ogbn-products.shuffled.s$SCALE.gcsr
community=$GRAPH_DIR/ogbn-products.community.s$SCALE.gcsr
if [ ! -s "$shuffled" ]; then
  echo "generating the ogbn-products twin (scale $SCALE, shuffled ids)"
  "$BUILD_DIR/datasets/gsparse-data" gen ogbn-products --scale "$SCALE" -o "$shuffled"
fi
if [ ! -s "$community" ]; then
  echo "generating the ogbn-products twin (scale $SCALE, community order)"
  "$BUILD_DIR/datasets/gsparse-data" gen ogbn-products --scale "$SCALE" --order community -o "$community"
fi
# The kernels of the sampled blocks are compiled once into the persistent cache and loaded by every rank.
export GSPARSE_KERNEL_CACHE=${GSPARSE_KERNEL_CACHE:-$root/$BUILD_DIR/kernel-cache}
# shellcheck disable=SC2086
PYTHONPATH="$root/python:$root/$BUILD_DIR/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 \
  "$PYTHON" benchmarks/multigpu.py --graph "$shuffled" --community-graph "$community" --device "$DEVICE" \
  --worlds "$WORLDS" --out-root "$OUT" ${ARGS:-}
