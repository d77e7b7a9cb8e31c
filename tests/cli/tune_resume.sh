#!/usr/bin/env bash
# gsparse-tune --records writes each measurement as it is taken (an interrupted tune keeps what it
# measured), and --resume reuses those times: an exhaustive sweep after an interruption measures only
# the points the records lack, and reports the others with their recorded times.
set -euo pipefail
tune=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
rec=$dir/records.jsonl
args=(--dataset ogbn-products --scale 0.001 --feat 16 --quiet --cache "$dir/cache.json" --no-cache)

# 1. An exhaustive sweep with many runs per point, interrupted after a few seconds: the points
#    measured so far are already in the records file.
set +e
timeout -s INT 6 "$tune" "${args[@]}" --mode exhaustive --runs 3000 --records "$rec" > "$dir/interrupted.txt" 2>&1
rc=$?
set -e
[ $rc -ne 0 ] || { echo "the sweep finished within 6 s: nothing was interrupted"; cat "$dir/interrupted.txt"; exit 1; }
kept=$(wc -l < "$rec")
echo "interrupted (exit $rc) with $kept records"
[ "$kept" -ge 1 ] || { echo "no record written before the interruption"; exit 1; }

# 2. Resumed: the recorded points are not measured again.
out=$("$tune" "${args[@]}" --mode exhaustive --runs 2 --records "$rec" --resume --json "$dir/resumed.json")
echo "$out"
resumed=$(sed -n 's/^resume *\([0-9][0-9]*\) of .*/\1/p' <<<"$out")
[ -n "$resumed" ] || { echo "no resume line"; exit 1; }
python3 - "$rec" "$dir/resumed.json" "$kept" "$resumed" <<'PY'
import json, sys
records = [json.loads(l) for l in open(sys.argv[1])]
r = json.load(open(sys.argv[2]))
kept, resumed = int(sys.argv[3]), int(sys.argv[4])
first = records[:kept]
key = lambda params: json.dumps(params, sort_keys=True)
recorded_time = {key(x["schedule"]["params"] if "params" in x["schedule"] else x["schedule"]): x["time_ms"] for x in first}
cands = r["candidates"] + [r["expert_default"]]
reused = [c for c in cands if c.get("recorded")]
assert resumed >= 1 and resumed <= kept, (resumed, kept)
assert len({key(c["params"]) for c in reused}) == resumed, (len(reused), resumed)
for c in reused:   # the recorded time, not a new one; no timed runs
    assert c["run_ms"] == [] and c["ok"], c
    assert abs(c["mean_ms"] - recorded_time[key(c["params"])]) < 1e-9, c
fresh = [c for c in r["candidates"] if c["ok"] and not c.get("recorded")]
assert len(fresh) + resumed >= r["valid_size"] - 1, (len(fresh), resumed, r["valid_size"])
# Only the fresh measurements were appended.
assert len(records) - kept == len({key(c["params"]) for c in fresh} | ({key(r["expert_default"]["params"])} if not r["expert_default"].get("recorded") else set())), (len(records), kept, len(fresh))
print("OK")
PY
