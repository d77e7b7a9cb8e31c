"""User programs under the CUDA forms of the default user schedule, with the rows in their natural
order and in order of in-degree (ScheduleContext::balanced_rows), on the GPU.

Forms: threads over rows (nnz_lanes = 1: a thread per row and feature); 8 lanes of nonzeros merged
in shared memory (lane_merge = 1: the default point from 8 features up on graphs with long rows);
merged through warp shuffles (lane_merge = 2: the same below 8 features); the default point itself
(nnz_lanes = 0: it picks among them by the graph's longest row and the feature count); rows split
into segments of 256 or 1024 neighbours across the graph (row_segments, natural order only). For each
graph, user program of the example plugin and form, the kernel with balanced_rows = 0 and = 1:
median of --runs CUDA-event times after warm-up and the first call in this process (compile, the
graph's device copy and, for the ordered kernel, its row order), and the point that ran. Every
result is checked against the first form's natural-order result before timing counts. Writes
summary.json, report.md and report.png to --out.

    python benchmarks/user_schedule_forms.py --plugin libgsparse_example_plugin.so \
        --graph cl-8m=/g/cl-8m.gcsr --graph knn-h-5m=/g/knn-h-5m.gcsr:heldout --out results/dir
"""

import argparse
import datetime
import json
import os
import time

import torch

import gsparse
from cuda_timing import time_cuda

PROGRAMS = ("weighted_sum", "gat_attention")
# (form, the default user schedule's point for it)
FORMS = (("threads over rows", {"nnz_lanes": 1}),
         ("lanes, shared memory", {"nnz_lanes": 8, "lane_merge": 1}),
         ("lanes, shuffles", {"nnz_lanes": 8, "lane_merge": 2}),
         ("default point", {}),
         ("segments of 256", {"nnz_lanes": 1, "row_segments": 256}),
         ("segments of 1024", {"nnz_lanes": 1, "row_segments": 1024}))
FORM_KEYS = ("rows", "shared", "shuffles", "default", "seg256", "seg1024")  # --forms


def operands_for(program, g, F, gen):
    out = {}
    rows = {"source": g.num_src, "destination": g.num_dst, "edge": g.num_edges}
    for name, at, broadcast, columns in program.operands:
        out[name] = torch.randn(rows[at], columns or (1 if broadcast else F), generator=gen, device="cuda") * (
            0.1 if broadcast else 1.0)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--graph", action="append", required=True, help="NAME=FILE[:heldout]")
    ap.add_argument("--feat", type=int, action="append")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--forms", default=",".join(FORM_KEYS),
                    help=f"comma list of the forms to time, of {','.join(FORM_KEYS)} (default: all)")
    ap.add_argument("--orders", default="0,1", help="balanced_rows values to time (default: 0,1)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    feats = args.feat or [64]
    keys = args.forms.split(",")
    forms = [form for form, key in zip(FORMS, FORM_KEYS) if key in keys]
    orders = [int(o) for o in args.orders.split(",")]
    if not forms or any(o not in (0, 1) for o in orders):
        raise SystemExit(f"--forms takes {','.join(FORM_KEYS)}, --orders 0 and/or 1")
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
        max_degree = int(g.in_degrees().max()) if g.num_dst else 0
        print(f"{name}: {g.num_dst} rows, {g.num_edges} edges, longest row {max_degree} (loaded in {load_s:.2f} s)",
              flush=True)
        for F in feats:
            for prog_name in PROGRAMS:
                reference = None
                for form, base in forms:
                    results = {}
                    for balanced in orders:
                        if balanced and base.get("row_segments"):
                            continue  # segments run in row order (balanced_rows does not apply)
                        point = dict(base, balanced_rows=balanced)
                        prog = plugin.program(prog_name, F, "cuda", None, point)
                        gen = torch.Generator(device="cuda").manual_seed(7)
                        ops = operands_for(prog, g, F, gen)
                        torch.cuda.synchronize()
                        t0 = time.perf_counter()
                        out = prog(g, **ops)
                        torch.cuda.synchronize()
                        first_s = time.perf_counter() - t0
                        if reference is None:
                            reference = out
                        diff = ((out - reference).abs() / (1 + reference.abs())).max().item() if out.numel() else 0.0
                        # fp32 sums of rows of up to ~10^5 neighbours in another association
                        if not diff < 2e-3:
                            raise SystemExit(f"{name} {prog_name} {prog.schedule}: differs from {forms[0][0]} by {diff}")
                        median, times = time_cuda(lambda: prog(g, **ops), args.warmup, args.runs)
                        results[balanced] = {"median_ms": median, "times_ms": [round(t, 4) for t in times],
                                             "first_call_s": first_s,
                                             "schedule": prog.schedule_on(g), "max_rel_diff": diff}
                    case = {"graph": name, "split": split, "rows": g.num_dst, "edges": g.num_edges,
                            "max_degree": max_degree, "F": F, "program": prog_name, "form": form,
                            "natural": results.get(0), "balanced": results.get(1)}
                    if len(results) == 2:
                        case["speedup"] = results[0]["median_ms"] / results[1]["median_ms"]
                    cases.append(case)
                    times = "  ".join(f"{'balanced' if o else 'natural'} {r['median_ms']:8.3f} ms (first call "
                                      f"{r['first_call_s']:.2f} s)" for o, r in sorted(results.items()))
                    print(f"  F={F} {prog_name:14s} {form:22s} {times}", flush=True)
    meta = {"device": device, "date": datetime.date.today().isoformat(), "torch": torch.__version__,
            "runs": args.runs, "warmup": args.warmup}
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        # One case a line: the file stays short enough to read and to diff.
        f.write('{"meta": ' + json.dumps(meta) + ',\n "cases": [\n')
        f.write(",\n".join("  " + json.dumps(c) for c in cases))
        f.write("\n]}\n")
    def cell(r, key, fmt):
        return fmt.format(r[key]) if r else "-"

    lines = [f"# User programs under the CUDA forms of the default schedule, rows in natural order and by in-degree "
             f"({device}, {meta['date']})", "",
             f"Median of {args.runs} CUDA-event times after {args.warmup} warm-up calls; speedup = natural / balanced.",
             "", "| graph | split | longest row | F | program | form | natural ms | balanced ms | speedup | "
             "first call s (nat / bal) |", "|---|---|---:|---:|---|---|---:|---:|---:|---:|"]
    for c in cases:
        nat, bal = c["natural"], c["balanced"]
        speedup = f"{c['speedup']:.2f}x" if "speedup" in c else "-"
        lines.append(f"| {c['graph']} | {c['split']} | {c['max_degree']} | {c['F']} | {c['program']} | {c['form']} | "
                     f"{cell(nat, 'median_ms', '{:.3f}')} | {cell(bal, 'median_ms', '{:.3f}')} | {speedup} | "
                     f"{cell(nat, 'first_call_s', '{:.2f}')} / {cell(bal, 'first_call_s', '{:.2f}')} |")
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    plot(cases, os.path.join(args.out, "report.png"), device, meta["date"])


def plot(cases, path, device, date):
    """Per graph, program and feature length: each form's time in the natural order, and the best
    time of all forms by in-degree, relative to lanes merged in shared memory in the natural order."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot")
        return
    graphs = list(dict.fromkeys(c["graph"] for c in cases))
    groups = sorted({(c["graph"], c["program"], c["F"]) for c in cases},
                    key=lambda k: (-k[2], graphs.index(k[0]), k[1]))
    forms = [f for f, _ in FORMS if any(c["form"] == f for c in cases)]
    if FORMS[1][0] not in forms or not all(c["natural"] for c in cases):
        print("no plot: it compares every form with lanes merged in shared memory, in the natural order")
        return
    fig, ax = plt.subplots(figsize=(max(8, 0.5 * len(groups)), 4.5))
    width = 0.8 / (len(forms) + 1)
    ordered = all(c["balanced"] for c in cases)
    for i, form in enumerate(forms + (["best, by in-degree"] if ordered else [])):
        ys = []
        for gname, prog, F in groups:
            by_form = {c["form"]: c for c in cases if (c["graph"], c["program"], c["F"]) == (gname, prog, F)}
            base = by_form[FORMS[1][0]]["natural"]["median_ms"]
            if form in by_form:
                ys.append(base / by_form[form]["natural"]["median_ms"])
            else:
                ys.append(base / min(c["balanced"]["median_ms"] for c in by_form.values()))
        ax.bar([j + i * width for j in range(len(groups))], ys, width, label=form)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_yscale("log")
    heldout = {c["graph"] for c in cases if c["split"] == "heldout"}
    ax.set_xticks([j + 0.4 for j in range(len(groups))])
    ax.set_xticklabels([f"{g}{' (held out)' if g in heldout else ''}\n{p} F={F}" for g, p, F in groups],
                       rotation=90, fontsize=6)
    ax.set_ylabel("speed-up over lanes, shared memory")
    ax.legend(fontsize=6)
    ax.set_title(f"user programs, default schedule's forms ({device}, {date})", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)


def replot(summary, path):
    """The plot again from a summary.json."""
    with open(summary) as f:
        d = json.load(f)
    plot(d["cases"], path, d["meta"]["device"], d["meta"]["date"])


if __name__ == "__main__":
    main()
