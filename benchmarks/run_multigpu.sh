#!/usr/bin/env bash
# run_multigpu.sh: the several-GPU benchmark (gsparse.distributed on NCCL) on a host with 2 GPUs, in one command:
#   1. builds the gsparse Python module and gsparse-data in $BUILD_DIR (configuring it when it has no cache),
#   2. writes the ogbn-products twin as .gcsr files with gsparse-data (once): shuffled ids, and community order,
#   3. runs multigpu.py (1 GPU against $WORLDS GPUs: mini-batch GraphSAGE, partitioned GCN, a feature matrix
#      larger than one GPU), which writes summary.json and multigpu.md to ${OUT:-benchmarks/results}/<date>-<device>-multigpu/.
# Settings: BUILD_DIR [build-gpu], OUT [benchmarks/results], SCALE [1.0], PYTHON [python3], WORLDS [1,2],
# GRAPH_DIR [$BUILD_DIR/bench-graphs], JOBS [nproc], ARGS (extra multigpu.py arguments, e.g. "--cases minibatch").
# SKIP_BUILD=1 uses the module and gsparse-data already built in $BUILD_DIR.
# DEVICE=cpu checks the whole pipeline with gloo on CPU processes instead (use a small SCALE, e.g. 0.003).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=benchmarks/python_bench_env.sh
source benchmarks/python_bench_env.sh
WORLDS=${WORLDS:-1,2}
DEVICE=${DEVICE:-cuda}
build_python_module
shuffled=$(twin_file ogbn-products)
community=$(twin_file ogbn-products community)
# The kernels of the sampled blocks are compiled once into the persistent cache and loaded by every rank.
export GSPARSE_KERNEL_CACHE=${GSPARSE_KERNEL_CACHE:-$root/$BUILD_DIR/kernel-cache}
# shellcheck disable=SC2086
run_python benchmarks/multigpu.py --graph "$shuffled" --community-graph "$community" --device "$DEVICE" \
  --worlds "$WORLDS" --out-root "$OUT" ${ARGS:-}
