#!/usr/bin/env bash
# gsparse-compile writes gpu_spmm's register limit into the PTX of an emitted CUDA kernel: u_mul_e + sum on
# whole rows with scalar loads carries `.maxnreg 32`; copy_lhs with the same point carries none.
set -euo pipefail
compile=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
point="gpu_spmm{kMTile=64, kNTile=1, kNRegTile=1, kNnzLanes=2, kNnzUnroll=2, kRowSplit=0, kVecWidth=1, rowBalance=0}"
"$compile" --op spmm --binary mul --reduce sum --feat 1 --target cuda --schedule "$point" --out "$out/mul" --name k_mul > /dev/null
"$compile" --op spmm --binary copy_lhs --reduce sum --feat 1 --target cuda --schedule "$point" --out "$out/copy" --name k_copy > /dev/null
n_mul=$(grep -a -c ".maxnreg 32" "$out/mul/k_mul_halide.a" || true)
n_copy=$(grep -a -c ".maxnreg" "$out/copy/k_copy_halide.a" || true)
[ "$n_mul" -ge 1 ] || { echo "u_mul_e kernel without .maxnreg 32"; exit 1; }
[ "$n_copy" -eq 0 ] || { echo "copy_lhs kernel with a register limit"; exit 1; }
echo OK
