#!/usr/bin/env bash
# gsparse-sweep on the CPU over two tiny twins: every valid point of each twin is measured, each
# kernel is compiled once for both twins, each twin gets its result and records, and a second run
# with --resume measures and compiles nothing again.
set -euo pipefail
sweep=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
args=(--datasets reddit,ogbn-proteins --scale 0.001 --feat 4 --target cpu --runs 1 --quiet --out-dir "$dir")
"$sweep" "${args[@]}" > "$dir/first.txt"
cat "$dir/first.txt"
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
first = json.load(open(f"{d}/spmm-reddit-F4-exhaustive.json"))
second = json.load(open(f"{d}/spmm-ogbn-proteins-F4-exhaustive.json"))
for r in (first, second):
    assert r["mode"] == "exhaustive", r["mode"]
    assert len(r["candidates"]) == r["valid_size"] > 1, (len(r["candidates"]), r["valid_size"])
    assert r["best"]["ok"] and r["best"]["mean_ms"] > 0, r["best"]
    lines = open(f"{d}/spmm-{r['graph']['name'].split()[0]}-F4-exhaustive.records.jsonl").read().splitlines()
    assert len(lines) == r["valid_size"], (len(lines), r["valid_size"])
assert first["kernels_compiled"] == first["valid_size"], first["kernels_compiled"]
assert second["kernels_compiled"] == 0, second["kernels_compiled"]
PY
"$sweep" "${args[@]}" --resume > "$dir/again.txt"
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
r = json.load(open(f"{d}/spmm-reddit-F4-exhaustive.json"))
assert all(c.get("recorded") for c in r["candidates"]), "a resumed sweep measured a point again"
assert r["kernels_compiled"] == 0, r["kernels_compiled"]
PY
echo OK
