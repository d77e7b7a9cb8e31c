#!/usr/bin/env bash
# gsparse-data gen says on stderr what it is doing (generating rows with counts, writing the file),
# keeps its results on stdout, and says nothing on stderr with --quiet; the graph is the same.
set -euo pipefail
data=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$data" gen reddit --scale 0.002 --threads 2 -o "$dir/a.gcsr" > "$dir/out.txt" 2> "$dir/err.txt"
cat "$dir/err.txt"
grep -q "^gsparse-data: generating the reddit twin: 466 nodes, " "$dir/err.txt"
grep -q "^gsparse-data: rows 466 of 466, edges .* (100%)" "$dir/err.txt"
grep -q "^gsparse-data: writing $dir/a.gcsr (" "$dir/err.txt"
grep -q "^written " "$dir/out.txt"
"$data" gen reddit --scale 0.002 --threads 1 --quiet -o "$dir/b.gcsr" > /dev/null 2> "$dir/quiet.txt"
test ! -s "$dir/quiet.txt"
cmp "$dir/a.gcsr" "$dir/b.gcsr"
echo OK
