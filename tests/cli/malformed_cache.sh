#!/usr/bin/env bash
# gsparse-tune with a tuning cache file that is not JSON: a clear error, no crash.
tune=$1
f=$(mktemp)
trap 'rm -f "$f"' EXIT
echo garbage > "$f"
bash "$(dirname "$0")/expect_failure.sh" "not valid JSON" "$tune" --scale 0.001 --runs 1 --quiet --cache "$f"
