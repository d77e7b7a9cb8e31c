#!/usr/bin/env bash
# Installs gsparse from BUILD_DIR into a temporary prefix, tunes a kernel with the installed
# gsparse-tune, and builds the application of tests/aot/app through find_package(gsparse) and
# gsparse_add_kernels; runs it (it prints OK when results and error codes are right), and the
# argument checks of CUDA kernels added with DEVICE cuda (they print OK too).
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cmake --install "$build" --prefix "$dir/prefix" >/dev/null
"$dir/prefix/bin/gsparse-tune" --dataset ogbn-products --scale 0.001 --feat 5 --mode random --budget 1 --runs 1 \
    --quiet --cache "$dir/cache.json" --json "$dir/tuned.json" >/dev/null
cmake -S "$here/package_app" -B "$dir/app" -DCMAKE_PREFIX_PATH="$dir/prefix" -DTUNED_JSON="$dir/tuned.json" >/dev/null
cmake --build "$dir/app" >/dev/null
"$dir/app/aot_app"
"$dir/app/cuda/cuda_check_args" | tail -1
