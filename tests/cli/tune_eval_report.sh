#!/usr/bin/env bash
# The autotuner evaluation's report on a CPU tune of a tiny twin: genetic, random (equal trials) and
# exhaustive runs of one problem make one case with every column filled, and the summary lines.
set -euo pipefail
tune=$1
report=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
common=(--dataset reddit --scale 0.002 --feat 8 --runs 2 --quiet --no-cache --cache "$dir/cache.json"
        --records "$dir/records.jsonl")
"$tune" "${common[@]}" --mode genetic --json "$dir/genetic.json" > /dev/null
n=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['candidates']))" "$dir/genetic.json")
"$tune" "${common[@]}" --mode random --budget "$n" --json "$dir/random.json" > /dev/null
"$tune" "${common[@]}" --mode exhaustive --json "$dir/exhaustive.json" > /dev/null
python3 "$report" "$dir"/genetic.json "$dir"/random.json "$dir"/exhaustive.json "$dir/cache.json" \
  --records "$dir/records.jsonl" --out-dir "$dir/out"
grep -q "genetic search within 5% of the exhaustive best: [01] of 1 cases" "$dir/out/tune_eval.md"
grep -q "genetic tuning wall time" "$dir/out/tune_eval.md"
python3 - "$dir/out/tune_eval.json" "$n" <<'PY'
import json, sys
cases = json.load(open(sys.argv[1]))["cases"]
assert len(cases) == 1, cases
c = cases[0]
assert c["feat"] == "8" and c["valid_points"] > 0, c
for k in ("exhaustive_ms", "genetic_ms", "random_ms", "default_ms", "genetic_wall_s"):
    assert c[k] is not None and c[k] > 0, (k, c)
assert c["genetic_trials"] == c["random_trials"] == int(sys.argv[2]), c
assert 0.5 < c["genetic_vs_exhaustive"] < 2 and 0.5 < c["random_vs_exhaustive"] < 3, c
PY
test -s "$dir/out/records.jsonl"
# The same case with the sweep's result gzip-compressed (as results folders keep them).
gzip -c "$dir/exhaustive.json" > "$dir/exhaustive.json.gz"
python3 "$report" "$dir"/genetic.json "$dir"/random.json "$dir/exhaustive.json.gz" --out-dir "$dir/outgz" > /dev/null
cmp <(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['cases'])" "$dir/out/tune_eval.json") \
    <(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['cases'])" "$dir/outgz/tune_eval.json")

# An incomplete sweep (gsparse-sweep --time-limit) gives no exhaustive best.
python3 - "$dir/exhaustive.json" "$dir/partial.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["complete"], r["unmeasured_points"] = False, 3
json.dump(r, open(sys.argv[2], "w"))
PY
python3 "$report" "$dir"/genetic.json "$dir"/random.json "$dir/partial.json" --out-dir "$dir/outpartial" 2> "$dir/partial.err" > /dev/null
grep -q "incomplete sweep" "$dir/partial.err"
python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['cases'][0]; assert c['exhaustive_ms'] is None and c['genetic_vs_exhaustive'] is None, c" \
  "$dir/outpartial/tune_eval.json"

# A screened sweep (gsparse-sweep --screen) is judged against, and marked as such in the table.
python3 - "$dir/exhaustive.json" "$dir/screened.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["screened_points"] = 2
r["screen"] = {"records": "/x/sweep-F4.jsonl", "feat": 4, "factor": 3, "recorded_points": 9, "best_ms": 0.1}
json.dump(r, open(sys.argv[2], "w"))
PY
python3 "$report" "$dir"/genetic.json "$dir"/random.json "$dir/screened.json" --out-dir "$dir/outscreened" > /dev/null
grep -q "| [0-9.]* † |" "$dir/outscreened/tune_eval.md"
grep -q "best of a screened sweep, [0-9]* of [0-9]* points measured; left out: the points slower than 3x the best at F = 4 (sweep-F4.jsonl)" \
  "$dir/outscreened/tune_eval.md"
python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['cases'][0]; assert c['screened_points'] == 2 and c['exhaustive_ms'] > 0, c" \
  "$dir/outscreened/tune_eval.json"
grep -q "screened sweep" "$dir/out/tune_eval.md" && { echo "an unscreened sweep was marked screened"; exit 1; }

# --replay: a search over the sweep's recorded times measures nothing and reports exactly those times.
replay=(--dataset reddit --scale 0.002 --feat 8 --quiet --replay "$dir/exhaustive.json")
"$tune" "${replay[@]}" --mode genetic --seed 3 --json "$dir/replay.json" > /dev/null
python3 - "$dir/exhaustive.json" "$dir/replay.json" <<'PY'
import json, sys
ex, rp = (json.load(open(p)) for p in sys.argv[1:])
key = lambda c: json.dumps(c["params"], sort_keys=True)
recorded = {key(c): c["mean_ms"] for c in ex["candidates"]}
assert rp["candidates"], rp
for c in rp["candidates"] + [rp["best"], rp["expert_default"]]:
    assert c["ok"] and recorded[key(c)] == c["mean_ms"], (c["params"], c["mean_ms"], recorded.get(key(c)))
assert rp["best"]["mean_ms"] >= min(recorded.values())
PY
if out=$("$tune" --dataset reddit --scale 0.002 --feat 16 --quiet --replay "$dir/exhaustive.json" 2>&1); then
  echo "a replay of another problem was accepted"; exit 1
fi
grep -q "not this problem" <<<"$out"
if "$tune" "${replay[@]}" --records "$dir/r2.jsonl" > /dev/null 2>&1; then echo "--replay with --records was accepted"; exit 1; fi
echo OK
