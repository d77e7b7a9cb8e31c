"""The built-in g-SpMM operators against the same algorithms written as user programs, on the GPU.

Each case runs gsparse.gspmm(g, op, "sum", lhs, rhs) (the built-in operator at its default schedule)
and Plugin.builtin_program(op, "sum", lhs_shape, rhs_shape) (dsl/builtin_programs.h: the same
operator through the public DSL) under the default user schedule and at every point of a small grid
of the example plugin's schedules (GRIDS: staged_tiles with and without aligned vector rows,
nonzero_scatter), on the same graph, operands and stream:
- copy_lhs: lhs [num_src, F];
- u_mul_e: lhs [num_src, F], one weight an edge (rhs [num_edges, 1]);
- u_mul_e_heads: 4 heads, lhs [num_src, 4, F / 4], one weight an edge and head (rhs [num_edges, 4, 1];
  the user program reads it through Columns); F a multiple of 4.
"best" is the fastest user form on the graph itself. "replay" runs the built-in schedule written with
the public directives (the schedule builtin_gpu_spmm, dsl/builtin_schedules.h) at the very point the
built-in operator takes on the graph (Graph.default_schedule): the same algorithm and the same
schedule through the public API, where the port expresses that point (not: row tails, source tiles,
the relabeled graph; the reason is recorded). Median of --runs CUDA-event times after
--warmup calls; every kernel's result is checked against the built-in operator's first. Writes
summary.json, report.md and report.png to --out after each F.

    python benchmarks/builtin_programs.py --plugin libgsparse_example_plugin.so \
        --graph cl-8m=/g/cl-8m.gcsr --graph knn-h-5m=/g/knn-h-5m.gcsr:heldout --feat 4 --feat 32 --out results/dir
"""

import argparse
import datetime
import itertools
import os
import re

import torch

import gsparse
from cuda_timing import time_cuda
from edge_schedules import geomean, load_graphs, write_summary

GRIDS = {
    "staged_tiles": {"rows": (8, 32), "nnz_tile": (32,), "feature_threads": (0,), "register_tile": (1, 2),
                     "vector": (1, 4)},
    "nonzero_scatter": {"run": (8, 32), "feature_threads": (0,), "block": (256,), "task_runs": (512,),
                        "warp_steps": (0, 4)},
}
HEADS = 4


def grid_points(schedule):
    grid = GRIDS[schedule]
    keys = sorted(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


def operators(F):
    """(name, op, lhs feature shape, rhs feature shape) of the cases at F."""
    cases = [("copy_lhs", "copy_lhs", [F], []), ("u_mul_e", "mul", [F], [1])]
    if F % HEADS == 0 and F > HEADS:
        cases.append(("u_mul_e_heads", "mul", [HEADS, F // HEADS], [HEADS, 1]))
    return cases


def builtin_point(g, op, lf, rf):
    """The built-in operator's default point on g as (schedule name, {knob: value})."""
    text = g.default_schedule("spmm", op, "sum", lhs_feat=lf, rhs_feat=rf, device="cuda")
    m = re.fullmatch(r"(\w+)\{(.*)\}", text)
    name, body = (m.group(1), m.group(2)) if m else (text, "")
    return name, {k.strip(): int(v) for k, v in (kv.split("=") for kv in body.split(",") if kv.strip())}


def replay(plugin, g, op, lf, rf):
    """The port of the built-in schedule at the built-in operator's point on g, or (None, why)."""
    name, point = builtin_point(g, op, lf, rf)
    if name != "gpu_spmm" or len(lf) > 1:
        return None, f"{name} point (the port is of gpu_spmm over one feature dimension)"
    try:
        return plugin.builtin_program(op, "sum", lf, rf, device="cuda", schedule="builtin_gpu_spmm", point=point), ""
    except gsparse.ScheduleError as e:
        return None, str(e)


def user_forms(plugin, op, lf, rf, F):
    """(schedule point, program) of the default user schedule and the grids' valid points."""
    forms = [plugin.builtin_program(op, "sum", lf, rf, device="cuda")]
    for schedule in GRIDS:
        if schedule not in plugin.schedules:
            continue
        valid = plugin.schedule_space(F, "cuda", schedule=schedule)
        forms += [plugin.builtin_program(op, "sum", lf, rf, device="cuda", schedule=schedule, point=p)
                  for p in grid_points(schedule) if p in valid]
    return forms


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--graph", action="append", required=True, help="NAME=FILE[:heldout]")
    ap.add_argument("--feat", type=int, action="append", help="feature lengths (default: 1, 4, 32, 128)")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    feats = args.feat or [1, 4, 32, 128]
    plugin = gsparse.load_plugin(args.plugin)
    os.makedirs(args.out, exist_ok=True)
    device = torch.cuda.get_device_name()
    graphs = load_graphs(args.graph)
    cases = []
    for F in feats:
        for name, op, lf, rf in operators(F):
            forms = user_forms(plugin, op, lf, rf, F)
            for gname, split, g in graphs:
                gen = torch.Generator(device="cuda").manual_seed(7)
                lhs = torch.randn([g.num_src] + lf, generator=gen, device="cuda")
                rhs = torch.randn([g.num_edges] + rf, generator=gen, device="cuda") if rf else None
                ops = {"lhs": lhs.view(g.num_src, -1)}
                if rhs is not None:
                    ops["rhs"] = rhs.view(g.num_edges, -1)

                def builtin():
                    return gsparse.gspmm(g, op, "sum", lhs, rhs).reshape(g.num_dst, F)

                want = builtin()
                tol = 1e-4 * (1 + want.abs().max().item())
                row = {"graph": gname, "split": split, "op": name, "F": F, "edges": g.num_edges,
                       "builtin_ms": time_cuda(builtin, args.warmup, args.runs)[0], "points": [], "user_ms": []}
                for k in forms:
                    err = (k(g, **ops) - want).abs().max().item()
                    if not err <= tol:
                        raise SystemExit(f"{gname} F={F} {name} {k.schedule}: differs from the built-in by {err}")
                    row["points"].append(k.schedule)
                    row["user_ms"].append(time_cuda(lambda k=k: k(g, **ops), args.warmup, args.runs)[0])
                port, why = replay(plugin, g, op, lf, rf)
                row["builtin_point"] = builtin_point(g, op, lf, rf)[1]
                row["replay_ms"], row["replay_not_expressed"] = None, why
                if port is not None:
                    err = (port(g, **ops) - want).abs().max().item()
                    if not err <= tol:
                        raise SystemExit(f"{gname} F={F} {name} builtin_gpu_spmm replay: differs by {err}")
                    row["replay_ms"] = time_cuda(lambda: port(g, **ops), args.warmup, args.runs)[0]
                best = min(range(len(forms)), key=row["user_ms"].__getitem__)
                row.update(default_ms=row["user_ms"][0], best_ms=row["user_ms"][best], best_point=row["points"][best])
                cases.append(row)
                replayed = f"{row['replay_ms']:.3f} ms" if row["replay_ms"] is not None else f"not expressed ({why})"
                print(f"F={F} {name} {gname}: built-in {row['builtin_ms']:.3f} ms, its schedule through the public "
                      f"API {replayed}, default user schedule {row['default_ms']:.3f} ms, best user form "
                      f"{row['best_ms']:.3f} ms ({row['best_point']})", flush=True)
                del lhs, rhs, ops, want
        meta = {"device": device, "date": datetime.date.today().isoformat(), "torch": torch.__version__,
                "runs": args.runs, "warmup": args.warmup, "grids": {s: {k: list(v) for k, v in g.items()}
                                                                    for s, g in GRIDS.items()}}
        write_summary(args.out, meta, cases)
        write_report(cases, meta, os.path.join(args.out, "report.md"))
        plot(cases, os.path.join(args.out, "report.png"), device, meta["date"])


def write_report(cases, meta, path):
    lines = [f"# Built-in g-SpMM against the same operators as user programs ({meta['device']}, {meta['date']})", "",
             f"Median of {meta['runs']} CUDA-event times after {meta['warmup']} warm-up calls. 'A / B' is the "
             "speed-up of A over B (B's time over A's). best: the fastest user form on the graph itself.", "",
             "| op | F | split | replay / built-in (cases) | best user form / built-in | default user schedule / built-in |",
             "|---|---:|---|---:|---:|---:|"]
    for op, F, split in sorted({(c["op"], c["F"], c["split"]) for c in cases}, key=lambda k: (k[0], k[1], k[2])):
        cs = [c for c in cases if (c["op"], c["F"], c["split"]) == (op, F, split)]
        rs = [c for c in cs if c["replay_ms"] is not None]
        replayed = f"{geomean(c['builtin_ms'] / c['replay_ms'] for c in rs):.2f}x ({len(rs)})" if rs else "-"
        lines.append(f"| {op} | {F} | {split} | {replayed} | {geomean(c['builtin_ms'] / c['best_ms'] for c in cs):.2f}x | "
                     f"{geomean(c['builtin_ms'] / c['default_ms'] for c in cs):.2f}x |")
    lines += ["", "| graph | split | op | F | built-in ms | replay ms | default ms | best ms | best point |",
              "|---|---|---|---:|---:|---:|---:|---:|---|"]
    for c in cases:
        replayed = f"{c['replay_ms']:.3f}" if c["replay_ms"] is not None else "-"
        lines.append(f"| {c['graph']} | {c['split']} | {c['op']} | {c['F']} | {c['builtin_ms']:.3f} | {replayed} | "
                     f"{c['default_ms']:.3f} | {c['best_ms']:.3f} | {c['best_point']} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def plot(cases, path, device, date):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot")
        return
    fig, ax = plt.subplots(figsize=(max(8, 0.4 * len(cases)), 4.5))
    for i, (key, label) in enumerate((("default_ms", "default user schedule"), ("best_ms", "best user form"))):
        ax.bar([j + i * 0.4 for j in range(len(cases))], [c["builtin_ms"] / c[key] for c in cases], 0.4, label=label)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_yscale("log")
    ax.set_xticks([j + 0.2 for j in range(len(cases))])
    ax.set_xticklabels([f"{c['graph']}{' (held out)' if c['split'] == 'heldout' else ''} {c['op']} F={c['F']}"
                        for c in cases], rotation=90, fontsize=6)
    ax.set_ylabel("speed-up over the built-in operator")
    ax.legend(fontsize=6)
    ax.set_title(f"built-in g-SpMM as user programs ({device}, {date})", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)


if __name__ == "__main__":
    main()
