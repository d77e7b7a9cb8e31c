#!/usr/bin/env python3
"""The autotuner evaluation report: gsparse-tune's genetic search against random sampling with the
same number of measured candidates and against the exhaustive best (the paper's Fig. 11).

  report_tune.py TUNE_JSON... [--records records.jsonl] [--out-dir DIR | --results-root DIR]

Inputs are gsparse-tune --json outputs (or gsparse-sweep's), plain or gzip-compressed (.json.gz);
those of one (graph, feature length) form a case, told apart by their "mode". Per case the report gives the best mean time of each mode, the genetic search's
time relative to the exhaustive best (the target: within 5% in at least 90% of the cases), its
tuning wall time (target: under 20 s), the random sampling's relative time at equal trials and the
expert default's. Writes tune_eval.md, tune_eval.json and tune_eval.png into DIR (default
<results-root>/<date>-<device-slug>-tune/), and copies the records file there when given.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import math
import shutil
import sys
from collections import defaultdict
from pathlib import Path

from report import slug  # the results folders' device slug, as the other reports write it


def best_ms(run: dict) -> float | None:
    """Fastest mean time among the fully timed candidates and the expert default."""
    times = [c["mean_ms"] for c in run.get("candidates", []) if c.get("ok") and not c.get("cut_off")]
    d = run.get("expert_default", {})
    if d.get("ok"):
        times.append(d["mean_ms"])
    return min(times) if times else None


def read_result_text(path) -> str:
    """The text of a result file, plain or gzip-compressed (.gz)."""
    if str(path).endswith(".gz"):
        with gzip.open(path, "rt") as f:
            return f.read()
    return Path(path).read_text()


def load_cases(paths):
    cases = defaultdict(dict)
    for p in paths:
        try:
            run = json.loads(read_result_text(p))
        except (OSError, EOFError, json.JSONDecodeError) as err:
            print(f"report_tune.py: warning: skipping {p}: {err}", file=sys.stderr)
            continue
        if "mode" not in run or "graph" not in run:
            print(f"report_tune.py: warning: {p} is not a gsparse-tune result; skipped", file=sys.stderr)
            continue
        if run["mode"] == "exhaustive" and run.get("complete") is False:
            # A sweep stopped at its time limit: its best is not the space's best.
            print(f"report_tune.py: warning: {p} is an incomplete sweep ({run.get('unmeasured_points')} points "
                  "unmeasured; finish it with gsparse-sweep --resume); skipped", file=sys.stderr)
            continue
        feat = "x".join(str(f) for f in run.get("lhs_feat", []))
        graph = run["graph"]["name"] if isinstance(run["graph"], dict) else str(run["graph"])
        cases[(graph, run.get("op", ""), feat)][run["mode"]] = run
    return cases


def summarize(cases):
    rows = []
    for (graph, op, feat), runs in sorted(cases.items(), key=lambda kv: (kv[0][0], kv[0][1], int(kv[0][2].split("x")[0] or 0))):
        row = {"graph": graph, "op": op, "feat": feat, "device": next(iter(runs.values())).get("device", "")}
        ex = best_ms(runs["exhaustive"]) if "exhaustive" in runs else None
        row["exhaustive_ms"] = ex
        if "exhaustive" in runs:
            row["valid_points"] = runs["exhaustive"].get("valid_size")
            row["exhaustive_wall_s"] = runs["exhaustive"].get("wall_s")
            # A screened sweep (gsparse-sweep --screen) left out points that were slow at another F.
            row["screened_points"] = runs["exhaustive"].get("screened_points", 0)
            row["screen"] = runs["exhaustive"].get("screen")
        for mode in ("genetic", "random"):
            if mode not in runs:
                continue
            r = runs[mode]
            row[f"{mode}_ms"] = r["best"]["mean_ms"] if r.get("best", {}).get("ok") else None
            row[f"{mode}_trials"] = len(r.get("candidates", []))  # measured besides the expert default
            row[f"{mode}_wall_s"] = r.get("wall_s")
            row[f"{mode}_schedule"] = r.get("best", {}).get("params")
        any_run = runs.get("genetic") or runs.get("random") or runs.get("exhaustive")
        d = any_run.get("expert_default", {})
        row["default_ms"] = d.get("mean_ms") if d.get("ok") else None
        for mode in ("genetic", "random", "default"):
            t = row.get(f"{mode}_ms")
            row[f"{mode}_vs_exhaustive"] = t / ex if t and ex else None
        rows.append(row)
    return rows


def fmt(x, spec=".3f"):
    return "–" if x is None else format(x, spec)


def write_markdown(rows, meta, path):
    lines = [f"# Autotuner evaluation ({meta['device']})", "",
             f"{meta['date']}. Times are mean kernel times of the best candidate of each search; "
             "'vs exh.' is that time over the exhaustive best (1.00 = found the best). Random sampling "
             "measures as many candidates as the genetic search did. Wall time: the whole tune "
             "(compiling, measuring, search), without generating the graph.", "",
             "| graph | F | valid points | exhaustive best (ms) | genetic (ms) | vs exh. | genetic wall (s) | trials | "
             "random (ms) | vs exh. | default (ms) | vs exh. |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        mark = " †" if r.get("screened_points") else ""
        lines.append(f"| {r['graph']} | {r['feat']} | {r.get('valid_points') or '–'} | {fmt(r['exhaustive_ms'])}{mark} | "
                     f"{fmt(r.get('genetic_ms'))} | {fmt(r['genetic_vs_exhaustive'], '.2f')} | "
                     f"{fmt(r.get('genetic_wall_s'), '.1f')} | {r.get('genetic_trials', '–')} | "
                     f"{fmt(r.get('random_ms'))} | {fmt(r['random_vs_exhaustive'], '.2f')} | "
                     f"{fmt(r.get('default_ms'))} | {fmt(r['default_vs_exhaustive'], '.2f')} |")
    screened = [r for r in rows if r.get("screened_points")]
    if screened:
        lines += [""] + [
            f"† {r['graph']}, F = {r['feat']}: best of a screened sweep, {r['valid_points'] - r['screened_points']} "
            f"of {r['valid_points']} points measured; left out: the points slower than {r['screen']['factor']:g}x "
            f"the best at F = {r['screen']['feat']} ({Path(r['screen']['records']).name})."
            for r in screened]
    judged = [r for r in rows if r["genetic_vs_exhaustive"] is not None]
    walls = [r["genetic_wall_s"] for r in rows if r.get("genetic_wall_s") is not None]
    lines += ["", "## Summary", ""]
    if judged:
        within = sum(r["genetic_vs_exhaustive"] <= 1.05 for r in judged)
        lines.append(f"- genetic search within 5% of the exhaustive best: {within} of {len(judged)} cases "
                     f"({100 * within / len(judged):.0f}%; target 90%)")
        gm = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))  # noqa: E731
        lines.append(f"- geometric mean over the exhaustive best: genetic {gm([r['genetic_vs_exhaustive'] for r in judged]):.3f}"
                     + (f", random {gm([r['random_vs_exhaustive'] for r in judged if r['random_vs_exhaustive']]):.3f}"
                        if any(r["random_vs_exhaustive"] for r in judged) else "")
                     + (f", expert default {gm([r['default_vs_exhaustive'] for r in judged if r['default_vs_exhaustive']]):.3f}"
                        if any(r["default_vs_exhaustive"] for r in judged) else ""))
    if walls:
        lines.append(f"- genetic tuning wall time: median {sorted(walls)[len(walls) // 2]:.1f} s, max {max(walls):.1f} s "
                     f"({sum(w < 20 for w in walls)} of {len(walls)} under 20 s)")
    Path(path).write_text("\n".join(lines) + "\n")


def write_plot(rows, meta, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report_tune.py: matplotlib missing; no plot", file=sys.stderr)
        return
    judged = [r for r in rows if r["exhaustive_ms"]]
    if not judged:
        return
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(judged) + 2), 4))
    width = 0.27
    xs = range(len(judged))
    for i, (mode, label) in enumerate((("genetic", "genetic (cost model)"), ("random", "random, equal trials"),
                                       ("default", "expert default"))):
        vals = [1 / r[f"{mode}_vs_exhaustive"] if r[f"{mode}_vs_exhaustive"] else 0 for r in judged]
        ax.bar([x + (i - 1) * width for x in xs], vals, width, label=label)
    ax.axhline(0.95, color="gray", linestyle="--", linewidth=0.8)
    ax.set_xticks(list(xs))
    # "ogbn-proteins twin (scale 1, shuffled ids)" -> "proteins": full names overlap under the bars.
    ax.set_xticklabels([f"{r['graph'].split(' twin ')[0].removeprefix('ogbn-')}\nF={r['feat']}" for r in judged],
                       fontsize=7)
    ax.set_ylabel("performance / exhaustive best")
    ax.set_ylim(0, 1.1)
    ax.set_title(f"gsparse-tune vs exhaustive search, {meta['device']}, {meta['date']}", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=130)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--records", help="measurement records (JSON Lines) to copy next to the report")
    ap.add_argument("--out-dir")
    ap.add_argument("--results-root", default=str(Path(__file__).resolve().parent / "results"))
    args = ap.parse_args(argv)
    cases = load_cases([p for p in args.inputs if Path(p).is_file()])
    if not cases:
        print("report_tune.py: error: no gsparse-tune result among the inputs", file=sys.stderr)
        return 1
    rows = summarize(cases)
    devices = sorted({r["device"] for r in rows if r["device"]})
    meta = {"device": " + ".join(devices) or "unknown device", "date": dt.date.today().isoformat()}
    out = Path(args.out_dir) if args.out_dir else Path(args.results_root) / f"{meta['date']}-{slug(meta['device'])}-tune"
    out.mkdir(parents=True, exist_ok=True)
    (out / "tune_eval.json").write_text(json.dumps({"metadata": meta, "cases": rows}, indent=1))
    write_markdown(rows, meta, out / "tune_eval.md")
    write_plot(rows, meta, out / "tune_eval.png")
    if args.records and Path(args.records).is_file():
        shutil.copy(args.records, out / "records.jsonl")
    print(f"report written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
