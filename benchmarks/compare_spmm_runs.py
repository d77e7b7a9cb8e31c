#!/usr/bin/env python3
"""Two gsparse-bench-spmm runs of the same cases side by side (the same graphs, ops and F, for example
one setting on and off): gsparse's median time in each, their ratio, both against the run's best
cuSPARSE algorithm, the point the default resolved to, and the zoo split of each graph
(datasets/zoo/zoo.txt). Writes compare.json, compare.md and compare.png into --out.

    python3 benchmarks/compare_spmm_runs.py BASE.json[.gz] NEW.json[.gz] --labels off,on --out DIR
"""

import argparse
import gzip
import json
import math
import os
from collections import defaultdict

from report_zoo import manifest


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        data = json.load(f)
    cases = {}
    for r in data["records"]:
        results = [x for x in r.get("results", []) if x.get("competitor") == "gsparse"] or r.get("results", [])
        if r.get("gsparse_median_ms") is None:
            continue
        ok = all(x.get("ok", False) for x in results) if results else False
        schedule = results[0].get("resolved_schedule", "") if results else ""
        cases[(r["graph"], r["op"], int(r["F"]))] = {
            "ms": r["gsparse_median_ms"], "cusparse_ms": r.get("cusparse_best_median_ms"), "ok": ok,
            "schedule": schedule, "device": r.get("device", ""), "date": r.get("date", "")}
    return cases


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base")
    ap.add_argument("new")
    ap.add_argument("--labels", default="base,new", help="names of the two runs, comma-separated")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    labels = a.labels.split(",")
    if len(labels) != 2:
        ap.error("--labels takes two names")
    base, new = load(a.base), load(a.new)
    splits = {name: split for name, (_, split) in manifest().items()}
    rows = []
    for key in sorted(set(base) & set(new)):
        b, n = base[key], new[key]
        rows.append({"graph": key[0], "split": splits.get(key[0], "other"), "op": key[1], "F": key[2],
                     f"{labels[0]}_ms": b["ms"], f"{labels[1]}_ms": n["ms"], "speedup": b["ms"] / n["ms"],
                     "cusparse_ms": n["cusparse_ms"], "checked": b["ok"] and n["ok"],
                     f"{labels[0]}_schedule": b["schedule"], f"{labels[1]}_schedule": n["schedule"]})
    if not rows:
        raise SystemExit("compare_spmm_runs.py: the two runs share no case")
    os.makedirs(a.out, exist_ok=True)
    meta = {"device": rows and new[(rows[0]["graph"], rows[0]["op"], rows[0]["F"])]["device"],
            "date": new[(rows[0]["graph"], rows[0]["op"], rows[0]["F"])]["date"], "base": a.base, "new": a.new,
            "labels": labels}
    with open(os.path.join(a.out, "compare.json"), "w") as f:
        json.dump({"metadata": meta, "cases": rows}, f, indent=1)

    changed = [r for r in rows if abs(r["speedup"] - 1) > 0.03]
    groups = defaultdict(list)
    for r in rows:
        groups[(r["split"], r["op"])].append(r["speedup"])
    md = [f"# {labels[1]} against {labels[0]} ({meta['device']}, {meta['date']})", "",
          f"{len(rows)} cases, every result checked: {all(r['checked'] for r in rows)}. Speed-up = {labels[0]} / {labels[1]} time.", "",
          "| split | op | cases | geomean | min | max |", "|---|---|---:|---:|---:|---:|"]
    for (split, op), xs in sorted(groups.items()):
        md.append(f"| {split} | {op} | {len(xs)} | {geomean(xs):.3f}x | {min(xs):.2f}x | {max(xs):.2f}x |")
    md += ["", f"Cases that moved by more than 3%:", "",
           f"| split | graph | op | F | {labels[0]} ms | {labels[1]} ms | speed-up | cuSPARSE ms | {labels[0]} / {labels[1]} vs cuSPARSE | point |",
           "|---|---|---|---:|---:|---:|---:|---:|---|---|"]
    for r in sorted(changed, key=lambda r: (r["split"], r["graph"], r["op"], r["F"])):
        cu = r["cusparse_ms"]
        vs = f"{cu / r[labels[0] + '_ms']:.2f}x / {cu / r[labels[1] + '_ms']:.2f}x" if cu else "-"
        md.append(f"| {r['split']} | {r['graph']} | {r['op']} | {r['F']} | {r[labels[0] + '_ms']:.4f} | "
                  f"{r[labels[1] + '_ms']:.4f} | {r['speedup']:.2f}x | {cu or 0:.4f} | {vs} | `{r[labels[1] + '_schedule']}` |")
    with open(os.path.join(a.out, "compare.md"), "w") as f:
        f.write("\n".join(md) + "\n")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("compare_spmm_runs.py: matplotlib is missing; no plot")
        return
    fig, ax = plt.subplots(figsize=(10, 4))
    order = sorted(rows, key=lambda r: (r["split"], r["op"], r["graph"], r["F"]))
    colors = {"train": "tab:blue", "held-out": "tab:orange"}
    ax.bar(range(len(order)), [r["speedup"] for r in order], color=[colors.get(r["split"], "gray") for r in order])
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_ylabel(f"{labels[0]} / {labels[1]} time")
    ax.set_xticks(range(len(order)))
    ax.set_xticklabels([f"{r['graph']} {r['op'].split(':')[0]} F{r['F']}" for r in order], rotation=90, fontsize=5)
    ax.set_title(f"{labels[1]} vs {labels[0]}, {meta['device']} {meta['date']} (blue: training, orange: held out)")
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "compare.png"), dpi=150)


if __name__ == "__main__":
    main()
