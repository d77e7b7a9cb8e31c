#!/usr/bin/env bash
# Emits the plugin's weighted_max (weighted_max_plugin.cpp) with gsparse-compile --plugin, under the
# default user schedule and under the plugin's own row_tasks schedule, builds the application of
# docs/examples/user_program_aot/app against each and runs it; the application prints OK when its
# results match a plain loop. The same for weighted_sum_and_mean (two outputs), the per-edge
# gat_score_grad, weighted_max with its rows split into segments and weighted_sum's derived backward
# (--gradients). Then emits weighted_max for CUDA (--target cuda), checks that the library holds
# the program's PTX kernel and, on a machine with a GPU, runs the application on it.
#   run.sh GSPARSE_COMPILE PLUGIN HALIDE_INCLUDE_DIR
set -euo pipefail
compile=$1
plugin=$2
halide_include=$3
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$compile" --plugin "$plugin" --list
for schedule in "" "row_tasks{rows=4, lanes=8}"; do
  rm -rf "$dir/kernels" "$dir/build"
  "$compile" --plugin "$plugin" --program weighted_max --feat 8 ${schedule:+--schedule "$schedule"} \
    --out "$dir/kernels" --name weighted_max
  cmake -S "$here/../user_program_aot/app" -B "$dir/build" -DKERNEL_DIR="$dir/kernels" \
    -DHALIDE_INCLUDE_DIR="$halide_include" > /dev/null
  cmake --build "$dir/build" > /dev/null
  "$dir/build/user_program_app"
done

# Two outputs from one pass, and a per-edge program: each in an application of its own.
rm -rf "$dir/kernels" "$dir/build"
"$compile" --plugin "$plugin" --program weighted_sum_and_mean --feat 4 --out "$dir/kernels" --name weighted_sum_and_mean
"$compile" --plugin "$plugin" --program gat_score_grad --feat 1 --out "$dir/kernels" --name gat_score_grad
cmake -S "$here/../user_program_aot/app" -B "$dir/build" -DKERNEL_DIR="$dir/kernels" \
  -DHALIDE_INCLUDE_DIR="$halide_include" > /dev/null
cmake --build "$dir/build" > /dev/null
"$dir/build/several_outputs_app"
"$dir/build/edge_program_app"

# Rows split into segments across the graph: the app passes the segment table beside the CSR.
rm -rf "$dir/kernels" "$dir/build"
"$compile" --plugin "$plugin" --program weighted_max --feat 8 --schedule "user_default{row_segments=256}" \
  --out "$dir/kernels" --name weighted_max_segments
cmake -S "$here/../user_program_aot/app" -B "$dir/build" -DKERNEL_DIR="$dir/kernels" \
  -DHALIDE_INCLUDE_DIR="$halide_include" > /dev/null
cmake --build "$dir/build" > /dev/null
"$dir/build/segments_app"

# The backward derived from weighted_sum's message, emitted ahead of time and called from an app.
rm -rf "$dir/kernels" "$dir/build"
"$compile" --plugin "$plugin" --program weighted_sum --feat 4 --gradients --out "$dir/kernels" --name weighted_sum
cmake -S "$here/../user_program_aot/app" -B "$dir/build" -DKERNEL_DIR="$dir/kernels" \
  -DHALIDE_INCLUDE_DIR="$halide_include" > /dev/null
cmake --build "$dir/build" > /dev/null
"$dir/build/gradients_app"

rm -rf "$dir/kernels" "$dir/build"
"$compile" --plugin "$plugin" --program weighted_max --feat 8 --target cuda --out "$dir/kernels" --name weighted_max
grep -aq '\.entry _kernel_weighted_max' "$dir/kernels/weighted_max.a" ||
  { echo "the CUDA library holds no PTX kernel of weighted_max" >&2; exit 1; }
echo "CUDA library: PTX kernel present"
if nvidia-smi -L > /dev/null 2>&1; then
  cmake -S "$here/../user_program_aot/app" -B "$dir/build" -DKERNEL_DIR="$dir/kernels" \
    -DHALIDE_INCLUDE_DIR="$halide_include" > /dev/null
  cmake --build "$dir/build" > /dev/null
  echo "CUDA run:"
  "$dir/build/user_program_app"
else
  echo "CUDA run skipped: no GPU on this machine"
fi
