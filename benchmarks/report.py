#!/usr/bin/env python3
"""Merges the JSON outputs of gsparse-bench-spmm and torch_baselines.py into one report.

  report.py results/spmm.json results/torch.json [--out-dir DIR] [--title TEXT]

Inputs may be gzip-compressed (spmm.json.gz), as results folders keep their large files.

Records of the inputs that describe the same case (graph, order, scale, F, op) are merged: their
"results" lists (one entry per competitor) are joined. Per case the report takes
  gsparse          the fastest gsparse entry (over schedule points) whose output passed its checks
  best cuSPARSE    the fastest cusparse.* algorithm (ALG_DEFAULT, CSR_ALG1/2/3, cached)
  torch.sparse.mm  the torch.sparse.mm entry
  best torch scatter  the fastest of torch.index_add / torch.scatter_reduce / torch.index_reduce / pyg.scatter
and writes, into DIR (default benchmarks/results/<date>-<device-slug>/):
  report.md    per graph/order/op a table of F vs times and speedups (best cuSPARSE / gsparse,
               torch.sparse.mm / gsparse, best torch scatter / gsparse) with geometric means, a
               summary table, achieved bandwidth, and a schedule-point table when several were timed
  speedup.png  speedup of gsparse vs F (log2 axis) per graph: over best cuSPARSE (sum ops) or the best
               torch scatter formulation (other ops), and over torch.sparse.mm
  times.png    median time vs F of every competitor, per graph and op
  merged.json  the merged records and every input's metadata
Device and date (from the inputs' metadata) appear in every title.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import re
import shutil
import sys
from collections import OrderedDict, defaultdict
from pathlib import Path

SCATTER = ("torch.index_add", "torch.scatter_reduce", "torch.index_reduce", "pyg.scatter")
OP_ORDER = ["copy_lhs:sum", "mul:sum", "copy_lhs:max"]


def slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s or "unknown-device"


def load_inputs(paths):
    metas, records = [], []
    for p in paths:
        # Results folders keep large inputs gzip-compressed (spmm.json.gz): read both forms.
        with (gzip.open(p, "rt") if str(p).endswith(".gz") else open(p)) as f:
            doc = json.load(f)
        if isinstance(doc, list):
            doc = {"metadata": {}, "records": doc}
        meta = dict(doc.get("metadata") or {})
        meta["file"] = str(p)
        metas.append(meta)
        records.extend(doc.get("records") or [])
    return metas, records


def case_key(r):
    return (r.get("graph"), r.get("order"), float(r.get("scale") or 1.0), int(r.get("F", 0)), r.get("op"))


def merge(records):
    merged = OrderedDict()
    for r in records:
        k = case_key(r)
        if k not in merged:
            base = {key: v for key, v in r.items() if key != "results"}
            base["results"] = []
            base["errors"] = []
            merged[k] = base
        m = merged[k]
        m["results"].extend(r.get("results") or [])
        if r.get("error"):
            m["errors"].append(r["error"])
        for key, v in r.items():  # keep the first non-null summary field of any input
            if key not in ("results", "error") and m.get(key) is None and v is not None:
                m[key] = v
    return list(merged.values())


def ok_time(e):
    return e.get("ok") and isinstance(e.get("median_ms"), (int, float)) and e["median_ms"] > 0


def pick(case):
    """The per-case competitors: dict name -> (median_ms, entry, label)."""
    out = {}
    gs = [e for e in case["results"] if e.get("competitor") == "gsparse" and ok_time(e)
          and (e.get("check") or {}).get("ok", False)]
    if gs:
        b = min(gs, key=lambda e: e["median_ms"])
        out["gsparse"] = (b["median_ms"], b, b.get("label") or b.get("schedule") or "")
    cs = [e for e in case["results"] if str(e.get("competitor", "")).startswith("cusparse.") and ok_time(e)]
    if cs:
        b = min(cs, key=lambda e: e["median_ms"])
        out["cusparse"] = (b["median_ms"], b, b["competitor"].split(".", 1)[1])
    sm = [e for e in case["results"] if e.get("competitor") == "torch.sparse.mm" and ok_time(e)]
    if sm:
        b = min(sm, key=lambda e: e["median_ms"])
        out["sparse.mm"] = (b["median_ms"], b, "")
    sc = [e for e in case["results"] if e.get("competitor") in SCATTER and ok_time(e)]
    if sc:
        b = min(sc, key=lambda e: e["median_ms"])
        out["scatter"] = (b["median_ms"], b, b["competitor"])
    return out


def ratio(p, num, den):
    if num in p and den in p and p[den][0] > 0:
        return p[num][0] / p[den][0]
    return None


def geomean(xs):
    xs = [x for x in xs if x is not None and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def f_ms(x):
    return "—" if x is None else (f"{x:.3f}" if x < 100 else f"{x:.1f}")


def f_x(x):
    return "—" if x is None else f"{x:.2f}x"


def f_gbs(x):
    return "—" if not isinstance(x, (int, float)) else f"{x / 1e9:.0f}"


def gsparse_status(case):
    """Why a case has no gsparse time: the first error, or a failed check."""
    for e in case["results"]:
        if e.get("competitor") == "gsparse" and not e.get("ok") and e.get("error"):
            return "error: " + e["error"].splitlines()[0][:120]
    for e in case["results"]:
        if e.get("competitor") == "gsparse" and e.get("ok") and not (e.get("check") or {}).get("ok", False):
            return "output check failed"
    if case.get("gsparse_error"):
        return "error: " + str(case["gsparse_error"]).splitlines()[0][:120]
    return "not run"


def group_cases(cases):
    groups = OrderedDict()

    def op_rank(op):
        return (OP_ORDER.index(op) if op in OP_ORDER else len(OP_ORDER), op)

    for c in sorted(cases, key=lambda c: (c.get("graph", ""), c.get("order", ""), op_rank(c.get("op", "")),
                                          int(c.get("F", 0)))):
        groups.setdefault((c.get("graph"), c.get("order"), c.get("scale"), c.get("op")), []).append(c)
    return groups


def write_markdown(path, title, subtitle_lines, groups, copy_bw):
    lines = [f"# {title}", ""]
    lines += [f"- {s}" for s in subtitle_lines]
    lines += ["- times: median ms of CUDA-event-timed runs after warm-up; speedup = competitor time / gsparse time "
              "(> 1: gsparse faster); geometric means over the F values where both ran",
              "- GB/s: compulsory bytes (indices, X and Z once) / gathered bytes (indices + nnz x F x 4) per second"
              + (f"; device-to-device copy bandwidth {copy_bw / 1e12:.2f} TB/s (read + write)" if copy_bw else ""),
              ""]

    summary = []
    for (graph, order, scale, op), cases in groups.items():
        ref_name = "best cuSPARSE" if any("cusparse" in pick(c) for c in cases) else "best torch scatter"
        scale_txt = f", scale {scale:g}" if scale not in (None, 1.0) else ""
        c0 = cases[0]
        lines += [f"## {graph} ({order}{scale_txt}) — {op}", "",
                  f"{c0.get('nodes', '?')} nodes, {c0.get('nnz', '?')} edges", "",
                  "| F | gsparse | schedule | best cuSPARSE | torch.sparse.mm | best torch scatter | "
                  "vs cuSPARSE | vs torch.sparse.mm | vs torch scatter | sparse.mm / cuSPARSE | "
                  "gsparse GB/s | cuSPARSE GB/s |",
                  "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        s_cs, s_sm, s_sc, s_base = [], [], [], []
        notes = set()
        for c in cases:
            p = pick(c)
            r_cs, r_sm, r_sc = ratio(p, "cusparse", "gsparse"), ratio(p, "sparse.mm", "gsparse"), \
                ratio(p, "scatter", "gsparse")
            r_base = ratio(p, "sparse.mm", "cusparse")
            s_cs.append(r_cs)
            s_sm.append(r_sm)
            s_sc.append(r_sc)
            s_base.append(r_base)
            if "gsparse" not in p:
                notes.add(gsparse_status(c))
            gs = p.get("gsparse")
            cs = p.get("cusparse")
            sc = p.get("scatter")
            lines.append(
                f"| {c.get('F')} | {f_ms(gs[0]) if gs else '—'} | {gs[2] if gs else ''} | "
                f"{(f_ms(cs[0]) + ' (' + cs[2] + ')') if cs else '—'} | "
                f"{f_ms(p['sparse.mm'][0]) if 'sparse.mm' in p else '—'} | "
                f"{(f_ms(sc[0]) + ' (' + sc[2] + ')') if sc else '—'} | "
                f"{f_x(r_cs)} | {f_x(r_sm)} | {f_x(r_sc)} | {f_x(r_base)} | "
                f"{(f_gbs(gs[1].get('compulsory_bytes_per_s')) + ' / ' + f_gbs(gs[1].get('gathered_bytes_per_s'))) if gs else '—'} | "
                f"{(f_gbs(cs[1].get('compulsory_bytes_per_s')) + ' / ' + f_gbs(cs[1].get('gathered_bytes_per_s'))) if cs else '—'} |")
        g_cs, g_sm, g_sc, g_base = geomean(s_cs), geomean(s_sm), geomean(s_sc), geomean(s_base)
        lines.append(f"| **geomean** | | | | | | **{f_x(g_cs)}** | **{f_x(g_sm)}** | **{f_x(g_sc)}** | "
                     f"{f_x(g_base)} | | |")
        lines.append("")
        for n in sorted(notes):
            lines.append(f"- gsparse: {n}")
        if notes:
            lines.append("")
        valid_cs = [x for x in s_cs if x is not None]
        summary.append((graph, order, op, g_cs, min(valid_cs) if valid_cs else None,
                        sum(1 for x in valid_cs if x < 1.0), len(valid_cs), g_sm, g_sc, ref_name))

    lines += ["## Summary", "",
              "| graph | order | op | geomean vs cuSPARSE | worst F vs cuSPARSE | F slower than cuSPARSE | "
              "geomean vs torch.sparse.mm | geomean vs torch scatter |",
              "|---|---|---|---:|---:|---:|---:|---:|"]
    for graph, order, op, g_cs, worst, slower, n, g_sm, g_sc, _ in summary:
        lines.append(f"| {graph} | {order} | {op} | {f_x(g_cs)} | {f_x(worst)} | "
                     f"{(str(slower) + ' of ' + str(n)) if n else '—'} | {f_x(g_sm)} | {f_x(g_sc)} |")
    lines.append("")

    # Schedule points (e.g. an ablation): every gsparse entry of every case.
    labels = OrderedDict()
    for cases in groups.values():
        for c in cases:
            for e in c["results"]:
                if e.get("competitor") == "gsparse":
                    labels.setdefault(e.get("label") or e.get("schedule") or "default", None)
    if len(labels) > 1:
        names = list(labels)
        lines += ["## gsparse schedule points", "",
                  "Median ms per schedule point (FAIL: output check failed; err: did not run).", "",
                  "| graph | order | op | F | " + " | ".join(names) + " |",
                  "|---|---|---|---:|" + "---:|" * len(names)]
        for (graph, order, scale, op), cases in groups.items():
            for c in cases:
                cells = {}
                for e in c["results"]:
                    if e.get("competitor") != "gsparse":
                        continue
                    name = e.get("label") or e.get("schedule") or "default"
                    if ok_time(e) and (e.get("check") or {}).get("ok", False):
                        cells[name] = f_ms(e["median_ms"])
                    elif ok_time(e):
                        cells[name] = "FAIL"
                    else:
                        cells[name] = "err"
                if cells:
                    lines.append(f"| {graph} | {order} | {op} | {c.get('F')} | " +
                                 " | ".join(cells.get(n, "") for n in names) + " |")
        lines.append("")

    errors = defaultdict(list)
    for (graph, order, scale, op), cases in groups.items():
        for c in cases:
            where = f"{graph}/{order} F={c.get('F')} {op}"
            for err in c.get("errors") or []:
                errors[str(err).splitlines()[0][:200]].append(where)
            for e in c["results"]:
                if e.get("error"):
                    errors[f"{e.get('competitor')}: {str(e['error']).splitlines()[0][:200]}"].append(where)
    if errors:
        lines += ["## Errors and skipped measurements", ""]
        for err, where in sorted(errors.items()):
            lines.append(f"- {err} — {len(where)} case(s): {where[0]}" + (f" ... {where[-1]}" if len(where) > 1 else ""))
        lines.append("")
    Path(path).write_text("\n".join(lines))
    return summary


def write_plots(out_dir, title, groups):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter
    except ImportError:
        print("report.py: matplotlib is not installed; no plots written", file=sys.stderr)
        return []
    written = []
    graphs = OrderedDict()
    for (graph, order, scale, op), cases in groups.items():
        graphs.setdefault((graph, order, scale), OrderedDict())[op] = cases
    if not graphs:
        return written
    n = len(graphs)
    cols = min(3, n)
    rows = (n + cols - 1) // cols

    # speedup.png
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.8 * rows), squeeze=False)
    any_data = False
    for ax, ((graph, order, scale), ops) in zip(axes.flat, graphs.items()):
        plotted = False
        for i, (op, cases) in enumerate(ops.items()):
            color = f"C{i}"
            fs, ref, sm = [], [], []
            ref_label = None
            for c in cases:
                p = pick(c)
                if "cusparse" in p:
                    r, ref_label = ratio(p, "cusparse", "gsparse"), "vs best cuSPARSE"
                else:
                    r, ref_label = ratio(p, "scatter", "gsparse"), "vs best torch scatter"
                fs.append(c.get("F"))
                ref.append(r)
                sm.append(ratio(p, "sparse.mm", "gsparse"))
            pts = [(f, r) for f, r in zip(fs, ref) if r is not None]
            if pts:
                any_data = plotted = True
                ax.plot([f for f, _ in pts], [r for _, r in pts], "o-", color=color, label=f"{op} {ref_label}")
            pts = [(f, r) for f, r in zip(fs, sm) if r is not None]
            if pts:
                any_data = plotted = True
                ax.plot([f for f, _ in pts], [r for _, r in pts], "s--", color=color, alpha=0.6,
                        label=f"{op} vs torch.sparse.mm")
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}x"))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
        ax.set_xlabel("F (feature length)")
        ax.set_ylabel("speedup of gsparse")
        scale_txt = f", scale {scale:g}" if scale not in (None, 1.0) else ""
        ax.set_title(f"{graph} ({order}{scale_txt})", fontsize=10)
        if plotted:
            ax.legend(fontsize=7)
        else:
            ax.text(0.5, 0.5, "no gsparse results", ha="center", va="center", transform=ax.transAxes)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.suptitle(f"g-SpMM speedup of gsparse — {title}", fontsize=11)
    fig.tight_layout()
    p = Path(out_dir) / "speedup.png"
    fig.savefig(p, dpi=120)
    plt.close(fig)
    written.append(p)
    if not any_data:
        print("report.py: no case has both gsparse and a baseline; speedup.png shows empty axes", file=sys.stderr)

    # times.png: one row per graph, one column per op.
    all_ops = []
    for ops in graphs.values():
        for op in ops:
            if op not in all_ops:
                all_ops.append(op)
    fig, axes = plt.subplots(len(graphs), len(all_ops), figsize=(4.6 * len(all_ops), 3.4 * len(graphs)),
                             squeeze=False)
    for gi, ((graph, order, scale), ops) in enumerate(graphs.items()):
        for oi, op in enumerate(all_ops):
            ax = axes[gi][oi]
            cases = ops.get(op, [])
            series = defaultdict(list)
            for c in cases:
                p = pick(c)
                for key, label in (("gsparse", "gsparse"), ("cusparse", "best cuSPARSE"),
                                   ("sparse.mm", "torch.sparse.mm"), ("scatter", "best torch scatter")):
                    if key in p:
                        series[label].append((c.get("F"), p[key][0]))
            colors = {"gsparse": "C0", "best cuSPARSE": "C1", "torch.sparse.mm": "C2", "best torch scatter": "C3"}
            for label, pts in series.items():
                ax.plot([f for f, _ in pts], [t for _, t in pts], "o-", color=colors[label], label=label)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("F")
            ax.set_ylabel("median ms")
            ax.set_title(f"{graph} ({order}) {op}", fontsize=9)
            if series:
                ax.legend(fontsize=7)
    fig.suptitle(f"g-SpMM median times — {title}", fontsize=11)
    fig.tight_layout()
    p = Path(out_dir) / "times.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    written.append(p)
    return written


def run_report(argv, *, prog: str, description: str, report_md: str, merged_json: str, heading: str,
               group_cases, write_markdown, write_plots, benchmark_line) -> int:
    """The command line shared by the report scripts: reads the inputs, merges their records, and
    writes report_md, the plots and merged_json into the output folder. benchmark_line(meta, timing)
    gives the subtitle line of one input's metadata (None to leave it out)."""
    ap = argparse.ArgumentParser(prog=prog, description=description)
    ap.add_argument("inputs", nargs="+", help="JSON files")
    ap.add_argument("--out-dir", help="output folder (default: benchmarks/results/<date>-<device-slug>)")
    ap.add_argument("--results-root", default=str(Path(__file__).resolve().parent / "results"),
                    help="parent of the default output folder")
    ap.add_argument("--title", help="title (default: device and date)")
    ap.add_argument("--copy-inputs", action="store_true", help="also copy the input files into the output folder")
    ap.add_argument("--print-dir", action="store_true", help="print only the output folder on stdout")
    args = ap.parse_args(argv)

    inputs = [p for p in args.inputs if Path(p).is_file()]
    for p in args.inputs:
        if p not in inputs:
            print(f"{prog}: warning: {p} does not exist; ignored", file=sys.stderr)
    if not inputs:
        print(f"{prog}: error: no input file exists", file=sys.stderr)
        return 1
    metas, records = load_inputs(inputs)
    devices = sorted({m.get("device") for m in metas if m.get("device")} |
                     {r.get("device") for r in records if r.get("device")})
    dates = sorted({m.get("date") for m in metas if m.get("date")} |
                   {r.get("date") for r in records if r.get("date")})
    device = " + ".join(devices) if devices else "unknown device"
    date = dates[-1] if dates else "unknown-date"
    if len(devices) > 1:
        print(f"{prog}: warning: the inputs come from several devices: {device}", file=sys.stderr)
    out_dir = Path(args.out_dir) if args.out_dir else Path(args.results_root) / f"{date}-{slug(device)}"
    out_dir.mkdir(parents=True, exist_ok=True)

    cases = merge(records)
    groups = group_cases(cases)
    copy_bw = None
    for m in metas:
        cb = m.get("copy_bandwidth")
        if isinstance(cb, dict) and cb.get("read_write_bytes_per_s"):
            copy_bw = cb["read_write_bytes_per_s"]
    title = args.title or f"{device}, {date if len(dates) <= 1 else ' .. '.join([dates[0], dates[-1]])}"
    sub = [f"device: {device}", f"date (UTC): {', '.join(dates) if dates else 'unknown'}",
           "inputs: " + ", ".join(f"{Path(m['file']).name} ({m.get('benchmark', '?')})" for m in metas)]
    for m in metas:
        o = m.get("options") or {}
        timing = (f"{o.get('warmup', '?')} warm-up + {o.get('runs', '?')} runs, "
                  f"L2 flush {'on' if o.get('flush_l2') else 'off'}")
        line = benchmark_line(m, timing)
        if line:
            sub.append(line)
    write_markdown(out_dir / report_md, f"{heading} — {title}", sub, groups, copy_bw)
    plots = write_plots(out_dir, title, groups)
    with open(out_dir / merged_json, "w") as f:
        json.dump({"metadata": metas, "records": cases}, f, indent=1)
    if args.copy_inputs:
        for p in inputs:
            dst = out_dir / Path(p).name
            if Path(p).resolve() != dst.resolve():
                shutil.copyfile(p, dst)
    if args.print_dir:
        print(out_dir)
    else:
        print(f"{prog}: wrote {out_dir / report_md}" + "".join(f", {p}" for p in plots) +
              f", {out_dir / merged_json}")
    return 0


def benchmark_line(m: dict, timing: str):
    if m.get("benchmark") == "gsparse-bench-spmm":
        return (f"gsparse-bench-spmm: CUDA driver {m.get('driver_version', '?')}, runtime "
                f"{m.get('runtime_version', '?')}, cuSPARSE {m.get('cusparse_version', '?')}; {timing}")
    if m.get("benchmark") == "torch_baselines.py":
        pyg = m.get("torch_geometric_version")
        return (f"torch_baselines.py: torch {m.get('torch_version', '?')} (CUDA "
                f"{m.get('torch_cuda_version', '?')})" + (f", torch_geometric {pyg}" if pyg else "") + f"; {timing}")
    return None


def main(argv=None) -> int:
    return run_report(argv, prog="report.py",
                      description="Merge gsparse-bench-spmm / torch_baselines.py JSON into a report",
                      report_md="report.md", merged_json="merged.json",
                      heading="g-SpMM: gsparse vs cuSPARSE and PyTorch", group_cases=group_cases,
                      write_markdown=write_markdown, write_plots=write_plots, benchmark_line=benchmark_line)


if __name__ == "__main__":
    sys.exit(main())
