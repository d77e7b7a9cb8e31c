#!/usr/bin/env bash
# Emits three g-SDDMM kernels with gsparse-compile --op sddmm (u dot v, u add e with a broadcast edge
# weight, e mul v), builds the fresh application project in sddmm_app/ against them with CMake, and
# runs it (it prints OK when results and error codes are right).
set -euo pipefail
compile=$1
halide_include=$2
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
k=$dir/kernels
"$compile" --op sddmm --binary dot --lhs-target u --rhs-target v --feat 12 --out "$k" --name score \
    --schedule "cpu_sddmm{edges_per_task=64, vector_width=8}" >/dev/null
"$compile" --op sddmm --binary add --lhs-target u --rhs-target e --feat 5 --rhs-feat 1 --out "$k" --name u_add_e >/dev/null
"$compile" --op sddmm --binary mul --lhs-target e --rhs-target v --feat 8 --out "$k" --name e_mul_v >/dev/null
cmake -S "$here/sddmm_app" -B "$dir/build" -DKERNEL_DIR="$k" -DHALIDE_INCLUDE_DIR="$halide_include" >/dev/null
cmake --build "$dir/build" > "$dir/build.log" || { cat "$dir/build.log"; echo "FAILED: building sddmm_app"; exit 1; }
if grep -i warning "$dir/build.log"; then echo "FAILED: the emitted headers compile with warnings"; exit 1; fi
"$dir/build/sddmm_app"
