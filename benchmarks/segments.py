#!/usr/bin/env python3
"""g-SpMM by nonzeros (schedule "spmm_segments{run=R}") against gsparse's default and cuSPARSE.

    python3 benchmarks/segments.py GRAPH.gcsr... [--feats 32,128,256] [--runs 16,64] [--out DIR]

Per graph and feature length F, copy_lhs + sum on the GPU, CUDA events, 3 warm-up and 20 timed
calls, median: gsparse's default on the static graph (the learned selector's point), the segment
schedule at every run length on the same CSR as a dynamic graph (edge ids = CSR positions), and
cuSPARSE through torch.sparse (a CSR tensor of ones times the dense features: cusparseSpMM's default
algorithm), all in this process. Every result is checked against the default's before it is timed.
Writes DIR/segments.json, DIR/segments.md and DIR/segments.png (with matplotlib).
"""

import argparse
import json
import os
import sys
import time

import torch

import gsparse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_timing import time_cuda  # noqa: E402


def median_ms(fn):
    """Median CUDA-event time of 20 calls after 3 warm-up calls."""
    return time_cuda(fn, 3, 20)[0]


def bench_graph(path, feats, runs, device):
    name = os.path.basename(path).rsplit(".", 1)[0]
    g = gsparse.Graph.load(path)
    rp, ci, _ = g.csr(device)
    dyn = gsparse.Graph.from_csr(rp, ci, num_src=g.num_src, dynamic=True, validate=False)
    ones = torch.ones(ci.numel(), device=device)
    csr = torch.sparse_csr_tensor(rp.to(torch.int64), ci.to(torch.int64), ones, size=(g.num_dst, g.num_src))
    stats = {"nodes": g.num_dst, "edges": g.num_edges,
             "max_row": int((rp[1:] - rp[:-1]).max()) if g.num_dst else 0}
    print(f"{name}: {g.num_dst} rows, {g.num_edges} edges, longest row {stats['max_row']}", flush=True)
    cases = []
    for F in feats:
        x = torch.rand(g.num_src, F, device=device)
        want = gsparse.gspmm(g, "copy_lhs", "sum", x)
        scale = float(want.abs().max()) or 1.0
        case = {"graph": name, **stats, "F": F}
        case["default_ms"] = median_ms(lambda: gsparse.gspmm(g, "copy_lhs", "sum", x))
        got = torch.sparse.mm(csr, x)
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4 * scale)
        case["cusparse_ms"] = median_ms(lambda: torch.sparse.mm(csr, x))
        case["segments_ms"] = {}
        for run in runs:
            sched = f"spmm_segments{{run={run}}}"
            got = gsparse.gspmm(dyn, "copy_lhs", "sum", x, schedule=sched)
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4 * scale)
            case["segments_ms"][str(run)] = median_ms(lambda: gsparse.gspmm(dyn, "copy_lhs", "sum", x, schedule=sched))
        best = min(case["segments_ms"].values())
        print(f"  F={F}: default {case['default_ms']:.3f} ms, cuSPARSE {case['cusparse_ms']:.3f} ms, segments "
              + ", ".join(f"run {r}: {t:.3f}" for r, t in case["segments_ms"].items())
              + f"  (best segments vs cuSPARSE {case['cusparse_ms'] / best:.2f}x, vs default {case['default_ms'] / best:.2f}x)",
              flush=True)
        cases.append(case)
    return cases


def write_report(out, meta, cases):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "segments.json"), "w") as f:
        json.dump({**meta, "cases": cases}, f, indent=1, default=str)
    lines = [f"# g-SpMM by nonzeros ({meta['device']}, {meta['date']})", "",
             "copy_lhs + sum, median of 20 calls (CUDA events); speed-up = cuSPARSE / gsparse.", "",
             "| graph | longest row | F | cuSPARSE ms | default ms | default vs cuSPARSE | best segments ms (run) | segments vs cuSPARSE |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for c in cases:
        run, best = min(c["segments_ms"].items(), key=lambda kv: kv[1])
        lines.append(f"| {c['graph']} | {c['max_row']} | {c['F']} | {c['cusparse_ms']:.3f} | {c['default_ms']:.3f} | "
                     f"{c['cusparse_ms'] / c['default_ms']:.2f}x | {best:.3f} ({run}) | {c['cusparse_ms'] / best:.2f}x |")
    with open(os.path.join(out, "segments.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    labels = [f"{c['graph']}\nF={c['F']}" for c in cases]
    xs = range(len(cases))
    fig, ax = plt.subplots(figsize=(max(6, len(cases) * 0.9), 4))
    ax.bar([i - 0.2 for i in xs], [c["cusparse_ms"] / c["default_ms"] for c in cases], 0.4, label="default")
    ax.bar([i + 0.2 for i in xs], [c["cusparse_ms"] / min(c["segments_ms"].values()) for c in cases], 0.4,
           label="segments (best run)")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel("speed-up over cuSPARSE")
    ax.set_title(f"g-SpMM copy_lhs + sum, {meta['device']}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "segments.png"), dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--feats", default="32,128,256")
    ap.add_argument("--runs", default="16,64")
    ap.add_argument("--out", default="segments-results")
    args = ap.parse_args()
    device = torch.device("cuda")
    meta = {"device": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d"),
            "torch": torch.__version__}
    feats = [int(f) for f in args.feats.split(",")]
    runs = [int(r) for r in args.runs.split(",")]
    cases = []
    for path in args.graphs:
        cases += bench_graph(path, feats, runs, device)
        write_report(args.out, meta, cases)


if __name__ == "__main__":
    main()
