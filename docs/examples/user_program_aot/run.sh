#!/usr/bin/env bash
# Emits the user program (emit.cpp) as a static library, builds the application in app/ against it
# with CMake and runs it; the application prints OK when its results match a plain loop.
#   run.sh EMITTER HALIDE_INCLUDE_DIR
set -euo pipefail
emit=$1
halide_include=$2
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$emit" "$dir/kernels"
cmake -S "$here/app" -B "$dir/build" -DKERNEL_DIR="$dir/kernels" -DHALIDE_INCLUDE_DIR="$halide_include" >/dev/null
cmake --build "$dir/build" >/dev/null
"$dir/build/user_program_app"
