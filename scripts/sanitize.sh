#!/usr/bin/env bash
# The sanitizer build (tests/sanitize): graph formats, loaders, conversions, validation, the tuner's
# genetic search, records and the tuning cache with their tests, and a replay of the fuzz corpora,
# under AddressSanitizer + UndefinedBehaviorSanitizer; --tsan: under ThreadSanitizer instead.
# Configures and builds in build-sanitize/ (build-tsan/ with --tsan) or --build-dir DIR, then runs
# ctest there. Needs only the compiler and packages of scripts/install-deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
san="address,undefined"
dir=build-sanitize
while [ $# -gt 0 ]; do
  case "$1" in
    --tsan) san=thread; dir=build-tsan ;;
    --build-dir) dir=$2; shift ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "sanitize.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
jobs=${GSPARSE_JOBS:-$(nproc)}
start=$(date +%s)
if [ ! -f "$dir/CMakeCache.txt" ] || [ ! -f "$dir/Makefile" ]; then
  cmake -S tests/sanitize -B "$dir" -DGSPARSE_SANITIZE="$san" >/dev/null
fi
cmake --build "$dir" -j"$jobs" >/dev/null
built=$(date +%s)
# The fuzz corpora need no replay under ThreadSanitizer (they are single-threaded).
filter=()
[ "$san" = thread ] && filter=(-R '^sanitize\.')
ctest --test-dir "$dir" --output-on-failure -j"$jobs" "${filter[@]}"
echo "sanitize.sh ($san): built in $((built - start)) s, tests ran in $(( $(date +%s) - built )) s"
