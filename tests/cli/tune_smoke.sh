#!/usr/bin/env bash
# Full gsparse-tune runs on tiny twins: exits 0, prints the best schedule, writes valid JSON; a
# repeated tune is answered from the tuning cache; --no-cache tunes afresh.
set -euo pipefail
tune=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cache=$dir/cache.json

out=$("$tune" --dataset ogbn-products --scale 0.001 --feat 16 --runs 2 --quiet --mode exhaustive \
      --cache "$cache" --json "$dir/a.json")
echo "$out"
grep -q "best schedule cpu_spmm{" <<<"$out"
python3 - "$dir/a.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["best"]["ok"] and r["best"]["mean_ms"] > 0, r["best"]
assert r["valid_size"] == len(r["candidates"]), (r["valid_size"], len(r["candidates"]))
assert r["graph"]["nodes"] > 0 and r["graph"]["edges"] > 0
assert not r["from_cache"]
PY

# The same problem again: from the cache, with the same schedule.
again=$("$tune" --dataset ogbn-products --scale 0.001 --feat 16 --runs 2 --quiet --cache "$cache" --json "$dir/b.json")
grep -q "from the tuning cache" <<<"$again"
python3 - "$dir/a.json" "$dir/b.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert b["from_cache"] and b["best"]["params"] == a["best"]["params"], (a["best"], b["best"])
PY

# Genetic search afresh, and random sampling for g-SDDMM.
fresh=$("$tune" --dataset ogbn-products --scale 0.001 --feat 16 --runs 2 --quiet --cache "$cache" --no-cache \
        --json "$dir/c.json")
grep -q "search        genetic" <<<"$fresh"
# --model auto (the default) finds no shipped model for the CPU schedule and says so; the result names none.
grep -q "model         none: no cost model ships for cpu_spmm" <<<"$fresh"
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["model"] is None, r["model"]' "$dir/c.json"
# --model none: no model line at all.
none=$("$tune" --dataset ogbn-products --scale 0.001 --feat 16 --runs 1 --quiet --cache "$cache" --no-cache --model none)
if grep -q "^model" <<<"$none"; then echo "--model none printed a model line"; exit 1; fi
out=$("$tune" --dataset reddit --scale 0.002 --op sddmm --binary dot --feat 33 --mode random --budget 2 --runs 1 \
      --quiet --cache "$cache" --emit-lib "$dir/sddmm_lib" --emit-name tuned_sddmm)
grep -q "best schedule cpu_sddmm{" <<<"$out"
# ... emitted as a g-SDDMM library whose entry point takes COO arrays.
grep -q "emitted .*tuned_sddmm" <<<"$out"
grep -q "const int32_t \*src_idx" "$dir/sddmm_lib/tuned_sddmm.h"
test -s "$dir/sddmm_lib/tuned_sddmm_halide.a"

# The best kernel as a library.
"$tune" --dataset ogbn-products --scale 0.001 --feat 16 --runs 1 --quiet --cache "$cache" \
    --emit-lib "$dir/lib" --emit-name tuned_kernel | grep -q "emitted"
for f in tuned_kernel.h tuned_kernel_halide.h tuned_kernel_halide.a; do test -s "$dir/lib/$f"; done
