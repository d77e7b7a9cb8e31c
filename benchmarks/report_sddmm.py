#!/usr/bin/env python3
"""Merges the JSON outputs of gsparse-bench-sddmm and torch_sddmm_baselines.py into the g-SDDMM report.

  report_sddmm.py sddmm.json torch_sddmm.json [--out-dir DIR] [--title TEXT]

Records describing the same case (graph, order, scale, F, op) are merged as in report.py (whose
helpers this module uses). Per case:
  gsparse        the fastest gsparse entry with a full timing whose output passed its check
  cuSPARSE       cusparse.SDDMM (cached: descriptors, workspace and cusparseSDDMM_preprocess once)
  sampled_addmm  torch.sparse.sampled_addmm
  gather         torch.gather_mul_sum (dot) or torch.gather_OP (element-wise ops)
Written into DIR (default benchmarks/results/<date>-<device-slug>/, next to the g-SpMM report, so
every file name starts with sddmm_):
  sddmm_report.md    per graph/order/op: F vs times, speedups, lane width chosen, achieved bandwidth
                     (also as a fraction of the device's copy bandwidth), geometric means; a summary
                     against the targets (geomean >= 1.5x cuSPARSE on every twin and order, >= 2x
                     sampled_addmm, no F slower than cuSPARSE); the lane width chosen per F; the time
                     per lane width (best over block sizes; screening medians where no full timing)
  sddmm_speedup.png  speedup of gsparse vs F per graph/order (over cuSPARSE, sampled_addmm, gather)
  sddmm_times.png    median time vs F of every competitor per graph/order
  sddmm_lanes.png    the lane width chosen vs F per graph/order
  sddmm_merged.json  the merged records and every input's metadata
"""

from __future__ import annotations

import sys
from collections import OrderedDict, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report as base  # noqa: E402  (slug, load_inputs, merge, ok_time, geomean, f_ms, f_x, f_gbs)

TARGET_CUSPARSE = 1.5
TARGET_SAMPLED_ADDMM = 2.0


def gsparse_entries(case):
    return [e for e in case["results"] if e.get("competitor") == "gsparse"]


def passed(e):
    return e.get("ok") and (e.get("check") or {}).get("ok", False)


def pick(case):
    """dict name -> (median_ms, entry, note) for gsparse, cusparse, sampled_addmm and gather."""
    out = {}
    gs = [e for e in gsparse_entries(case) if base.ok_time(e) and passed(e)]
    if gs:
        b = min(gs, key=lambda e: e["median_ms"])
        out["gsparse"] = (b["median_ms"], b, b.get("label") or b.get("schedule") or "")
    for key, test in (("cusparse", lambda n: n == "cusparse.SDDMM"),
                      ("sampled_addmm", lambda n: n == "torch.sparse.sampled_addmm"),
                      ("gather", lambda n: n.startswith("torch.gather_"))):
        es = [e for e in case["results"] if test(str(e.get("competitor", ""))) and base.ok_time(e)
              and (e.get("check") or {}).get("ok", True)]  # a baseline whose output failed its check is left out
        if es:
            b = min(es, key=lambda e: e["median_ms"])
            out[key] = (b["median_ms"], b, b["competitor"])
    return out


def speedup(p, other):
    if other in p and "gsparse" in p and p["gsparse"][0] > 0:
        return p[other][0] / p["gsparse"][0]
    return None


def knob(entry, name):
    params = entry.get("params") if entry else None
    return params.get(name) if isinstance(params, dict) else None


def edge_order(entry):
    """' S<T>' for edges grouped by source tiles of T, ' G' for destination order, else ''."""
    if knob(entry, "kSrcTile"):
        return f" S{knob(entry, 'kSrcTile')}"
    return " G" if knob(entry, "groupByDst") else ""


def lane_times(case):
    """kLaneWidth -> (best time over block sizes, 'full' or 'screen') of the checked gsparse points."""
    out = {}
    for e in gsparse_entries(case):
        lanes = knob(e, "kLaneWidth")
        if lanes is None or not passed(e):
            continue
        if base.ok_time(e):
            t, kind = e["median_ms"], "full"
        elif isinstance((e.get("screen") or {}).get("median_ms"), (int, float)):
            t, kind = e["screen"]["median_ms"], "screen"
        else:
            continue
        if lanes not in out or t < out[lanes][0]:
            out[lanes] = (t, kind)
    return out


def gsparse_status(case):
    for e in gsparse_entries(case):
        if not e.get("ok") and e.get("error") and not e.get("rejected"):
            return "error: " + str(e["error"]).splitlines()[0][:120]
    if any(e.get("ok") and not passed(e) for e in gsparse_entries(case)):
        return "output check failed"
    if case.get("gsparse_error"):
        return "error: " + str(case["gsparse_error"]).splitlines()[0][:120]
    return "not run"


def group_cases(cases):
    groups = OrderedDict()
    for c in sorted(cases, key=lambda c: (c.get("source") != "twin", c.get("graph", ""), c.get("order", ""),
                                          c.get("op", ""), int(c.get("F", 0)))):
        groups.setdefault((c.get("graph"), c.get("order"), c.get("scale"), c.get("op")), []).append(c)
    return groups


def write_markdown(path, title, sub, groups, copy_bw):
    L = [f"# {title}", ""] + [f"- {s}" for s in sub]
    L += ["- times: median ms of CUDA-event-timed runs after warm-up, L2 flushed before every run; speedup = "
          "competitor time / gsparse time (> 1: gsparse faster); geometric means over the F values where both ran",
          "- GB/s: compulsory bytes (CSR pattern, X, Y and Z once) / gathered bytes (CSR pattern + both operand "
          "rows of every edge + Z) per second" +
          (f"; % copy = compulsory rate / device-to-device copy bandwidth {copy_bw / 1e12:.2f} TB/s (read + write)"
           if copy_bw else ""), ""]
    summary = []
    for (graph, order, scale, op), cases in groups.items():
        c0 = cases[0]
        scale_txt = f", scale {scale:g}" if scale not in (None, 1.0) else ""
        L += [f"## {graph} ({order}{scale_txt}) — {op}", "",
              f"{c0.get('nodes', '?')} nodes, {c0.get('nnz', '?')} edges", "",
              "| F | gsparse | lanes | kMTile (x R, order) | cuSPARSE | sampled_addmm | gather | vs cuSPARSE | vs sampled_addmm | "
              "vs gather | gsparse GB/s | % copy | cuSPARSE GB/s |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        s_cs, s_sa, s_ga = [], [], []
        notes = set()
        for c in cases:
            p = pick(c)
            r_cs, r_sa, r_ga = speedup(p, "cusparse"), speedup(p, "sampled_addmm"), speedup(p, "gather")
            s_cs.append((c.get("F"), r_cs))
            s_sa.append(r_sa)
            s_ga.append(r_ga)
            if "gsparse" not in p:
                notes.add(gsparse_status(c))
            gs, cs = p.get("gsparse"), p.get("cusparse")
            gs_e = gs[1] if gs else None
            rate = gs_e.get("compulsory_bytes_per_s") if gs_e else None
            pct = f"{100 * rate / copy_bw:.0f}%" if copy_bw and isinstance(rate, (int, float)) else "—"
            L.append(
                f"| {c.get('F')} | {base.f_ms(gs[0]) if gs else '—'} | {knob(gs_e, 'kLaneWidth') or '—'}"
                f"{' x ' + str(knob(gs_e, 'kVecWidth')) if knob(gs_e, 'kVecWidth') else ''} | "
                f"{knob(gs_e, 'kMTile') or '—'}"
                f"{' x ' + str(knob(gs_e, 'kMRegTile')) if (knob(gs_e, 'kMRegTile') or 1) > 1 else ''}"
                f"{edge_order(gs_e)} | "
                f"{base.f_ms(cs[0]) if cs else '—'} | "
                f"{base.f_ms(p['sampled_addmm'][0]) if 'sampled_addmm' in p else '—'} | "
                f"{base.f_ms(p['gather'][0]) if 'gather' in p else '—'} | "
                f"{base.f_x(r_cs)} | {base.f_x(r_sa)} | {base.f_x(r_ga)} | "
                f"{(base.f_gbs(rate) + ' / ' + base.f_gbs(gs_e.get('gathered_bytes_per_s'))) if gs_e else '—'} | "
                f"{pct} | "
                f"{(base.f_gbs(cs[1].get('compulsory_bytes_per_s')) + ' / ' + base.f_gbs(cs[1].get('gathered_bytes_per_s'))) if cs else '—'} |")
        g_cs = base.geomean([r for _, r in s_cs])
        g_sa, g_ga = base.geomean(s_sa), base.geomean(s_ga)
        L += [f"| **geomean** | | | | | | | **{base.f_x(g_cs)}** | **{base.f_x(g_sa)}** | **{base.f_x(g_ga)}** | | | |", ""]
        L += [f"- gsparse: {n}" for n in sorted(notes)] + ([""] if notes else [])
        valid = [(f, r) for f, r in s_cs if r is not None]
        summary.append({"graph": graph, "order": order, "op": op, "twin": c0.get("source") == "twin",
                        "g_cs": g_cs, "g_sa": g_sa, "g_ga": g_ga, "n": len(valid),
                        "worst": min(valid, key=lambda x: x[1]) if valid else None,
                        "slower": [f for f, r in valid if r < 1.0]})

    def verdict(x, target):
        return "—" if x is None else ("met" if x >= target else "missed")

    L += ["## Summary against the targets", "",
          f"Targets (twins, both id orders): geomean >= {TARGET_CUSPARSE}x over cached cusparseSDDMM, "
          f">= {TARGET_SAMPLED_ADDMM}x over torch.sparse.sampled_addmm, no F slower than cached cuSPARSE.", "",
          "| graph | order | op | geomean vs cuSPARSE | target | geomean vs sampled_addmm | target | "
          "worst F vs cuSPARSE | F slower than cuSPARSE | geomean vs gather |",
          "|---|---|---|---:|---|---:|---|---:|---|---:|"]
    for s in summary:
        worst = f"{base.f_x(s['worst'][1])} (F={s['worst'][0]})" if s["worst"] else "—"
        slower = ("none" if not s["slower"] else ", ".join(str(f) for f in s["slower"])) if s["n"] else "—"
        L.append(f"| {s['graph']} | {s['order']} | {s['op']} | {base.f_x(s['g_cs'])} | "
                 f"{verdict(s['g_cs'], TARGET_CUSPARSE) if s['twin'] else ''} | {base.f_x(s['g_sa'])} | "
                 f"{verdict(s['g_sa'], TARGET_SAMPLED_ADDMM) if s['twin'] else ''} | {worst} | {slower} | "
                 f"{base.f_x(s['g_ga'])} |")
    L.append("")

    # Lane width chosen per F.
    feats = sorted({int(c.get("F", 0)) for cases in groups.values() for c in cases})
    L += ["## Lane width chosen per F", "",
          "kLaneWidth x kVecWidth / threads per block (kMTile x kLaneWidth), and x R for R edges per thread "
          "(kMRegTile), of the fastest checked gsparse point; S<T>: edges grouped by tiles of T source ids "
          "(groupByDst = 1, kSrcTile = T), G: destination order (groupByDst = 1).", "",
          "| graph | order | op | " + " | ".join(f"F={f}" for f in feats) + " |",
          "|---|---|---|" + "---:|" * len(feats)]
    for (graph, order, scale, op), cases in groups.items():
        cells = {}
        for c in cases:
            gs = pick(c).get("gsparse")
            lanes, tile = knob(gs[1], "kLaneWidth") if gs else None, knob(gs[1], "kMTile") if gs else None
            vec = knob(gs[1], "kVecWidth") if gs else None
            reg = knob(gs[1], "kMRegTile") if gs else None
            cells[int(c.get("F", 0))] = (f"{lanes}x{vec or 1} / {lanes * tile}{f' x {reg}' if reg and reg > 1 else ''}"
                                          f"{edge_order(gs[1])}"
                                          if lanes and tile else ("default" if gs else "—"))
        L.append(f"| {graph} | {order} | {op} | " + " | ".join(cells.get(f, "") for f in feats) + " |")
    L.append("")

    # Time per lane width.
    L += ["## Time per lane width", "",
          "Median ms of the best block size for each kLaneWidth (s: screening median, 1 warm-up + a few runs; "
          "bold: chosen).", "",
          "| graph | order | op | F | L=1 | L=2 | L=4 | L=8 | L=16 | L=32 |", "|---|---|---|---:|" + "---:|" * 6]
    for (graph, order, scale, op), cases in groups.items():
        for c in cases:
            lt = lane_times(c)
            if not lt:
                continue
            gs = pick(c).get("gsparse")
            chosen = knob(gs[1], "kLaneWidth") if gs else None
            row = []
            for lanes in (1, 2, 4, 8, 16, 32):
                if lanes not in lt:
                    row.append("")
                    continue
                t, kind = lt[lanes]
                txt = base.f_ms(t) + (" s" if kind == "screen" else "")
                row.append(f"**{txt}**" if lanes == chosen else txt)
            L.append(f"| {graph} | {order} | {op} | {c.get('F')} | " + " | ".join(row) + " |")
    L.append("")

    errors = defaultdict(list)
    rejected = defaultdict(list)
    for (graph, order, scale, op), cases in groups.items():
        for c in cases:
            where = f"{graph}/{order} F={c.get('F')} {op}"
            for err in c.get("errors") or []:
                errors[str(err).splitlines()[0][:200]].append(where)
            for e in c["results"]:
                if e.get("error"):
                    target = rejected if e.get("rejected") else errors
                    target[f"{e.get('competitor')}: {str(e['error']).splitlines()[0][:200]}"].append(where)
    for head, table in (("Errors and skipped measurements", errors), ("Schedule points gsparse rejected", rejected)):
        if table:
            L += [f"## {head}", ""]
            for err, where in sorted(table.items()):
                L.append(f"- {err} — {len(where)} case(s): {where[0]}" + (f" ... {where[-1]}" if len(where) > 1 else ""))
            L.append("")
    Path(path).write_text("\n".join(L))
    return summary


def write_plots(out_dir, title, groups):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter
    except ImportError:
        print("report_sddmm.py: matplotlib is not installed; no plots written", file=sys.stderr)
        return []
    if not groups:
        return []
    keys = list(groups)
    n = len(keys)
    cols = min(3, n)
    rows = (n + cols - 1) // cols
    written = []

    def grid(figsize_per):
        fig, axes = plt.subplots(rows, cols, figsize=(figsize_per[0] * cols, figsize_per[1] * rows), squeeze=False)
        for ax in list(axes.flat)[n:]:
            ax.axis("off")
        return fig, axes

    def label(key):
        graph, order, scale, op = key
        return f"{graph} ({order}{', scale %g' % scale if scale not in (None, 1.0) else ''}) {op}"

    # Speedups.
    fig, axes = grid((5.2, 3.8))
    for ax, key in zip(axes.flat, keys):
        plotted = False
        for other, style, name in (("cusparse", "o-", "vs cached cusparseSDDMM"),
                                   ("sampled_addmm", "s--", "vs torch.sparse.sampled_addmm"),
                                   ("gather", "^:", "vs torch gather")):
            pts = [(c.get("F"), speedup(pick(c), other)) for c in groups[key]]
            pts = [(f, r) for f, r in pts if r is not None]
            if pts:
                plotted = True
                ax.plot([f for f, _ in pts], [r for _, r in pts], style, label=name)
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.axhline(TARGET_CUSPARSE, color="C0", lw=0.6, ls="--", alpha=0.5)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}x"))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
        ax.set_xlabel("F (feature length)")
        ax.set_ylabel("speedup of gsparse")
        ax.set_title(label(key), fontsize=9)
        if plotted:
            ax.legend(fontsize=7)
        else:
            ax.text(0.5, 0.5, "no gsparse results", ha="center", va="center", transform=ax.transAxes)
    fig.suptitle(f"g-SDDMM speedup of gsparse — {title}", fontsize=11)
    fig.tight_layout()
    p = Path(out_dir) / "sddmm_speedup.png"
    fig.savefig(p, dpi=120)
    plt.close(fig)
    written.append(p)

    # Times.
    fig, axes = grid((5.0, 3.6))
    for ax, key in zip(axes.flat, keys):
        series = defaultdict(list)
        for c in groups[key]:
            p_ = pick(c)
            for k, name in (("gsparse", "gsparse"), ("cusparse", "cusparseSDDMM (cached)"),
                            ("sampled_addmm", "torch.sparse.sampled_addmm"), ("gather", "torch gather")):
                if k in p_:
                    series[name].append((c.get("F"), p_[k][0]))
        for name, pts in series.items():
            ax.plot([f for f, _ in pts], [t for _, t in pts], "o-", label=name)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("F")
        ax.set_ylabel("median ms")
        ax.set_title(label(key), fontsize=9)
        if series:
            ax.legend(fontsize=7)
    fig.suptitle(f"g-SDDMM median times — {title}", fontsize=11)
    fig.tight_layout()
    p = Path(out_dir) / "sddmm_times.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    written.append(p)

    # Lane width chosen.
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for i, key in enumerate(keys):
        pts = []
        for c in groups[key]:
            gs = pick(c).get("gsparse")
            lanes = knob(gs[1], "kLaneWidth") if gs else None
            if lanes:
                pts.append((c.get("F"), lanes * (1 + 0.03 * (i - n / 2))))  # slight offset to separate lines
        if pts:
            ax.plot([f for f, _ in pts], [v for _, v in pts], "o-", ms=3, lw=1, label=label(key))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
    ax.set_xlabel("F")
    ax.set_ylabel("kLaneWidth chosen")
    ax.set_title(f"g-SDDMM lane width chosen — {title}", fontsize=9)
    if ax.lines:
        ax.legend(fontsize=6)
    fig.tight_layout()
    p = Path(out_dir) / "sddmm_lanes.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    written.append(p)
    return written


def benchmark_line(m: dict, timing: str):
    o = m.get("options") or {}
    if m.get("benchmark") == "gsparse-bench-sddmm":
        screen = (f"; gsparse points screened with 1 + {o['screen_runs']} runs, {o.get('finalists')} finalists "
                  "timed in full" if o.get("screen_runs") else "")
        return (f"gsparse-bench-sddmm: CUDA driver {m.get('driver_version', '?')}, runtime "
                f"{m.get('runtime_version', '?')}, cuSPARSE {m.get('cusparse_version', '?')}; {timing}{screen}")
    if m.get("benchmark") == "torch_sddmm_baselines.py":
        return (f"torch_sddmm_baselines.py: torch {m.get('torch_version', '?')} (CUDA "
                f"{m.get('torch_cuda_version', '?')}); {timing}")
    return None


def main(argv=None) -> int:
    return base.run_report(argv, prog="report_sddmm.py",
                           description="Merge gsparse-bench-sddmm / torch_sddmm_baselines.py JSON into a report",
                           report_md="sddmm_report.md", merged_json="sddmm_merged.json",
                           heading="g-SDDMM: gsparse vs cuSPARSE and PyTorch", group_cases=group_cases,
                           write_markdown=write_markdown, write_plots=write_plots, benchmark_line=benchmark_line)


if __name__ == "__main__":
    sys.exit(main())
