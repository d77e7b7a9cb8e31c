#!/usr/bin/env bash
# A full gsparse-tune run on a tiny twin: exits 0, prints the best schedule, writes valid JSON.
set -euo pipefail
tune=$1
out_json=$(mktemp --suffix=.json)
trap 'rm -f "$out_json"' EXIT
out=$("$tune" --dataset ogbn-products --scale 0.001 --feat 16 --runs 2 --quiet --json "$out_json")
echo "$out"
grep -q "best schedule cpu_spmm{" <<<"$out"
python3 - "$out_json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["best"]["ok"] and r["best"]["median_ms"] > 0, r["best"]
assert r["valid_size"] == len(r["candidates"]), (r["valid_size"], len(r["candidates"]))
assert r["graph"]["nodes"] > 0 and r["graph"]["edges"] > 0
PY
out=$("$tune" --dataset reddit --scale 0.002 --op sddmm --binary dot --feat 33 --mode random --budget 2 --runs 1 --quiet)
grep -q "best schedule cpu_sddmm{" <<<"$out"
