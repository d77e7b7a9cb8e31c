#!/usr/bin/env bash
# Installs gsparse from BUILD_DIR into a temporary prefix, tunes a g-SpMM and a g-SDDMM kernel with
# the installed gsparse-tune, and builds the applications of tests/aot/app and tests/aot/sddmm_app
# through find_package(gsparse) and gsparse_add_kernels; runs them (they print OK when results and
# error codes are right), the user-program application with the example plugin's program emitted by
# gsparse_add_user_kernel (it prints OK when it matches a plain loop), and the argument checks of CUDA
# g-SpMM and g-SDDMM kernels added with DEVICE cuda (they print OK too).
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cmake --install "$build" --prefix "$dir/prefix" >/dev/null
"$dir/prefix/bin/gsparse-tune" --dataset ogbn-products --scale 0.001 --feat 5 --mode random --budget 1 --runs 1 \
    --quiet --cache "$dir/cache.json" --json "$dir/tuned.json" >/dev/null
"$dir/prefix/bin/gsparse-tune" --dataset ogbn-products --scale 0.001 --op sddmm --binary add --lhs-target u \
    --rhs-target e --feat 5 --edge-feat 1 --mode random --budget 1 --runs 1 --quiet --cache "$dir/cache.json" \
    --json "$dir/tuned_sddmm.json" >/dev/null
cmake -S "$here/package_app" -B "$dir/app" -DCMAKE_PREFIX_PATH="$dir/prefix" -DTUNED_JSON="$dir/tuned.json" \
    -DTUNED_SDDMM_JSON="$dir/tuned_sddmm.json" >/dev/null
cmake --build "$dir/app" --parallel 2 >/dev/null
"$dir/app/aot_app"
"$dir/app/sddmm_app"
"$dir/app/user_app"
"$dir/app/cuda/cuda_check_args" | tail -1
"$dir/app/cuda/cuda_sddmm_check_args" | tail -1
