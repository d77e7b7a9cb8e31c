"""Per-edge user programs under the points of their CUDA schedule space, against PyTorch's gathers.

For each per-edge program of the example plugin (attention_scores: leaky_relu(a_src[u] + a_dst[v] +
bias[e]) over F heads; u_mul_v: x[u] * y[v] over F features) and feature length, the default edge
schedule's point and a seeded sample of --sample other points of its CUDA space
(Plugin.edge_schedule_space) are compiled once and timed on every graph: median of --runs CUDA-event
times after --warmup calls, every point's result checked against the PyTorch expression first. Per
(program, F) the point of the sample with the best geometric-mean speed-up over the default on the
training graphs is "trained"; it is then reported on every graph, held-out ones included, beside the
default, the best point of the sample on that graph ("oracle", which no default can reach without
measuring) and PyTorch (index_select gathers and elementwise kernels, what the program replaces).
Writes summary.json, report.md and report.png to --out.

    python benchmarks/edge_schedules.py --plugin libgsparse_example_plugin.so \
        --graph cl-8m=/g/cl-8m.gcsr --graph knn-h-5m=/g/knn-h-5m.gcsr:heldout --out results/dir
"""

import argparse
import datetime
import json
import math
import os
import random
import time

import torch

import gsparse
from cuda_timing import time_cuda


def _attention_scores(g, ops, src, dst):
    s = ops["a_src"].index_select(0, src) + ops["a_dst"].index_select(0, dst) + ops["bias"]
    return torch.nn.functional.leaky_relu(s, 0.2)


def _u_mul_v(g, ops, src, dst):
    return ops["x"].index_select(0, src) * ops["y"].index_select(0, dst)


# program -> its PyTorch form, given the operands and the COO in edge-id order
PROGRAMS = {"attention_scores": _attention_scores, "u_mul_v": _u_mul_v}


def operands_for(program, g, F, gen):
    rows = {"source": g.num_src, "destination": g.num_dst, "edge": g.num_edges}
    return {name: torch.randn(rows[at], columns or (1 if broadcast else F), generator=gen, device="cuda")
            for name, at, broadcast, columns in program.operands}


def point_key(point):
    return ", ".join(f"{k}={v}" for k, v in sorted(point.items()))


def geomean(xs):
    xs = list(xs)
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def load_graphs(specs):
    """[(name, "train" | "heldout", Graph)] of --graph NAME=FILE[:heldout] arguments."""
    graphs = []
    for spec in specs:
        name, path = spec.split("=", 1)
        split = "train"
        if path.endswith(":heldout"):
            path, split = path[: -len(":heldout")], "heldout"
        g = gsparse.Graph.load(path)
        graphs.append((name, split, g))
        print(f"{name} ({split}): {g.num_dst} rows, {g.num_src} sources, {g.num_edges} edges", flush=True)
    return graphs


def write_summary(out, meta, cases):
    """out/summary.json: {"meta": ..., "cases": [...]}, a case a line."""
    with open(os.path.join(out, "summary.json"), "w") as f:
        f.write('{"meta": ' + json.dumps(meta) + ',\n "cases": [\n')
        f.write(",\n".join("  " + json.dumps(c) for c in cases))
        f.write("\n]}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--graph", action="append", required=True, help="NAME=FILE[:heldout]")
    ap.add_argument("--feat", type=int, action="append", help="feature lengths (default: 1, 4, 16, 64)")
    ap.add_argument("--programs", default=",".join(PROGRAMS), help=f"comma list of {','.join(PROGRAMS)}")
    ap.add_argument("--sample", type=int, default=24, help="points drawn from the CUDA space besides the default")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    feats = args.feat or [1, 4, 16, 64]
    programs = args.programs.split(",")
    if any(p not in PROGRAMS for p in programs):
        raise SystemExit(f"--programs takes {','.join(PROGRAMS)}")
    plugin = gsparse.load_plugin(args.plugin)
    os.makedirs(args.out, exist_ok=True)
    device = torch.cuda.get_device_name()

    # The points of every (program, F): the default first, then the seeded sample.
    points, compile_s = {}, {}
    for F in feats:
        space = plugin.edge_schedule_space(F, "cuda")
        default = plugin.edge_program(programs[0], F, "cuda").schedule  # the default point as text
        rest = [p for p in space if f"edge_default{{{point_key(p)}}}" != default]
        chosen = random.Random(args.seed * 1000 + F).sample(rest, min(args.sample, len(rest)))
        for prog in programs:
            points[(prog, F)] = [{}] + chosen
        print(f"F={F}: {len(space)} valid CUDA points, {len(chosen)} sampled", flush=True)

    graphs = load_graphs(args.graph)

    # times[(prog, F, graph)] = [ms of each point, in points' order]
    times, torch_ms, schedules, done = {}, {}, {}, []
    for F in feats:
        for prog_name in programs:
            kernels = [plugin.edge_program(prog_name, F, "cuda", point=p) for p in points[(prog_name, F)]]
            schedules[(prog_name, F)] = [k.schedule for k in kernels]
            for gname, split, g in graphs:
                src, dst = g.coo(device="cuda")
                src, dst = src.long(), dst.long()
                gen = torch.Generator(device="cuda").manual_seed(7)
                ops = operands_for(kernels[0], g, F, gen)
                want = PROGRAMS[prog_name](g, ops, src, dst)
                row = []
                for i, k in enumerate(kernels):
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    got = k(g, **ops)
                    torch.cuda.synchronize()
                    if (prog_name, F, i) not in compile_s:
                        compile_s[(prog_name, F, i)] = time.perf_counter() - t0
                    if not torch.allclose(got, want, rtol=1e-5, atol=1e-6):
                        raise SystemExit(f"{gname} {prog_name} F={F} {k.schedule}: differs from PyTorch by "
                                         f"{(got - want).abs().max().item()}")
                    del got
                    row.append(time_cuda(lambda: k(g, **ops), args.warmup, args.runs)[0])
                times[(prog_name, F, gname)] = row
                torch_ms[(prog_name, F, gname)] = time_cuda(lambda: PROGRAMS[prog_name](g, ops, src, dst),
                                                            args.warmup, args.runs)[0]
                best = min(range(len(row)), key=row.__getitem__)
                print(f"  {prog_name} F={F} {gname}: default {row[0]:.3f} ms, best of sample {row[best]:.3f} ms "
                      f"({schedules[(prog_name, F)][best]}), PyTorch {torch_ms[(prog_name, F, gname)]:.3f} ms",
                      flush=True)
                del ops, want, src, dst
            done.append((prog_name, F))
            summarize(args, device, graphs, done, points, times, torch_ms, schedules, compile_s)


def summarize(args, device, graphs, done, points, times, torch_ms, schedules, compile_s):
    """The cases of every (program, F) timed so far, written to --out (summary.json, report.md,
    report.png): called after each, so that a run cut short still reports what it timed."""
    cases = []
    train_graphs = [n for n, s, _ in graphs if s == "train"]
    for prog_name, F in done:
        n = len(points[(prog_name, F)])
        # The point of the best geometric-mean speed-up over the default on the training graphs.
        score = [geomean(times[(prog_name, F, gname)][0] / times[(prog_name, F, gname)][i]
                         for gname in train_graphs) for i in range(n)]
        t = max(range(n), key=lambda i: score[i]) if train_graphs else 0
        for gname, split, g in graphs:
            row = times[(prog_name, F, gname)]
            best = min(range(n), key=row.__getitem__)
            cases.append({"graph": gname, "split": split, "program": prog_name, "F": F, "edges": g.num_edges,
                          "default": schedules[(prog_name, F)][0], "default_ms": row[0],
                          "trained": schedules[(prog_name, F)][t], "trained_ms": row[t],
                          "oracle": schedules[(prog_name, F)][best], "oracle_ms": row[best],
                          "torch_ms": torch_ms[(prog_name, F, gname)], "points_timed": n})
    meta = {"device": device, "date": datetime.date.today().isoformat(), "torch": torch.__version__,
            "runs": args.runs, "warmup": args.warmup, "sample": args.sample, "seed": args.seed,
            "compile_s_median": sorted(compile_s.values())[len(compile_s) // 2] if compile_s else None}
    write_summary(args.out, meta, cases)
    write_report(cases, meta, os.path.join(args.out, "report.md"))
    plot(cases, os.path.join(args.out, "report.png"), device, meta["date"])


def write_report(cases, meta, path):
    lines = [f"# Per-edge user programs under their CUDA schedule points ({meta['device']}, {meta['date']})", "",
             f"Median of {meta['runs']} CUDA-event times after {meta['warmup']} warm-up calls; the default point "
             f"and {meta['sample']} sampled points per (program, F); trained: the sampled point of the best "
             "geometric-mean speed-up over the default on the training graphs; oracle: the best sampled point on "
             "the graph itself.", "",
             "| program | F | split | geomean default / PyTorch | trained / PyTorch | oracle / PyTorch | "
             "trained / default |", "|---|---:|---|---:|---:|---:|---:|"]
    keys = sorted({(c["program"], c["F"], c["split"]) for c in cases}, key=lambda k: (k[0], k[1], k[2] != "train"))
    for prog, F, split in keys:
        cs = [c for c in cases if (c["program"], c["F"], c["split"]) == (prog, F, split)]
        lines.append(f"| {prog} | {F} | {split} | {geomean(c['torch_ms'] / c['default_ms'] for c in cs):.2f}x | "
                     f"{geomean(c['torch_ms'] / c['trained_ms'] for c in cs):.2f}x | "
                     f"{geomean(c['torch_ms'] / c['oracle_ms'] for c in cs):.2f}x | "
                     f"{geomean(c['default_ms'] / c['trained_ms'] for c in cs):.2f}x |")
    lines += ["", "| graph | split | program | F | PyTorch ms | default ms | trained ms | oracle ms | trained point |",
              "|---|---|---|---:|---:|---:|---:|---:|---|"]
    for c in cases:
        lines.append(f"| {c['graph']} | {c['split']} | {c['program']} | {c['F']} | {c['torch_ms']:.3f} | "
                     f"{c['default_ms']:.3f} | {c['trained_ms']:.3f} | {c['oracle_ms']:.3f} | {c['trained']} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def plot(cases, path, device, date):
    """Speed-up over PyTorch of the default, trained and oracle points, per graph, program and F."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot")
        return
    fig, ax = plt.subplots(figsize=(max(8, 0.35 * len(cases)), 4.5))
    width = 0.27
    for i, (key, label) in enumerate((("default_ms", "default"), ("trained_ms", "trained on the training graphs"),
                                      ("oracle_ms", "best sampled point on the graph"))):
        ax.bar([j + i * width for j in range(len(cases))], [c["torch_ms"] / c[key] for c in cases], width, label=label)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_yscale("log")
    ax.set_xticks([j + width for j in range(len(cases))])
    ax.set_xticklabels([f"{c['graph']}{' (held out)' if c['split'] == 'heldout' else ''}\n{c['program']} F={c['F']}"
                        for c in cases], rotation=90, fontsize=5)
    ax.set_ylabel("speed-up over PyTorch's gathers")
    ax.legend(fontsize=6)
    ax.set_title(f"per-edge user programs, edge schedule points ({device}, {date})", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)


if __name__ == "__main__":
    main()
