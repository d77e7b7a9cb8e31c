#!/usr/bin/env python3
"""Scores cost models on the zoo's sweep records by graph family: per-problem Pearson correlation of
predicted and measured times and the measured time of the model's top-1 / best-of-top-5 picks over
the best measured time (geometric means), as `gsparse-train-cost-model --evaluate` reports them.

    python3 autotune/selector/cost_model_by_family.py --tool build/autotune/gsparse-train-cost-model \
        --records zoo-train.jsonl --model shipped=autotune/models/h100_spmm \
        --model "zoo (family held out)=fold-a:lat-*,cl-*;fold-b:rmat-*,knn-*" -o report.md

--records may be repeated; a file that is not JSON Lines (the default selector's sweep data,
autotune/selector/data/*.json.gz) is read through gsparse-train-cost-model --sweep-data.

A --model NAME=PREFIX scores one model on every graph. NAME=PREFIX:PATTERNS;PREFIX:PATTERNS scores
each fold model only on the graphs its patterns match (the graphs it was trained without), so every
family is scored by a model that never saw it.
"""
import argparse
import fnmatch
import math
import os
import statistics
import subprocess

from collect_sweeps import zoo_families


def record_args(files):
    """gsparse-train-cost-model's arguments for records files (JSON Lines, plain or .gz) and sweep data."""
    args = []
    for f in files:
        lines = f.endswith(".jsonl") or f.endswith(".jsonl.gz")
        args += ["--records" if lines else "--sweep-data", f]
    return args


def evaluate(tool, prefix, records):
    out = subprocess.run([tool, "--evaluate", prefix] + record_args(records), check=True, capture_output=True,
                         text=True).stdout
    rows = []
    for line in out.splitlines():
        if " | " not in line:
            continue
        parts = line.split("|")
        graph = parts[2].strip()
        fields = parts[-1].split()
        if len(fields) < 5:
            continue
        feat, n, pearson, top1, top5 = fields[0], int(fields[1]), fields[2], float(fields[3]), float(fields[4])
        rows.append({"graph": graph, "F": int(feat), "pearson": float(pearson) if pearson != "n/a" else math.nan,
                     "top1": top1, "top5": top5})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tool", required=True)
    ap.add_argument("--records", action="append", required=True,
                    help="records file (JSON Lines) or sweep data; repeatable")
    ap.add_argument("--model", action="append", required=True)
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    fam = zoo_families(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../datasets/zoo/zoo.txt"))
    results = {}
    for spec in a.model:
        name, rest = spec.split("=", 1)
        rows = []
        if ":" in rest:
            for fold in rest.split(";"):
                prefix, patterns = fold.split(":", 1)
                pats = patterns.split(",")
                rows += [r for r in evaluate(a.tool, prefix, a.records)
                         if any(fnmatch.fnmatch(r["graph"], p) for p in pats)]
        else:
            rows = evaluate(a.tool, rest, a.records)
        results[name] = rows
    names = list(results)
    md = ["# Cost models on the zoo's sweep records, by family", "",
          "Per problem (graph, F): Pearson of predicted and measured times; top-1 / top-5 = measured time of "
          "the model's first pick / best of its first five over the best measured (geometric mean). "
          "Models marked 'held out' score each family with a model trained without it.", "",
          "| family | " + " | ".join(f"{n}: Pearson | {n}: top-1 | {n}: top-5" for n in names) + " |",
          "|---|" + "---:|---:|---:|" * len(names)]
    geo = lambda xs: math.exp(statistics.fmean(math.log(x) for x in xs)) if xs else math.nan
    for family in sorted({fam.get(r["graph"], "?") for rows in results.values() for r in rows}):
        cells = []
        for n in names:
            rs = [r for r in results[n] if fam.get(r["graph"], "?") == family]
            p = [r["pearson"] for r in rs if not math.isnan(r["pearson"])]
            cells.append(f"{statistics.fmean(p):.3f} | {geo([r['top1'] for r in rs]):.2f}x | {geo([r['top5'] for r in rs]):.2f}x"
                         if rs else "- | - | -")
        md.append(f"| {family} | " + " | ".join(cells) + " |")
    cells = []
    for n in names:
        rs = results[n]
        p = [r["pearson"] for r in rs if not math.isnan(r["pearson"])]
        cells.append(f"{statistics.fmean(p):.3f} | {geo([r['top1'] for r in rs]):.2f}x | {geo([r['top5'] for r in rs]):.2f}x")
    md.append("| all | " + " | ".join(cells) + " |")
    with open(a.out, "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
