#!/usr/bin/env python3
"""Report of run_zoo.sh: g-SpMM default (and the expert rules) against the best cached cuSPARSE
algorithm, per zoo family and split.

    python3 benchmarks/report_zoo.py RESULTS_DIR

Reads every RESULTS_DIR/spmm-*.json[.gz] of gsparse-bench-spmm (and sddmm-*.json[.gz] of gsparse-bench-sddmm
run with the default schedule: op "sddmm:dot", no expert column) and writes RESULTS_DIR/summary.json
({"cases": [{"graph", "family", "split", "op", "F", "gsparse_default_ms", "gsparse_expert_ms",
"gsparse_segments_ms", "segments_schedule", "gsparse_tuned_ms", "cusparse_ms", "default_schedule"}]}),
report.md (per family: geometric-mean and worst speed-up of the default over cuSPARSE, the same for the
expert rules and, when the run measured g-SpMM by nonzeros (points spmm_segments{run=R}, e.g.
benchmarks/schedules/zoo_default_and_segments.json), for its fastest run length; then every case) and
speedup.png (one panel per family) when matplotlib is available. Graphs that are not zoo members
are reported as family "twin" or "real", split "other".
"""
import glob
import gzip
import json
import math
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def manifest():
    members = {}
    with open(os.path.join(ROOT, "datasets", "zoo", "zoo.txt")) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 3 and not line.startswith("#"):
                members[fields[0]] = (fields[2], "held-out" if fields[1] == "heldout" else fields[1])
    return members


def load_runs(out_dir, kind):
    """The raw files of one benchmark (spmm or sddmm), plain or gzip-compressed."""
    paths = sorted(glob.glob(os.path.join(out_dir, kind + "-*.json")) + glob.glob(os.path.join(out_dir, kind + "-*.json.gz")))
    for path in paths:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            yield json.load(f)


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    out_dir = sys.argv[1]
    members = manifest()
    cases, meta = {}, None

    def add(r, op, default_ms, expert_ms, cusparse_ms, schedule, segments=None, rows_ms=None, tuned=None):
        """One case of a benchmark record: the graph's family and split, the times of each side
        (segments: the fastest spmm_segments entry, or None; rows_ms: the default row schedule
        without the segment gate, or None; tuned: the entry of the graph's tuned point, or None)."""
        name = r["graph"]
        family, split = members.get(name, ("twin" if r.get("source") == "twin" else "real", "other"))
        cases[(name, op, r["F"])] = {
            "graph": name, "family": family, "split": split, "op": op, "F": r["F"],
            "nnz": r.get("nnz"), "avg_degree": r.get("avg_degree"),
            "gsparse_default_ms": default_ms, "gsparse_default_rows_ms": rows_ms, "gsparse_expert_ms": expert_ms,
            "gsparse_segments_ms": segments["median_ms"] if segments else None,
            "segments_schedule": segments["schedule"] if segments else None,
            "gsparse_tuned_ms": tuned["median_ms"] if tuned else None,
            "tuned_schedule": tuned["schedule"] if tuned else None,
            "cusparse_ms": cusparse_ms, "default_schedule": schedule, "error": r.get("gsparse_error"),
        }

    for doc in load_runs(out_dir, "spmm"):
        meta = meta or doc.get("metadata")
        for r in doc["records"]:
            # Per schedule point, the entries whose output passed the checks.
            by_label = {e["schedule"]: e for e in r.get("results", [])
                        if e.get("competitor") == "gsparse" and e.get("ok") and e.get("check", {}).get("ok", False)}
            d, x, rd = by_label.get("default"), by_label.get("expert"), by_label.get("default-rows")
            segs = [e for label, e in by_label.items() if label.startswith("spmm_segments")]
            # The graph's tuned point (benchmarks/tuned_points.py: label "tuned").
            tuned = next((e for e in by_label.values() if e.get("label") == "tuned"), None)
            add(r, r["op"], d["median_ms"] if d else None, x["median_ms"] if x else None,
                r.get("cusparse_best_median_ms"), d.get("resolved_schedule") if d else None,
                min(segs, key=lambda e: e["median_ms"]) if segs else None, rd["median_ms"] if rd else None, tuned)
    for doc in load_runs(out_dir, "sddmm"):
        meta = meta or doc.get("metadata")
        for r in doc["records"]:
            ok = r.get("gsparse_schedule") == "default" and not r.get("gsparse_error")
            add(r, "sddmm:" + r["op"], r.get("gsparse_median_ms") if ok else None, None, r.get("cusparse_median_ms"), None)
    rows = sorted(cases.values(), key=lambda c: (c["split"], c["family"], c["graph"], c["op"], c["F"]))
    device = (meta or {}).get("device", {}).get("name", "?") if isinstance((meta or {}).get("device"), dict) else (meta or {}).get("device", "?")
    date = (meta or {}).get("date", "?")
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump({"device": device, "date": date, "cases": rows}, f, indent=1)

    def speedup(c, key):
        return c["cusparse_ms"] / c[key] if c.get(key) and c.get("cusparse_ms") else None

    md = [f"# g-SpMM over the graph zoo: default schedule vs best cached cuSPARSE", "",
          f"Device: {device}; date: {date}; median of the timed runs, L2 flushed; gsparse-bench-spmm "
          "(benchmarks/run_zoo.sh). Speed-up = cuSPARSE time / gsparse time (> 1: gsparse faster). "
          "`expert` = the hand-written rules that were the default before the learned selector. "
          "`segments` = g-SpMM by nonzeros at its fastest measured run length; `row default` = the default row "
          "schedule without the segment gate; `tuned` = the point gsparse-tune found for the graph, op and F "
          "(run_zoo.sh TUNE=1; `-`: not measured).", "",
          "| split | family | op | cases | default geomean | default worst | tuned geomean | tuned worst | "
          "expert geomean | expert worst | segments geomean | segments worst | row default geomean | "
          "row default worst | default >= 1.0 |",
          "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    groups = {}
    for c in rows:
        groups.setdefault((c["split"], c["family"], c["op"]), []).append(c)
    for (split, family, op), cs in sorted(groups.items()):
        sd, st, sx, ss, sr = ([s for s in (speedup(c, key) for c in cs) if s]
                              for key in ("gsparse_default_ms", "gsparse_tuned_ms", "gsparse_expert_ms",
                                          "gsparse_segments_ms", "gsparse_default_rows_ms"))
        x = lambda v: "-" if v is None or math.isnan(v) else f"{v:.2f}x"
        md.append(f"| {split} | {family} | {op} | {len(cs)} | {x(geomean(sd))} | {x(min(sd, default=None))} | "
                  f"{x(geomean(st))} | {x(min(st, default=None))} | {x(geomean(sx))} | {x(min(sx, default=None))} | {x(geomean(ss))} | {x(min(ss, default=None))} | "
                  f"{x(geomean(sr))} | {x(min(sr, default=None))} | "
                  f"{sum(s >= 1.0 for s in sd)}/{len(sd)} |")
    md += ["", "## Every case", "",
           "| split | family | graph | op | F | default ms | default schedule | tuned ms | row default ms | expert ms | "
           "segments ms | cuSPARSE ms | default / cuSPARSE | tuned / cuSPARSE |",
           "|---|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    fmt = lambda v: "-" if v is None else f"{v:.4f}"
    for c in rows:
        s, t = speedup(c, "gsparse_default_ms"), speedup(c, "gsparse_tuned_ms")
        form = "segments" if (c["default_schedule"] or "").startswith("spmm_segments") else "rows"
        md.append(f"| {c['split']} | {c['family']} | {c['graph']} | {c['op']} | {c['F']} | {fmt(c['gsparse_default_ms'])} | "
                  f"{form} | {fmt(c['gsparse_tuned_ms'])} | {fmt(c['gsparse_default_rows_ms'])} | {fmt(c['gsparse_expert_ms'])} | "
                  f"{fmt(c['gsparse_segments_ms'])} | {fmt(c['cusparse_ms'])} | "
                  f"{'-' if s is None else f'{s:.2f}x'} | {'-' if t is None else f'{t:.2f}x'} |")
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    if not rows:
        print("report_zoo.py: no cases in " + out_dir + " (no plot)")
        return
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report_zoo.py: matplotlib missing, no plot")
        return
    fams = sorted({(c["split"], c["family"]) for c in rows})
    cols = 4
    fig, axes = plt.subplots((len(fams) + cols - 1) // cols, cols, figsize=(4 * cols, 3 * ((len(fams) + cols - 1) // cols)),
                             squeeze=False)
    for ax, (split, fam) in zip(axes.flat, fams):
        for op, marker in (("copy_lhs:sum", "o"), ("mul:sum", "s"), ("sddmm:dot", "^")):
            for key, color in (("gsparse_default_ms", "C0"), ("gsparse_tuned_ms", "C2"), ("gsparse_expert_ms", "C1")):
                pts = sorted((c["F"], speedup(c, key)) for c in rows
                             if c["family"] == fam and c["split"] == split and c["op"] == op and speedup(c, key))
                by_f = {}
                for F, s in pts:
                    by_f.setdefault(F, []).append(s)
                if by_f and not (key == "gsparse_expert_ms" and op.startswith("sddmm")):
                    ax.plot(list(by_f), [geomean(v) for v in by_f.values()], marker=marker, color=color,
                            label=f"{key[len('gsparse_'):-len('_ms')]} {op}")
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_title(f"{fam} ({split})", fontsize=9)
        ax.set_xlabel("F")
        ax.set_ylabel("speed-up vs cuSPARSE")
    for ax in list(axes.flat)[len(fams):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=6)
    fig.suptitle(f"g-SpMM default vs best cached cuSPARSE ({device}, {date})", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "speedup.png"), dpi=110)


if __name__ == "__main__":
    main()
