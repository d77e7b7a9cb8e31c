#!/usr/bin/env bash
# The kernel concurrency tests (tests/concurrency: kernels from many threads on shared and own
# graphs, concurrent compiles, the persistent kernel cache from threads and from two processes)
# under ThreadSanitizer: gsparse and the tests built with -fsanitize=thread in a build folder of
# their own, run with the suppressions of tests/concurrency/tsan.supp (races TSan reports inside
# Halide's runtime, which it cannot see whole). Exits non-zero on a report or a failed test.
# Not part of CI (the build takes a few minutes); docs/reliability.md has the last result.
#
#   scripts/tsan-kernels.sh [--build-dir DIR]      (default build-tsan-kernels)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-tsan-kernels
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) dir=$2; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "tsan-kernels.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
  -DGSPARSE_WITH_TORCH=OFF -DGSPARSE_WITH_PYTHON=OFF >/dev/null
cmake --build "$dir" --target test_concurrency -j"${GSPARSE_JOBS:-$(nproc)}" >/dev/null
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
log=$dir/tsan-kernels.log
set +e
TSAN_OPTIONS="second_deadlock_stack=1 suppressions=$(pwd)/tests/concurrency/tsan.supp" GSPARSE_KERNEL_CACHE=$cache \
  "$dir/tests/test_concurrency" > "$log" 2>&1
rc=$?
set -e
reports=$(grep -c "WARNING: ThreadSanitizer" "$log" || true)
echo "test_concurrency under ThreadSanitizer: exit $rc, $reports report(s); log $log"
grep -E '^\[ +(OK|FAILED|PASSED) ' "$log" || true
[ "$rc" = 0 ] && [ "$reports" = 0 ]
