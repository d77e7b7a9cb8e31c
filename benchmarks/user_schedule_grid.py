"""A user schedule's grid of points against the default user schedule, the built-in g-SpMM and PyTorch,
on the GPU.

The example plugin's weighted_sum (out[v] = sum over in-edges of x[u] * w[e]) under
- the default user schedule at its default point ("default"),
- one of the plugin's schedules (--schedule) at every valid point of a grid of its knobs (GRIDS):
  staged_tiles (ScheduleContext::stage_neighbours and register_tiles: blocks of rows whose neighbour
  ids are staged in shared memory a tile at a time, each thread's outputs in registers) or
  nonzero_scatter (ScheduleContext::scatter_nonzeros and accumulate_runs: runs of consecutive
  nonzeros a thread, whatever their rows, added to their rows atomically); per F the point of the
  best geometric-mean speed-up over the default on the training graphs is "trained" and reported on
  every graph, held-out ones included, beside the best grid point on the graph itself ("oracle"),
- the built-in operator gsparse.gspmm(g, "mul", "sum", x, w) (its default schedule), and
- PyTorch: index_select of x by source, times w, index_add_ by destination.
Median of --runs CUDA-event times after --warmup calls; every kernel's result is checked against
PyTorch's first. Writes summary.json, report.md and report.png to --out after each F.

    python benchmarks/user_schedule_grid.py --plugin libgsparse_example_plugin.so --schedule staged_tiles \
        --graph cl-8m=/g/cl-8m.gcsr --graph knn-h-5m=/g/knn-h-5m.gcsr:heldout --out results/dir
"""

import argparse
import datetime
import itertools
import os
import time

import torch

import gsparse
from cuda_timing import time_cuda
from edge_schedules import geomean, load_graphs, write_summary

PROGRAM = "weighted_sum"
GRIDS = {
    "staged_tiles": {"rows": (2, 8, 32), "nnz_tile": (16, 32), "feature_threads": (0,),
                     "register_tile": (1, 2, 4), "vector": (1, 4)},
    "nonzero_scatter": {"run": (1, 4, 8, 16, 32, 64), "feature_threads": (0,), "block": (128, 256, 512),
                        "task_runs": (512,), "warp_steps": (0, 1, 4, 16)},
}


def grid_points(schedule):
    grid = GRIDS[schedule]
    keys = sorted(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--schedule", choices=sorted(GRIDS), default="staged_tiles", help="the plugin's schedule to grid")
    ap.add_argument("--graph", action="append", required=True, help="NAME=FILE[:heldout]")
    ap.add_argument("--feat", type=int, action="append", help="feature lengths (default: 4, 32, 128)")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    feats = args.feat or [4, 32, 128]
    plugin = gsparse.load_plugin(args.plugin)
    if args.schedule not in plugin.schedules:
        raise SystemExit(f"{args.plugin} has no schedule {args.schedule} (schedules: {plugin.schedules})")
    os.makedirs(args.out, exist_ok=True)
    device = torch.cuda.get_device_name()

    graphs = load_graphs(args.graph)

    results, compile_s, done = {}, [], []
    for F in feats:
        # The grid's points that the schedule's rule takes.
        valid = plugin.schedule_space(F, "cuda", schedule=args.schedule)
        kernels = [plugin.program(PROGRAM, F, "cuda", schedule=args.schedule, point=p)
                   for p in grid_points(args.schedule) if p in valid]
        default = plugin.program(PROGRAM, F, "cuda")
        print(f"F={F}: {len(kernels)} valid {args.schedule} points of {len(grid_points(args.schedule))}", flush=True)
        for gname, split, g in graphs:
            src, dst = g.coo(device="cuda")
            src, dst = src.long(), dst.long()
            gen = torch.Generator(device="cuda").manual_seed(7)
            x = torch.randn(g.num_src, F, generator=gen, device="cuda")
            w = torch.randn(g.num_edges, 1, generator=gen, device="cuda")

            def reference():
                return torch.zeros(g.num_dst, F, device="cuda").index_add_(0, dst, x.index_select(0, src) * w)

            want = reference()
            tol = 1e-4 * (1 + want.abs().max().item())

            def checked(what, fn):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                got = fn()
                torch.cuda.synchronize()
                compile_s.append(time.perf_counter() - t0)
                err = (got - want).abs().max().item()
                if not err <= tol:
                    raise SystemExit(f"{gname} F={F} {what}: differs from PyTorch by {err}")
                return time_cuda(fn, args.warmup, args.runs)[0]

            row = {"default": checked(default.schedule, lambda: default(g, x=x, w=w)),
                   "builtin": checked("gsparse.gspmm", lambda: gsparse.gspmm(g, "mul", "sum", x, w)),
                   "torch": time_cuda(reference, args.warmup, args.runs)[0],
                   "grid": [checked(k.schedule, lambda k=k: k(g, x=x, w=w)) for k in kernels]}
            row["points"] = [k.schedule for k in kernels]
            row["default_point"] = default.schedule_on(g)
            results[(F, gname)] = row
            best = min(range(len(kernels)), key=row["grid"].__getitem__)
            print(f"  F={F} {gname}: default {row['default']:.3f} ms, built-in {row['builtin']:.3f} ms, "
                  f"PyTorch {row['torch']:.3f} ms, best grid point {row['grid'][best]:.3f} ms ({row['points'][best]})",
                  flush=True)
            del x, w, want, src, dst
        done.append(F)
        summarize(args, device, graphs, done, results, compile_s)


def summarize(args, device, graphs, done, results, compile_s):
    """The cases of every F timed so far, written to --out (summary.json, report.md, report.png)."""
    cases = []
    train = [n for n, s, _ in graphs if s == "train"]
    for F in done:
        n = len(results[(F, graphs[0][0])]["grid"])
        score = [geomean(results[(F, gname)]["default"] / results[(F, gname)]["grid"][i] for gname in train)
                 for i in range(n)]
        t = max(range(n), key=score.__getitem__) if train else 0
        for gname, split, g in graphs:
            r = results[(F, gname)]
            best = min(range(n), key=r["grid"].__getitem__)
            cases.append({"graph": gname, "split": split, "program": PROGRAM, "F": F, "edges": g.num_edges,
                          "default": r["default_point"], "default_ms": r["default"], "builtin_ms": r["builtin"],
                          "torch_ms": r["torch"], "trained": r["points"][t], "trained_ms": r["grid"][t],
                          "oracle": r["points"][best], "oracle_ms": r["grid"][best], "points_timed": n})
    meta = {"device": device, "date": datetime.date.today().isoformat(), "torch": torch.__version__,
            "runs": args.runs, "warmup": args.warmup, "schedule": args.schedule,
            "grid": {k: list(v) for k, v in GRIDS[args.schedule].items()},
            "first_call_s_median": sorted(compile_s)[len(compile_s) // 2] if compile_s else None}
    write_summary(args.out, meta, cases)
    write_report(cases, meta, os.path.join(args.out, "report.md"))
    plot(cases, os.path.join(args.out, "report.png"), device, meta["date"], args.schedule)


def write_report(cases, meta, path):
    lines = [f"# weighted_sum under the {meta['schedule']} user schedule ({meta['device']}, {meta['date']})", "",
             f"Median of {meta['runs']} CUDA-event times after {meta['warmup']} warm-up calls. trained: the grid "
             "point of the best geometric-mean speed-up over the default user schedule on the training graphs; "
             "oracle: the best grid point on the graph itself; built-in: gsparse.gspmm(g, 'mul', 'sum', x, w).", "",
             "| F | split | trained / default | oracle / default | trained / built-in | default / built-in | "
             "trained / PyTorch |", "|---:|---|---:|---:|---:|---:|---:|"]
    for F, split in sorted({(c["F"], c["split"]) for c in cases}, key=lambda k: (k[0], k[1] != "train")):
        cs = [c for c in cases if (c["F"], c["split"]) == (F, split)]
        lines.append(f"| {F} | {split} | {geomean(c['default_ms'] / c['trained_ms'] for c in cs):.2f}x | "
                     f"{geomean(c['default_ms'] / c['oracle_ms'] for c in cs):.2f}x | "
                     f"{geomean(c['builtin_ms'] / c['trained_ms'] for c in cs):.2f}x | "
                     f"{geomean(c['builtin_ms'] / c['default_ms'] for c in cs):.2f}x | "
                     f"{geomean(c['torch_ms'] / c['trained_ms'] for c in cs):.2f}x |")
    lines += ["", "(Each column 'A / B' is a speed-up of A over B: B's time over A's; above 1, A is faster.)", "",
              "| graph | split | F | PyTorch ms | built-in ms | default ms | trained ms | oracle ms | trained point |",
              "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for c in cases:
        lines.append(f"| {c['graph']} | {c['split']} | {c['F']} | {c['torch_ms']:.3f} | {c['builtin_ms']:.3f} | "
                     f"{c['default_ms']:.3f} | {c['trained_ms']:.3f} | {c['oracle_ms']:.3f} | {c['trained']} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def plot(cases, path, device, date, schedule):
    """Speed-up over PyTorch of the default user schedule, the trained and oracle grid points and the
    built-in operator, per graph and F."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot")
        return
    fig, ax = plt.subplots(figsize=(max(8, 0.45 * len(cases)), 4.5))
    bars = (("default_ms", "default user schedule"), ("trained_ms", f"{schedule}, trained point"),
            ("oracle_ms", f"{schedule}, best grid point"), ("builtin_ms", "built-in gsparse.gspmm"))
    width = 0.8 / len(bars)
    for i, (key, label) in enumerate(bars):
        ax.bar([j + i * width for j in range(len(cases))], [c["torch_ms"] / c[key] for c in cases], width, label=label)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_yscale("log")
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(cases))])
    ax.set_xticklabels([f"{c['graph']}{' (held out)' if c['split'] == 'heldout' else ''} F={c['F']}" for c in cases],
                       rotation=90, fontsize=6)
    ax.set_ylabel("speed-up over PyTorch (index_select, index_add_)")
    ax.legend(fontsize=6)
    ax.set_title(f"weighted_sum under the user schedule {schedule} ({device}, {date})", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)


if __name__ == "__main__":
    main()
