#!/usr/bin/env bash
# Installs what is missing, builds everything and runs all tests through ctest, then the sanitizer
# build's tests and fuzz-corpus replays (scripts/sanitize.sh, about 2 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
(cd build && ctest --output-on-failure -j"${GSPARSE_JOBS:-$(nproc)}" --timeout 900)
bash scripts/sanitize.sh
