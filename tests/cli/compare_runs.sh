#!/usr/bin/env bash
# benchmarks/compare_spmm_runs.py on two hand-written gsparse-bench-spmm runs: the cases both runs hold,
# their speed-up, the zoo split of each graph, and a clear error when the runs share no case.
# Prints OK on success.   compare_runs.sh SOURCE_DIR [PYTHON]
set -euo pipefail
src=$1
py=${2:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
run() {  # file, then "graph op F ms" cases
  local file=$1; shift
  local recs=""
  for c in "$@"; do
    read -r g op f ms <<< "$c"
    recs+="${recs:+,}{\"graph\": \"$g\", \"op\": \"$op\", \"F\": $f, \"gsparse_median_ms\": $ms, \"cusparse_best_median_ms\": 0.1,
      \"device\": \"TestGPU\", \"date\": \"2026-01-01\", \"results\": [{\"competitor\": \"gsparse\", \"ok\": true,
      \"resolved_schedule\": \"gpu_spmm{kMTile=8}\"}]}"
  done
  echo "{\"records\": [$recs]}" > "$file"
}
run "$tmp/a.json" "lat-h-11m mul:sum 1 0.15" "lat-8m mul:sum 1 0.2" "cora copy_lhs:sum 4 0.05"
run "$tmp/b.json" "lat-h-11m mul:sum 1 0.1" "lat-8m mul:sum 1 0.2" "pubmed copy_lhs:sum 4 0.05"
"$py" "$src/benchmarks/compare_spmm_runs.py" "$tmp/a.json" "$tmp/b.json" --labels off,on --out "$tmp/out" > /dev/null
"$py" - "$tmp/out/compare.json" <<'PY' || fail "compare.json"
import json, sys
d = json.load(open(sys.argv[1]))
cases = {(c["graph"], c["F"]): c for c in d["cases"]}
assert set(cases) == {("lat-h-11m", 1), ("lat-8m", 1)}, cases          # only the shared cases
assert abs(cases[("lat-h-11m", 1)]["speedup"] - 1.5) < 1e-9
assert cases[("lat-h-11m", 1)]["split"] == "held-out" and cases[("lat-8m", 1)]["split"] == "train"
assert d["metadata"]["labels"] == ["off", "on"] and d["metadata"]["device"] == "TestGPU"
PY
grep -q "| held-out | mul:sum | 1 | 1.500x |" "$tmp/out/compare.md" || fail "compare.md: $(cat "$tmp/out/compare.md")"
run "$tmp/c.json" "cora copy_lhs:sum 8 0.05"
if "$py" "$src/benchmarks/compare_spmm_runs.py" "$tmp/a.json" "$tmp/c.json" --out "$tmp/none" > "$tmp/err" 2>&1; then
  fail "runs without a shared case were accepted"
fi
grep -q "share no case" "$tmp/err" || fail "unclear error: $(cat "$tmp/err")"
echo OK
