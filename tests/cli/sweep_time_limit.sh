#!/usr/bin/env bash
# gsparse-sweep --time-limit: a sweep past its limit stops between chunks with its results marked
# incomplete (and refused by --replay); --resume then measures only the rest and completes it.
set -euo pipefail
sweep=$1
tune=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
args=(--datasets reddit,ogbn-proteins --scale 0.001 --feat 4 --target cpu --runs 1 --quiet --out-dir "$dir")
# A limit already passed when the first chunk would start: only the expert defaults are measured.
"$sweep" "${args[@]}" --time-limit 0.000001 > "$dir/stopped.txt"
cat "$dir/stopped.txt"
grep -q "stopped at the time limit" "$dir/stopped.txt"
grep -q "run again with --resume" "$dir/stopped.txt"
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
for twin in ("reddit", "ogbn-proteins"):
    r = json.load(open(f"{d}/spmm-{twin}-F4-exhaustive.json"))
    assert r["complete"] is False, r["complete"]
    assert r["valid_size"] > 2 and r["unmeasured_points"] == r["valid_size"] - 1, (r["unmeasured_points"], r["valid_size"])
    assert r["candidates"] == [] and r["expert_default"]["ok"], r["candidates"]
    lines = open(f"{d}/spmm-{twin}-F4-exhaustive.records.jsonl").read().splitlines()
    assert len(lines) == 1, len(lines)  # the default's record
PY
if out=$("$tune" --dataset reddit --scale 0.001 --feat 4 --quiet --replay "$dir/spmm-reddit-F4-exhaustive.json" 2>&1); then
  echo "a replay of an incomplete sweep was accepted"; exit 1
fi
grep -q "stopped before its end" <<<"$out"
"$sweep" "${args[@]}" --resume > "$dir/resumed.txt"
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
for twin in ("reddit", "ogbn-proteins"):
    r = json.load(open(f"{d}/spmm-{twin}-F4-exhaustive.json"))
    assert r["complete"] is True and r["unmeasured_points"] == 0, (r["complete"], r["unmeasured_points"])
    assert len(r["candidates"]) == r["valid_size"], (len(r["candidates"]), r["valid_size"])
    assert sum(bool(c.get("recorded")) for c in r["candidates"]) == 1  # the default, from the first run
    lines = open(f"{d}/spmm-{twin}-F4-exhaustive.records.jsonl").read().splitlines()
    assert len(lines) == r["valid_size"], (len(lines), r["valid_size"])
PY
if "$sweep" "${args[@]}" --time-limit -1 > /dev/null 2>&1; then echo "a negative time limit was accepted"; exit 1; fi
echo OK
