#!/usr/bin/env bash
# gsparse-data and the zoo end to end: every family generates a valid file, the same bytes twice
# under one seed (whatever the thread count) and other bytes under another; stats --json; zoo list
# and zoo gen from a manifest (names, --split, --max-edges, --skip-existing); the twins unchanged.
set -euo pipefail
# (no `cmd | grep -q`: grep stops reading early and pipefail would report the writer's SIGPIPE)
data=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
gen() { "$data" gen "$@" --quiet > /dev/null; }
while read -r family params; do
  # shellcheck disable=SC2086
  gen "$family" $params --seed 3 --threads 1 -o "$dir/$family.a.gcsr"
  # shellcheck disable=SC2086
  gen "$family" $params --seed 3 --threads 2 -o "$dir/$family.b.gcsr"
  # shellcheck disable=SC2086
  gen "$family" $params --seed 4 -o "$dir/$family.c.gcsr"
  cmp "$dir/$family.a.gcsr" "$dir/$family.b.gcsr"
  if cmp -s "$dir/$family.a.gcsr" "$dir/$family.c.gcsr"; then echo "$family: seeds 3 and 4 gave the same graph"; exit 1; fi
  "$data" stats "$dir/$family.a.gcsr" > /dev/null
done <<'LIST'
chung-lu --nodes 2000 --edges 20000 --in-exponent 2.1 --out-exponent 2.5
rmat --scale 10 --edge-factor 8
lattice --nodes 3000 --degree 2.8
knn --nodes 1000 --k 6 --dim 2
erdos-renyi --nodes 2000 --edges 10000
bipartite --dst-nodes 500 --src-nodes 3000 --edges 10000
batch --graphs 100
LIST
grep -q '"num_dst": 500, "num_src": 3000, "edges": 10000' <<< "$("$data" stats --json "$dir/bipartite.a.gcsr")"
grep -q "^max         6$" <<< "$("$data" stats "$dir/knn.a.gcsr")"
grep -q "intra 0," <<< "$("$data" gen reddit --scale 0.002 --intra 0 --quiet -o "$dir/reddit.gcsr")"
grep -q "^chung-lu: " <<< "$("$data" list)"
grep -q " heldout " <<< "$("$data" zoo list)"
if grep -q " heldout " <<< "$("$data" zoo list --split train)"; then echo "--split train listed held-out members"; exit 1; fi
cat > "$dir/zoo.txt" <<'ZOO'
# a small manifest
tiny-er    train    erdos-renyi seed=5 nodes=1000 edges=5000
tiny-knn   heldout  knn         seed=6 nodes=500 k=4
tiny-big   heldout  lattice     seed=7 nodes=100000 degree=3
ZOO
grep -q "^tiny-knn  *heldout  *knn " <<< "$("$data" zoo list --manifest "$dir/zoo.txt")"
"$data" zoo gen --manifest "$dir/zoo.txt" --split heldout --max-edges 10000 --quiet -o "$dir/out" > "$dir/table.md"
test -f "$dir/out/tiny-knn.gcsr" && test ! -e "$dir/out/tiny-er.gcsr" && test ! -e "$dir/out/tiny-big.gcsr"
grep -q "^| tiny-knn | heldout | knn | 500 | 500 | 2000 |" "$dir/table.md"
"$data" zoo gen --manifest "$dir/zoo.txt" tiny-er --format mtx --quiet -o "$dir/out" > /dev/null
test -f "$dir/out/tiny-er.mtx"
touch -d '2000-01-01' "$dir/out/tiny-knn.gcsr"
"$data" zoo gen --manifest "$dir/zoo.txt" tiny-knn --skip-existing --quiet -o "$dir/out" > /dev/null
test "$(stat -c %Y "$dir/out/tiny-knn.gcsr")" -lt 1000000000
echo "7 families, zoo list and zoo gen checked"
echo OK
