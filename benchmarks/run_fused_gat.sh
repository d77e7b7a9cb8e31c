#!/usr/bin/env bash
# run_fused_gat.sh: forward + backward of one GAT layer (one head, 602 -> 64, no self-loops) on the
# reddit twin at SCALE [0.1], in one command on a GPU host: GAT's attention as one user program
# (docs/examples/fused_gat.py, the example plugin's gat_attention) against gsparse.nn.GATConv and
# PyG's GATConv; median of CUDA-event times and peak memory, written to
# ${OUT:-benchmarks/results}/<date>-<device>-fused-gat/fused_gat.{json,md,png}. The fused layer runs at
# the LANES points of the default CUDA schedule [default,16x4] (fused_gat.py --lanes). Settings as in
# python_bench_env.sh (BUILD_DIR, OUT, SCALE, PYTHON, JOBS, SKIP_BUILD).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
SCALE=${SCALE:-0.1}
# shellcheck source=benchmarks/python_bench_env.sh
source benchmarks/python_bench_env.sh
build_python_module
[ -n "${SKIP_BUILD:-}" ] || cmake --build "$BUILD_DIR" --target gsparse_example_plugin -j"$JOBS"
plugin=$(find "$BUILD_DIR" -name 'libgsparse_example_plugin.so' | head -1)
[ -n "$plugin" ] || { echo "no libgsparse_example_plugin.so in $BUILD_DIR" >&2; exit 1; }
graph=$(twin_file reddit)
device=$(run_python -c "import torch, re; print(re.sub(r'[^a-z0-9]+', '-', torch.cuda.get_device_name().lower()).strip('-'))")
dir="$OUT/$(date -u +%F)-$device-fused-gat"
mkdir -p "$dir"
run_python docs/examples/fused_gat.py "$plugin" --device cuda  # outputs and gradients first
run_python docs/examples/fused_gat.py "$plugin" --bench "$graph" --device cuda --lanes "${LANES:-default,16x4}" \
  --out "$dir/fused_gat.json"
echo "wrote $dir/fused_gat.json"
