#!/usr/bin/env bash
# Emits six g-SpMM kernels for CUDA with gsparse-compile --target cuda (plain rows, no shared tile,
# row segments with mapped edge ids, balanced rows, vector loads, rows in the locality order), checks the emitted objects (PTX in the
# kernels, the context / stream / error hooks in the shared runtime), and builds the fresh
# application project in cuda_app/ against them and CUDA::cuda_driver.
#   run_aot_cuda_app.sh COMPILE HALIDE_INCLUDE_DIR check   runs check_args (no GPU needed)
#   run_aot_cuda_app.sh COMPILE HALIDE_INCLUDE_DIR gpu     also runs gpu_app (skips without a GPU)
set -euo pipefail
compile=$1
halide_include=$2
mode=${3:-check}
here=$(cd "$(dirname "$0")" && pwd)
if [[ $mode == gpu ]] && ! ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
    echo "[  SKIPPED ] no CUDA device"
    exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
k=$dir/kernels
"$compile" --target cuda --binary copy_lhs --reduce sum --feat 32 --out "$k" --name agg_sum >/dev/null
"$compile" --target cuda --binary copy_lhs --reduce sum --feat 16 --out "$k" --name agg_sum16 \
    --schedule "gpu_spmm{kMTile=8, kNTile=16, kNRegTile=1, kNnzTile=16, smemColIdx=0, kRowSplit=0, rowBalance=0}" >/dev/null
"$compile" --target cuda --binary mul --reduce max --feat 8 --edge-feat 1 --mapped-edge-ids --out "$k" --name agg_max \
    --schedule "gpu_spmm{kMTile=4, kNTile=8, kNRegTile=1, kNnzTile=16, smemColIdx=0, kRowSplit=32, rowBalance=0}" >/dev/null
"$compile" --target cuda --binary mul --reduce mean --feat 64 --out "$k" --name agg_mean \
    --schedule "gpu_spmm{kMTile=2, kNTile=32, kNRegTile=2, kNnzTile=64, smemColIdx=1, kRowSplit=0, rowBalance=1}" >/dev/null
"$compile" --target cuda --binary copy_lhs --reduce sum --feat 32 --out "$k" --name agg_vec \
    --schedule "gpu_spmm{kMTile=8, kNTile=8, kNRegTile=1, kNnzTile=32, smemColIdx=1, kRowSplit=0, rowBalance=0, kVecWidth=4}" >/dev/null
"$compile" --target cuda --binary copy_lhs --reduce sum --feat 32 --out "$k" --name agg_local \
    --schedule "gpu_spmm{kMTile=4, kNTile=32, kNRegTile=1, kNnzTile=32, smemColIdx=1, kRowSplit=0, rowBalance=2}" >/dev/null

fail() { echo "FAILED: $*"; exit 1; }
# Symbol tables go to files first: grep -q closing a pipe early would fail the pipeline (pipefail).
symbols() { nm "$1" > "$dir/symbols.txt"; }
for name in agg_sum agg_sum16 agg_max agg_mean agg_local; do
    # Device code is PTX for compute capability 8.0 inside the kernel's object; the runtime is not.
    grep -aq '\.target sm_80' "$k/${name}_halide.a" || fail "no sm_80 PTX in ${name}_halide.a"
    symbols "$k/${name}_halide.a"
    grep -q ' U halide_cuda_run$' "$dir/symbols.txt" || fail "${name}_halide.a does not launch through halide_cuda_run"
    grep -q ' [TW] halide_cuda_run$' "$dir/symbols.txt" && fail "${name}_halide.a carries its own runtime"
done
symbols "$k/gsparse_cuda_runtime.a"
for sym in halide_cuda_run halide_set_cuda_acquire_context halide_set_cuda_release_context halide_set_cuda_get_stream \
           halide_set_error_handler halide_cuda_wrap_device_ptr; do
    grep -q " [TW] $sym\$" "$dir/symbols.txt" || fail "gsparse_cuda_runtime.a lacks $sym"
done
grep -q 'detail::install_hooks' "$k/gsparse_cuda.h" || fail "gsparse_cuda.h installs no hooks"
grep -q 'CudaGraph::kLocalityOrder' "$k/agg_local.h" || fail "agg_local.h does not take rows in the locality order"
grep -q 'locality_order' "$k/gsparse_locality_order.h" || fail "gsparse_locality_order.h was not written"

cmake -S "$here/cuda_app" -B "$dir/build" -DKERNEL_DIR="$k" -DHALIDE_INCLUDE_DIR="$halide_include" >/dev/null
cmake --build "$dir/build" > "$dir/build.log" || { cat "$dir/build.log"; fail "building cuda_app failed"; }
grep -i warning "$dir/build.log" && fail "the emitted headers compile with warnings"
# The application's objects reach the Halide runtime's hook setters, and gpu_app links the driver.
symbols "$dir/build/check_args"
grep -q ' [TW] halide_set_cuda_get_stream$' "$dir/symbols.txt" || fail "check_args does not link the hooks"
readelf -d "$dir/build/gpu_app" > "$dir/dynamic.txt"
grep -q 'libcuda.so' "$dir/dynamic.txt" || fail "gpu_app does not link libcuda"
echo "emitted objects and links: ok"
"$dir/build/check_args"
if [[ $mode == gpu ]]; then
    "$dir/build/gpu_app"
fi
