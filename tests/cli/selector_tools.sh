#!/usr/bin/env bash
# The default selector's tooling and the zoo report, without a GPU:
#   1. the committed tables (schedules/spmm_selector_table.inc, spmm_segments_gate_table.inc) are what
#      train_selector.py and train_segment_gate.py grow from the committed data (only the generation
#      date may differ);
#   2. collect_sweeps.py turns a sweep folder into cases (median per point, the expert default) and
#      refuses sweeps whose graphs have no statistics;
#   3. report_zoo.py computes speed-ups over cuSPARSE per family from gsparse-bench-spmm records;
#   4. tuned_points.py turns gsparse-tune results into benchmark points, and report_zoo.py reads them.
# Prints OK on success.
#   selector_tools.sh SOURCE_DIR [PYTHON]
set -euo pipefail
src=$1
py=${2:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# 1. The table is reproducible.
"$py" "$src/autotune/selector/train_selector.py" "$src"/autotune/selector/data/h100-zoo-train-*.json.gz \
  --no-cv --emit "$tmp/table.inc" > /dev/null
diff <(tail -n +2 "$tmp/table.inc") <(tail -n +2 "$src/schedules/spmm_selector_table.inc") > "$tmp/diff" ||
  fail "schedules/spmm_selector_table.inc is not what train_selector.py grows from the data: $(head -5 "$tmp/diff")"

# 1b. So is the segment gate's (schedules/spmm_segments_gate_table.inc).
"$py" "$src/autotune/selector/train_segment_gate.py" "$src"/autotune/selector/data/h100-segment-gate-train-*.json.gz \
  --emit "$tmp/gate.inc" > /dev/null
diff <(tail -n +2 "$tmp/gate.inc") <(tail -n +2 "$src/schedules/spmm_segments_gate_table.inc") > "$tmp/diff" ||
  fail "schedules/spmm_segments_gate_table.inc is not what train_segment_gate.py grows from the data: $(head -5 "$tmp/diff")"
if "$py" "$src/autotune/selector/train_segment_gate.py" "$src"/autotune/selector/data/h100-segment-gate-train-*.json.gz \
     --margin 1.5 > "$tmp/err" 2>&1; then
  fail "train_segment_gate.py accepted --margin 1.5"
fi
grep -q -- "--margin must lie in" "$tmp/err" || fail "train_segment_gate.py error: $(cat "$tmp/err")"

# 2. collect_sweeps.py on a two-point sweep of one graph.
mkdir -p "$tmp/sweep/train"
cat > "$tmp/sweep/graphs.jsonl" <<'JSON'
{"graph": "lat-1m", "split": "train", "stats": {"file": "x", "num_dst": 400000, "num_src": 400000, "edges": 1000000, "avg_in_degree": 2.5, "max_in_degree": 4, "in_degree_cov": 0.3, "empty_rows": 0, "empty_row_share": 0, "avg_out_degree": 2.5, "max_out_degree": 4, "out_degree_cov": 0.3, "empty_cols": 0, "empty_col_share": 0, "square": true}}
JSON
cat > "$tmp/sweep/train/spmm-lat-1m-F8-candidates.json" <<'JSON'
{"device": "cuda:TEST", "op": "spmm copy_u_sum", "graph": {"name": "lat-1m"}, "lhs_feat": [8],
 "expert_default": {"ok": true, "median_ms": 0.5, "schedule": "gpu_spmm", "params": {"kMTile": 4, "kNTile": 8}},
 "candidates": [{"ok": true, "median_ms": 0.1, "schedule": "gpu_spmm", "params": {"kNTile": 1, "kMTile": 64}},
                {"ok": false, "error": "launch failed", "schedule": "gpu_spmm", "params": {"kMTile": 256, "kNTile": 1}}]}
JSON
"$py" "$src/autotune/selector/collect_sweeps.py" "$tmp/sweep" -o "$tmp/data.json.gz" > /dev/null
"$py" - "$tmp/data.json.gz" <<'PY' || fail "collect_sweeps.py output"
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1], "rt"))
(c,) = d["cases"]
assert c["graph"] == "lat-1m" and c["feat"] == 8, c
assert c["times"] == {"gpu_spmm{kMTile=64, kNTile=1}": 0.1, "gpu_spmm{kMTile=4, kNTile=8}": 0.5}, c["times"]
assert c["default"] == "gpu_spmm{kMTile=4, kNTile=8}", c
assert d["graphs"]["lat-1m"]["family"] == "lattice" and d["graphs"]["lat-1m"]["split"] == "train", d["graphs"]
PY
rm "$tmp/sweep/graphs.jsonl"
if "$py" "$src/autotune/selector/collect_sweeps.py" "$tmp/sweep" -o "$tmp/none.json.gz" > "$tmp/err" 2>&1; then
  fail "collect_sweeps.py accepted a sweep without graph statistics"
fi
grep -q "no statistics" "$tmp/err" || fail "collect_sweeps.py error: $(cat "$tmp/err")"

# 3. report_zoo.py: a held-out lattice case, gsparse 2x faster than cuSPARSE, the expert rules 2x slower,
#    g-SpMM by nonzeros 4x faster at its best checked run length, the row default 1.6x.
mkdir -p "$tmp/zoo"
cat > "$tmp/zoo/spmm-t.json" <<'JSON'
{"metadata": {"device": "TEST GPU", "date": "2026-01-01"}, "records": [
 {"graph": "lat-h-11m", "source": "file", "op": "copy_lhs:sum", "F": 8, "cusparse_best_median_ms": 0.2,
  "results": [{"competitor": "gsparse", "schedule": "default", "ok": true, "check": {"ok": true}, "median_ms": 0.1,
               "resolved_schedule": "gpu_spmm{kMTile=64}"},
              {"competitor": "gsparse", "schedule": "expert", "ok": true, "check": {"ok": true}, "median_ms": 0.4},
              {"competitor": "gsparse", "schedule": "default-rows", "ok": true, "check": {"ok": true}, "median_ms": 0.125},
              {"competitor": "gsparse", "schedule": "gpu_spmm{kMTile=2}", "ok": true, "check": {"ok": false}, "median_ms": 0.01},
              {"competitor": "gsparse", "schedule": "spmm_segments{run=8}", "ok": true, "check": {"ok": true}, "median_ms": 0.08},
              {"competitor": "gsparse", "schedule": "spmm_segments{run=32}", "ok": true, "check": {"ok": true}, "median_ms": 0.05},
              {"competitor": "gsparse", "schedule": "spmm_segments{run=64}", "ok": true, "check": {"ok": false}, "median_ms": 0.01}]}]}
JSON
"$py" "$src/benchmarks/report_zoo.py" "$tmp/zoo" > /dev/null
"$py" - "$tmp/zoo" <<'PY' || fail "report_zoo.py output"
import json, sys
d = json.load(open(sys.argv[1] + "/summary.json"))
(c,) = d["cases"]
assert (c["family"], c["split"], c["F"]) == ("lattice", "held-out", 8), c
assert (c["gsparse_default_ms"], c["gsparse_expert_ms"], c["cusparse_ms"]) == (0.1, 0.4, 0.2), c
assert c["default_schedule"] == "gpu_spmm{kMTile=64}" and c["gsparse_tuned_ms"] is None, c
assert c["tuned_schedule"] is None, c
assert c["gsparse_default_rows_ms"] == 0.125, c
# The fastest segments entry that passed its check (run=64 failed it).
assert (c["gsparse_segments_ms"], c["segments_schedule"]) == (0.05, "spmm_segments{run=32}"), c
md = open(sys.argv[1] + "/report.md").read()
assert "| held-out | lattice | copy_lhs:sum | 1 | 2.00x | 2.00x | - | - | 0.50x | 0.50x | 4.00x | 4.00x | 1.60x | 1.60x | 1/1 |" in md, md
PY

# 4. tuned_points.py: a finished tune of a graph file becomes a point for that graph's stem, op and F
#    (an unfinished one and a tuning cache are skipped); report_zoo.py reports the "tuned" entry.
mkdir -p "$tmp/tunes"
cat > "$tmp/tunes/lat-F8.json" <<'JSON'
{"op": "spmm copy_u_sum", "graph": {"name": "/graphs/lat-h-11m.gcsr"}, "lhs_feat": [8],
 "best": {"ok": true, "schedule": "gpu_spmm", "params": {"kMTile": 8, "kNTile": 8}}}
JSON
cat > "$tmp/tunes/seg-F32.json" <<'JSON'
{"op": "spmm copy_u_sum", "graph": {"name": "cl-h-4m"}, "lhs_feat": [32],
 "best": {"ok": true, "schedule": "spmm_segments", "params": {"run": 32, "tile": 4}}}
JSON
cat > "$tmp/tunes/mul-F4.json" <<'JSON'
{"op": "spmm u_mul_e_sum", "graph": {"name": "knn-h-5m"}, "lhs_feat": [4], "best": {"ok": false}}
JSON
echo '{"entries": []}' > "$tmp/tunes/cache.json"
"$py" "$src/benchmarks/tuned_points.py" "$tmp/tunes" --base "$src/benchmarks/schedules/default_only.json" \
  -o "$tmp/points.json" > /dev/null || fail "tuned_points.py failed"
"$py" - "$tmp/points.json" <<'PY' || fail "tuned_points.py output"
import json, sys
points = json.load(open(sys.argv[1]))
assert points[0]["schedule"] == "default", points
(t, seg) = points[1:]
assert t == {"schedule": "gpu_spmm", "params": {"kMTile": 8, "kNTile": 8}, "label": "tuned",
             "graphs": ["lat-h-11m"], "ops": ["copy_lhs:sum"], "feats": [8]}, t
# A tune whose best is g-SpMM by nonzeros (gsparse-tune --segments) keeps that schedule.
assert seg == {"schedule": "spmm_segments", "params": {"run": 32, "tile": 4}, "label": "tuned",
               "graphs": ["cl-h-4m"], "ops": ["copy_lhs:sum"], "feats": [32]}, seg
PY
"$py" - "$tmp/zoo/spmm-t.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["records"][0]["results"].append({"competitor": "gsparse", "schedule": "gpu_spmm{kMTile=8, kNTile=8}", "label": "tuned",
                                   "ok": True, "check": {"ok": True}, "median_ms": 0.08})
json.dump(d, open(sys.argv[1], "w"))
PY
"$py" "$src/benchmarks/report_zoo.py" "$tmp/zoo" > /dev/null
"$py" - "$tmp/zoo" <<'PY' || fail "report_zoo.py tuned output"
import json, sys
(c,) = json.load(open(sys.argv[1] + "/summary.json"))["cases"]
assert (c["gsparse_tuned_ms"], c["tuned_schedule"]) == (0.08, "gpu_spmm{kMTile=8, kNTile=8}"), c
assert "| 2.00x | 2.00x | 2.50x | 2.50x |" in open(sys.argv[1] + "/report.md").read()
PY
rm -rf "$tmp/tunes"; mkdir "$tmp/tunes"
if "$py" "$src/benchmarks/tuned_points.py" "$tmp/tunes" -o "$tmp/none.json" > /dev/null 2>&1; then
  fail "tuned_points.py succeeded without a tune"
fi
echo OK
