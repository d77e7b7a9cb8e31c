#!/usr/bin/env bash
# expect_failure.sh PATTERN COMMAND...: passes when COMMAND exits non-zero and its output contains
# PATTERN (a grep -E pattern), fails otherwise.
pattern=$1
shift
out=$("$@" 2>&1)
rc=$?
if [ $rc -eq 0 ]; then
  echo "expected a failure, command succeeded: $*"; echo "$out"; exit 1
fi
if [ $rc -ge 128 ]; then
  echo "command crashed (exit $rc): $*"; echo "$out"; exit 1
fi
if ! grep -Eq -- "$pattern" <<<"$out"; then
  echo "output lacks /$pattern/: $*"; echo "$out"; exit 1
fi
echo "ok (exit $rc): $(head -c 300 <<<"$out")"
