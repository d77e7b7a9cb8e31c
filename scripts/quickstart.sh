#!/usr/bin/env bash
# Quick start: install what is missing, build, and tune g-SpMM (copy_lhs + sum, F = 32) on the
# built-in default graph (a reddit twin at scale 0.01) for the CPU, printing the best schedule.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh --target gsparse-tune
./build/autotune/gsparse-tune "$@"
