#!/usr/bin/env bash
# Emits three g-SDDMM kernels for CUDA with gsparse-compile --op sddmm --target cuda (u dot v with
# vector loads, u add e with a broadcast edge weight, copy of v features on the largest edge tile),
# checks the emitted objects (PTX in the kernels, no runtime of their own) and builds the fresh
# application project in cuda_sddmm_app/ against them and CUDA::cuda_driver.
#   run_aot_cuda_sddmm_app.sh COMPILE HALIDE_INCLUDE_DIR check   runs check_args (no GPU needed)
#   run_aot_cuda_sddmm_app.sh COMPILE HALIDE_INCLUDE_DIR gpu     also runs gpu_app (skips without a GPU)
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
"$compile" --op sddmm --target cuda --binary dot --lhs-target u --rhs-target v --feat 64 --out "$k" --name score \
    --schedule "gpu_sddmm{kMTile=32, kLaneWidth=8, kVecWidth=4}" >/dev/null
"$compile" --op sddmm --target cuda --binary add --lhs-target u --rhs-target e --feat 8 --rhs-feat 1 --out "$k" \
    --name u_add_e >/dev/null
"$compile" --op sddmm --target cuda --binary copy_lhs --lhs-target v --feat 3 --out "$k" --name v_copy \
    --schedule "gpu_sddmm{kMTile=1024, kLaneWidth=1, kVecWidth=1}" >/dev/null

fail() { echo "FAILED: $*"; exit 1; }
for name in score u_add_e v_copy; do
    grep -aq '\.target sm_80' "$k/${name}_halide.a" || fail "no sm_80 PTX in ${name}_halide.a"
    nm "$k/${name}_halide.a" > "$dir/symbols.txt"
    grep -q ' U halide_cuda_run$' "$dir/symbols.txt" || fail "${name}_halide.a does not launch through halide_cuda_run"
    grep -q ' [TW] halide_cuda_run$' "$dir/symbols.txt" && fail "${name}_halide.a carries its own runtime"
done
# The vector loads of score need 16-byte aligned operands: its entry point checks them.
grep -q 'kBadAlignment' "$k/score.h" || fail "score.h does not check operand alignment"
grep -q 'class CudaCoo' "$k/gsparse_cuda.h" || fail "gsparse_cuda.h has no CudaCoo"

cmake -S "$here/cuda_sddmm_app" -B "$dir/build" -DKERNEL_DIR="$k" -DHALIDE_INCLUDE_DIR="$halide_include" >/dev/null
cmake --build "$dir/build" > "$dir/build.log" || { cat "$dir/build.log"; fail "building cuda_sddmm_app failed"; }
grep -i warning "$dir/build.log" && fail "the emitted headers compile with warnings"
readelf -d "$dir/build/gpu_app" > "$dir/dynamic.txt"
grep -q 'libcuda.so' "$dir/dynamic.txt" || fail "gpu_app does not link libcuda"
echo "emitted objects and links: ok"
"$dir/build/check_args"
if [[ $mode == gpu ]]; then
    "$dir/build/gpu_app"
fi
