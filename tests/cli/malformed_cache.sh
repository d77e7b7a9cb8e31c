#!/usr/bin/env bash
# gsparse-tune with a tuning cache file that is not JSON: the file is reported and ignored (the tune
# runs and succeeds), then moved aside to <cache>.corrupt, and a valid cache holding the new entry
# takes its place.
tune=$1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
f=$d/tuning.json
echo garbage > "$f"
if ! "$tune" --scale 0.001 --runs 1 --budget 2 --mode random --quiet --cache "$f" >"$d/out" 2>"$d/err"; then
  echo "gsparse-tune failed on a corrupted cache:"; cat "$d/err"; exit 1
fi
grep -q "warning: tuning cache .* is not valid JSON.*ignoring it" "$d/err" || { echo "no warning:"; cat "$d/err"; exit 1; }
[ "$(cat "$f.corrupt")" = garbage ] || { echo "the corrupted file was not kept as $f.corrupt"; exit 1; }
python3 -c "import json,sys; e=json.load(open(sys.argv[1]))['entries']; assert len(e)==1, e" "$f" \
  || { echo "the new cache is not valid:"; cat "$f"; exit 1; }
echo OK
