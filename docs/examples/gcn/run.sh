#!/usr/bin/env bash
# Builds and runs the GCN example: emits its two kernels with gsparse-compile, configures this
# folder as a separate CMake project against them, runs it on a graph. With --cuda the kernels
# are emitted for CUDA and gcn_forward_cuda runs them on the GPU.
#   docs/examples/gcn/run.sh [--cuda] BUILD_DIR GRAPH.mtx [HALIDE_INCLUDE_DIR]
set -euo pipefail
target=cpu
if [[ ${1:-} == --cuda ]]; then
    target=cuda
    shift
fi
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
graph=$2
halide_include=${3:-/usr/include/halide14}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
compile=$build/autotune/gsparse-compile
"$compile" --target $target --binary mul --reduce sum --feat 16 --edge-feat 1 --out "$work/kernels" --name gcn_aggregate_hidden >/dev/null
"$compile" --target $target --binary mul --reduce sum --feat 7 --edge-feat 1 --out "$work/kernels" --name gcn_aggregate_out >/dev/null
cmake -S "$here" -B "$work/build" -DKERNEL_DIR="$work/kernels" -DHALIDE_INCLUDE_DIR="$halide_include" \
    -DGCN_TARGET=$target >/dev/null
cmake --build "$work/build" >/dev/null
if [[ $target == cuda ]]; then
    "$work/build/gcn_forward_cuda" "$graph"
else
    "$work/build/gcn_forward" "$graph"
fi
