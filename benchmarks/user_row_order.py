"""User programs with their rows in order of in-degree (ScheduleContext::balanced_rows) against the
natural row order, on the GPU.

For each graph and user program of the example plugin, under both CUDA forms of the default user
schedule (nnz_lanes = 1: a thread per row and feature; nnz_lanes = 0: a block per row with lanes of
nonzeros), the kernel with balanced_rows = 0 and = 1: median of --runs CUDA-event times after
warm-up, the first call of each in this process (compile, the graph's device copy and, for the
ordered kernel, its row order), and the largest relative difference between the two results
(checked before timing). Writes summary.json, report.md and report.png to --out.

    python benchmarks/user_row_order.py --plugin libgsparse_example_plugin.so \
        --graph cl-8m=/g/cl-8m.gcsr --graph knn-8m=/g/knn-8m.gcsr --out results/dir
"""

import argparse
import datetime
import json
import os
import statistics
import time

import torch

import gsparse

# program -> its operands: (name, rows: src|dst|edge, broadcast)
PROGRAMS = ("weighted_sum", "gat_attention")


def operands_for(program, g, F, gen):
    out = {}
    rows = {"source": g.num_src, "destination": g.num_dst, "edge": g.num_edges}
    for name, at, broadcast in program.operands:
        out[name] = torch.randn(rows[at], 1 if broadcast else F, generator=gen, device="cuda") * (
            0.1 if broadcast else 1.0)
    return out


def time_calls(fn, warmup, runs):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times), times


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--graph", action="append", required=True, help="NAME=FILE[:heldout]")
    ap.add_argument("--feat", type=int, action="append")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    feats = args.feat or [64]
    plugin = gsparse.load_plugin(args.plugin)
    os.makedirs(args.out, exist_ok=True)
    device = torch.cuda.get_device_name()
    cases = []
    for spec in args.graph:
        name, path = spec.split("=", 1)
        split = "train"
        if path.endswith(":heldout"):
            path, split = path[: -len(":heldout")], "heldout"
        t0 = time.perf_counter()
        g = gsparse.Graph.load(path)
        load_s = time.perf_counter() - t0
        print(f"{name}: {g.num_dst} rows, {g.num_edges} edges (loaded in {load_s:.2f} s)", flush=True)
        for F in feats:
            for prog_name in PROGRAMS:
                for lanes in (1, 0):
                    results = {}
                    for balanced in (0, 1):
                        point = {"nnz_lanes": lanes, "balanced_rows": balanced}
                        if lanes == 1:
                            point["nnz_steps"] = 4
                        prog = plugin.program(prog_name, F, "cuda", None, point)
                        gen = torch.Generator(device="cuda").manual_seed(7)
                        ops = operands_for(prog, g, F, gen)
                        torch.cuda.synchronize()
                        t0 = time.perf_counter()
                        out = prog(g, **ops)
                        torch.cuda.synchronize()
                        first_s = time.perf_counter() - t0
                        median, times = time_calls(lambda: prog(g, **ops), args.warmup, args.runs)
                        results[balanced] = {"median_ms": median, "times_ms": times, "first_call_s": first_s,
                                             "schedule": prog.schedule, "out": out}
                    a, b = results[0].pop("out"), results[1].pop("out")
                    diff = ((a - b).abs() / (1 + a.abs())).max().item() if a.numel() else 0.0
                    case = {"graph": name, "split": split, "rows": g.num_dst, "edges": g.num_edges, "F": F,
                            "program": prog_name, "form": "threads over rows" if lanes == 1 else "lanes of nonzeros",
                            "natural": results[0], "balanced": results[1], "max_rel_diff": diff,
                            "speedup": results[0]["median_ms"] / results[1]["median_ms"]}
                    cases.append(case)
                    print(f"  F={F} {prog_name:14s} {case['form']:18s} natural {results[0]['median_ms']:8.3f} ms  "
                          f"balanced {results[1]['median_ms']:8.3f} ms  x{case['speedup']:.2f}  "
                          f"(first calls {results[0]['first_call_s']:.2f} / {results[1]['first_call_s']:.2f} s, "
                          f"diff {diff:.1e})", flush=True)
                    if not diff < 1e-4:
                        raise SystemExit(f"{name} {prog_name}: balanced and natural results differ by {diff}")
    meta = {"device": device, "date": datetime.date.today().isoformat(), "torch": torch.__version__,
            "runs": args.runs, "warmup": args.warmup}
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump({"meta": meta, "cases": cases}, f, indent=1)
    lines = [f"# User programs: rows in order of in-degree against the natural order ({device}, {meta['date']})", "",
             f"Median of {args.runs} CUDA-event times after {args.warmup} warm-up calls; speedup = natural / balanced.",
             "", "| graph | split | F | program | form | natural ms | balanced ms | speedup | first call s (nat / bal) |",
             "|---|---|---:|---|---|---:|---:|---:|---:|"]
    for c in cases:
        lines.append(f"| {c['graph']} | {c['split']} | {c['F']} | {c['program']} | {c['form']} | "
                     f"{c['natural']['median_ms']:.3f} | {c['balanced']['median_ms']:.3f} | {c['speedup']:.2f}x | "
                     f"{c['natural']['first_call_s']:.2f} / {c['balanced']['first_call_s']:.2f} |")
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(max(6, len(cases) * 0.45), 4))
        labels = [f"{c['graph']}\n{c['program'][:8]}/{'rows' if c['form'].startswith('threads') else 'lanes'}"
                  for c in cases]
        ax.bar(range(len(cases)), [c["speedup"] for c in cases],
               color=["tab:blue" if c["split"] == "train" else "tab:orange" for c in cases])
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels(labels, rotation=90, fontsize=6)
        ax.set_ylabel("natural / balanced time")
        ax.set_title(f"balanced_rows on {device}, {meta['date']} (orange: held-out graphs)", fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(args.out, "report.png"), dpi=130)
    except ImportError:
        print("matplotlib missing: no plot")


if __name__ == "__main__":
    main()
