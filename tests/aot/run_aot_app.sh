#!/usr/bin/env bash
# Emits two kernels with gsparse-compile, builds the fresh application project in app/ against
# them with CMake, and runs it (it prints OK when results and error codes are right).
set -euo pipefail
compile=$1
halide_include=$2
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$compile" --binary mul --reduce max --feat 8 --edge-feat 1 --mapped-edge-ids --out "$dir/kernels" --name agg_max
"$compile" --binary copy_lhs --reduce sum --feat 5 --out "$dir/kernels" --name agg_sum
"$compile" --binary copy_lhs --reduce sum --feat 8 --out "$dir/kernels" --name agg_sum8
cmake -S "$here/app" -B "$dir/build" -DKERNEL_DIR="$dir/kernels" -DHALIDE_INCLUDE_DIR="$halide_include" >/dev/null
cmake --build "$dir/build" >/dev/null
"$dir/build/aot_app"
