#!/usr/bin/env python3
"""Building a training step's graphs on the GPU: gsparse.Graph(edge_index, num_src=, num_dst=) with
validation, by gsparse's graph-build kernels (one native call: range and order statistics, row
offsets, int32 arrays, one read-back of five numbers) against the same build in PyTorch operations
(the form before them: _tensor_graph.NATIVE_BUILD_DEVICES without "cuda"), in one process.

Cases: each block of a sampled mini-batch (gsparse.sampling, fan-outs and batch as minibatch.py:
25 / 10, 1,024 seeds) and the step's blocks together, per twin; the largest block with its edges
shuffled (unsorted: the statistics, then the sort); a batch of 128 molecule-like graphs (the
molecule batches of minibatch.py; small graphs keep their COO). Then the graphs the layers derive
in a step, each built with its graph: every block with its self-loop graph (GATConv:
Graph.with_masked_self_loops), and the step's subgraph (the union of the blocks' edges, as
minibatch.py's GCN takes it) and the molecule batch with their self-loop graph and GCN's edge
weights (GCNConv.loop_weights). Per case and form: the CUDA-event time of the build (it ends with
the validation's read-back), median over --runs builds after warm-up, the two forms interleaved in
alternating order; and the host time (perf_counter). Before timing, the two forms are checked to
give the same arrays (graphs) or the same g-SpMM over the derived graph (its masked edges weighted
0, or GCN's weights).

Writes summary.json ({"cases": [...]}), graph-build.md and graph-build.png into
<out-root>/<date>-<device>-graph-build/.

    python benchmarks/graph_build.py --graph reddit=build/bench-graphs/reddit.gcsr --out-root benchmarks/results
"""

import argparse
import datetime as dt
import json
import os
import re
import statistics
import sys
import time

import torch

import gsparse
from gsparse import _tensor_graph as TG
from gsparse.sampling import NeighborSampler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from minibatch import block_inputs, molecule_batch  # noqa: E402  (the inputs of the mini-batch benchmark)

FORMS = ("native", "pytorch")


def log(*a):
    print(*a, flush=True)


def set_form(form):
    TG.NATIVE_BUILD_DEVICES.discard("cuda")
    if form == "native":
        TG.NATIVE_BUILD_DEVICES.add("cuda")


def self_loop_graph(g):
    """GATConv's self-loop graph of g and its aggregation weights (1, 0 on g's own loops)."""
    graph, dropped = g.with_masked_self_loops()
    return graph, (~dropped).to(torch.float32).unsqueeze(-1)


def gcn_graph(g):
    """GCNConv's self-loop graph of g and its normalized edge weights."""
    return gsparse.nn.GCNConv.loop_weights(g, 1.0, True, torch.float32)


# What a case builds after each graph: nothing, or a derived graph (with its edge weights).
DERIVED = {"graph": None, "self-loops": self_loop_graph, "gcn": gcn_graph}


def build(inputs, derive="graph"):
    for ei, (ns, nd) in inputs:
        g = gsparse.Graph(ei, num_src=ns, num_dst=nd)
        if DERIVED[derive] is not None:
            DERIVED[derive](g)


def time_case(inputs, runs, derive="graph", warmup=5):
    """{form: (median event ms, median host ms)} of building inputs' graphs (and what derive adds),
    forms interleaved."""
    ev = {f: [] for f in FORMS}
    host = {f: [] for f in FORMS}
    for f in FORMS:
        set_form(f)
        for _ in range(warmup):
            build(inputs, derive)
    torch.cuda.synchronize()
    for i in range(runs):
        for f in (FORMS if i % 2 == 0 else FORMS[::-1]):
            set_form(f)
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            t = time.perf_counter()
            build(inputs, derive)
            host[f].append((time.perf_counter() - t) * 1e3)
            b.record()
            b.synchronize()
            ev[f].append(a.elapsed_time(b))
    set_form("native")
    return {f: (statistics.median(ev[f]), statistics.median(host[f])) for f in FORMS}


def check_same(inputs):
    """The two forms build the same arrays (checked before timing)."""
    graphs = {}
    for f in FORMS:
        set_form(f)
        graphs[f] = [gsparse.Graph(ei, num_src=ns, num_dst=nd)._t for ei, (ns, nd) in inputs]
    set_form("native")
    for a, b in zip(graphs["native"], graphs["pytorch"]):
        assert a.has_csr == b.has_csr
        if a.has_csr:
            for x, y in zip(a.csr(), b.csr()):
                assert torch.equal(x, y)
        for x, y in zip(a.coo(), b.coo()):
            assert torch.equal(x, y)


def check_same_derived(inputs, derive):
    """The two forms' derived graphs aggregate alike: g-SpMM u_mul_e over each with its weights."""
    gen = torch.Generator().manual_seed(1)
    xs = [torch.rand(ns, 4, generator=gen).to(ei.device) for ei, (ns, _) in inputs]
    outs = {}
    for f in FORMS:
        set_form(f)
        outs[f] = []
        for (ei, (ns, nd)), x in zip(inputs, xs):
            graph, w = DERIVED[derive](gsparse.Graph(ei, num_src=ns, num_dst=nd))
            outs[f].append(gsparse.gspmm(graph, "mul", "sum", x, w))
    set_form("native")
    for a, b in zip(outs["native"], outs["pytorch"]):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


def derived_case(case, graph, inputs, derive, runs):
    check_same_derived(inputs, derive)
    return record(case, graph, inputs, time_case(inputs, runs, derive), derive)


def record(case, graph, inputs, res, derive="graph"):
    edges = sum(int(ei.shape[1]) for ei, _ in inputs)
    (n_ev, n_host), (p_ev, p_host) = res["native"], res["pytorch"]
    log(f"  {case}: {edges} edges, native {n_ev:.3f} ms (host {n_host:.3f}), PyTorch ops {p_ev:.3f} ms "
        f"(host {p_host:.3f}): {p_ev / n_ev:.2f}x")
    return {"case": case, "graph": graph, "derived": derive, "edges": edges, "native_ms": n_ev, "pytorch_ms": p_ev,
            "native_host_ms": n_host, "pytorch_host_ms": p_host, "speedup": p_ev / n_ev}


def block_cases(name, path, args, device):
    g = gsparse.Graph.load(path)
    row_ptr, col_idx, _ = g.csr(device)
    gen = torch.Generator(device="cpu").manual_seed(args.seed)
    sampler = NeighborSampler((row_ptr, col_idx), args.fanouts, seed=args.seed, device=device)
    seeds = torch.randperm(g.num_dst, generator=gen)[: args.batch].to(device)
    inputs = block_inputs(sampler.sample(seeds))
    cases = []
    for i, block in enumerate(inputs):
        check_same([block])
        cases.append(record(f"block {i + 1} of {len(inputs)}", name, [block], time_case([block], args.runs)))
    cases.append(record("the step's blocks", name, inputs, time_case(inputs, args.runs)))
    ei, size = max(inputs, key=lambda b: b[0].shape[1])
    perm = torch.randperm(ei.shape[1], generator=gen).to(device)
    shuffled = [(ei[:, perm].contiguous(), size)]
    check_same(shuffled)
    cases.append(record("largest block, edges shuffled", name, shuffled, time_case(shuffled, args.runs)))
    for i, block in enumerate(inputs):
        cases.append(derived_case(f"block {i + 1} of {len(inputs)} + self-loop graph (GAT)", name, [block],
                                  "self-loops", args.runs))
    n = inputs[0][1][0]  # the subgraph's nodes: the first block's sources
    subgraph = [(torch.cat([b[0] for b in inputs], dim=1), (n, n))]
    cases.append(derived_case("step's subgraph + self-loops + GCN weights", name, subgraph, "gcn", args.runs))
    return cases


def molecule_case(args, device):
    gen = torch.Generator().manual_seed(args.seed)
    ei, _, _, _, n = molecule_batch(gen, device)
    inputs = [(ei, (n, n))]
    check_same(inputs)
    return [record("128 molecule-like graphs", "batched-small", inputs, time_case(inputs, args.runs)),
            derived_case("128 molecule-like graphs + self-loops + GCN weights", "batched-small", inputs, "gcn",
                         args.runs)]


def write_report(cases, out_dir, device_name, date):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump({"device": device_name, "date": date, "cases": cases}, f, indent=1)
    lines = [f"# Building a step's graphs on the GPU ({device_name}, {date})", "",
             "gsparse.Graph(edge_index, num_src=, num_dst=), validated; median CUDA-event ms (host ms); "
             "see benchmarks/graph_build.py.", "",
             "| graph | case | edges | graph-build kernels | PyTorch operations | speed-up |", "|---|---|---:|---:|---:|---:|"]
    for c in cases:
        lines.append(f"| {c['graph']} | {c['case']} | {c['edges']:,} | {c['native_ms']:.3f} ({c['native_host_ms']:.3f}) | "
                     f"{c['pytorch_ms']:.3f} ({c['pytorch_host_ms']:.3f}) | {c['speedup']:.2f}x |")
    with open(os.path.join(out_dir, "graph-build.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing: no plot")
        return
    labels = [f"{c['graph']}: {c['case']}" for c in cases]
    x = range(len(cases))
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(cases)), 4))
    ax.bar([i - 0.2 for i in x], [c["native_ms"] for c in cases], 0.4, label="graph-build kernels")
    ax.bar([i + 0.2 for i in x], [c["pytorch_ms"] for c in cases], 0.4, label="PyTorch operations")
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, fontsize=7, rotation=25, ha="right")
    ax.set_ylabel("ms per build (CUDA events, median)")
    ax.set_title(f"Validated graph builds on {device_name}, {date}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "graph-build.png"), dpi=120)


def replot(summary_path):
    """Rewrites the report and plot of a summary.json in its folder."""
    with open(summary_path) as f:
        s = json.load(f)
    write_report(s["cases"], os.path.dirname(os.path.abspath(summary_path)), s["device"], s["date"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", action="append", default=[], metavar="NAME=PATH", help="a .gcsr graph to sample blocks of")
    ap.add_argument("--fanouts", default="25,10")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out-root", default="benchmarks/results")
    ap.add_argument("--replot", metavar="SUMMARY", help="only rewrite the report and plot of a summary.json")
    args = ap.parse_args()
    if args.replot:
        replot(args.replot)
        return
    args.fanouts = [int(f) for f in args.fanouts.split(",")]
    if args.runs < 10:
        ap.error("--runs must be at least 10")
    if not torch.cuda.is_available():
        sys.exit("graph_build.py needs a CUDA device")
    device = torch.device("cuda")
    device_name = torch.cuda.get_device_name()
    date = dt.date.today().isoformat()
    cases = []
    for spec in args.graph:
        name, _, path = spec.partition("=")
        if not path:
            ap.error(f"--graph takes NAME=PATH, got {spec!r}")
        log(f"{name}: {path}")
        cases += block_cases(name, path, args, device)
    cases += molecule_case(args, device)
    slug = re.sub(r"[^a-z0-9]+", "-", device_name.lower()).strip("-")
    out_dir = os.path.join(args.out_root, f"{date}-{slug}-graph-build")
    write_report(cases, out_dir, device_name, date)
    log(f"wrote {out_dir}")


if __name__ == "__main__":
    main()
