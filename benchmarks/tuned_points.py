#!/usr/bin/env python3
"""The tuned schedule points of a folder of gsparse-tune results as gsparse-bench-spmm points.

    tuned_points.py TUNE_DIR [--base POINTS.json] -o OUT.json

Every *.json in TUNE_DIR that is a gsparse-tune --json result of g-SpMM becomes one point labelled
"tuned", filtered to its graph (the name the benchmark gives a graph file: its stem), op
("copy_lhs:sum", "mul:sum", ...) and feature length. --base: a point file whose points come first
(the default schedule, ...). benchmarks/run_zoo.sh (TUNE=1) runs it; report_zoo.py reads the
"tuned" entries as gsparse_tuned_ms.
"""

import argparse
import json
import re
import sys
from pathlib import Path

# DGL's operator names (gsparse-tune's "op") as gsparse-bench-spmm's --ops entries.
_BINARY = {"copy_u": "copy_lhs", "copy_e": "copy_rhs"}


def bench_op(op):
    """'copy_lhs:sum' from 'spmm copy_u_sum', 'mul:sum' from 'spmm u_mul_e_sum'; None for other ops."""
    m = re.fullmatch(r"spmm (copy_[ue])_(\w+)", op)
    if m:
        return f"{_BINARY[m.group(1)]}:{m.group(2)}"
    m = re.fullmatch(r"spmm u_(\w+)_e_(\w+)", op)
    return f"{m.group(1)}:{m.group(2)}" if m else None


def bench_graph_name(name):
    """The benchmark's name of a tuned graph: a graph file's stem (gsparse-tune names a --graph by its
    path), a twin's name as it is."""
    path = Path(name)
    return path.stem if path.suffix in (".gcsr", ".mtx", ".txt", ".el", ".tsv") else name


def tuned_point(result):
    """The benchmark point of one tune result, or None when it is not a finished g-SpMM tune."""
    op = bench_op(result.get("op", ""))
    best = result.get("best") or {}
    if op is None or not best.get("ok") or "params" not in best:
        return None
    return {"schedule": best["schedule"], "params": best["params"], "label": "tuned",
            "graphs": [bench_graph_name(result["graph"]["name"])], "ops": [op], "feats": [int(result["lhs_feat"][0])]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tune_dir")
    ap.add_argument("--base", help="point file whose points come first")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args(argv)
    points = json.loads(Path(a.base).read_text()) if a.base else []
    if isinstance(points, dict):
        points = points.get("points", [])
    found = 0
    for path in sorted(Path(a.tune_dir).glob("*.json")):
        try:
            result = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as e:
            print(f"tuned_points.py: skipping {path}: {e}", file=sys.stderr)
            continue
        point = tuned_point(result) if isinstance(result, dict) and "graph" in result else None
        if point:
            points.append(point)
            found += 1
    Path(a.out).write_text(json.dumps(points, indent=1) + "\n")
    print(f"tuned_points.py: {found} tuned points, {len(points)} in all, written to {a.out}")
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main())
