#!/usr/bin/env bash
# Configures (once) and builds gsparse in build/ (Release). Extra arguments go to cmake --build.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${GSPARSE_JOBS:-$(nproc)}
# (Again when an earlier configure stopped before writing the build system.)
if [ ! -f build/CMakeCache.txt ] || { [ ! -f build/Makefile ] && [ ! -f build/build.ninja ]; }; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build build -j"$jobs" "$@"
