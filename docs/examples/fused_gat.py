#!/usr/bin/env python3
"""A GAT layer whose attention is one user-written kernel: the example plugin's
gat_attention_shifted_lse (docs/examples/user_plugin/gat_attention.h) computes scores, edge softmax
and the weighted sum in one pass per row;
its backward is written with gsparse's operators (gsparse.user_op).

    python3 docs/examples/fused_gat.py PLUGIN                  # checks against gsparse.nn.GATConv
    python3 docs/examples/fused_gat.py PLUGIN --bench GRAPH --device cuda [--lanes default,16x4] [--out FILE.json]

The check compares outputs and gradients (x and every parameter) with gsparse.nn.GATConv of one
head without self-loops, on a graph with empty rows, duplicate edges, self-loops and a long row, on
the CPU and, when there is one, on the GPU. --bench times forward + backward of one layer on a
graph file (CUDA events, median) for the fused layer, GATConv and PyG's GATConv when installed.

The layer runs the plugin's gat_attention_shifted_lse, given each row's largest score (one g-SpMM
max of the source scores): the weights exp(s - max) need no running maximum and one exp an edge.
Besides out it gives each row's log-sum-exp of its scores lse[v] = log(sum over v's in-edges of
exp(s)); the backward is two more user programs of the plugin that recompute each weight
alpha[e] = exp(s[e] - lse[v]) where they use it (the forward and backward keep no [E] weights):
    dh[u]      = sum over out-edges e = (u -> v) of alpha[e] dout[v]     (gat_attention_transpose)
    dalpha[e]  = <h[u], dout[v]>                                         (g-SDDMM dot)
    c[v]       = sum over v's in-edges of alpha dalpha = <out[v], dout[v]>
    dpre[e]    = (1 where a_src[u] + a_dst[v] > 0, else 0.2) alpha[e] (dalpha[e] - c[v])   (gat_score_grad)
    da_src[u]  = sum over out-edges of dpre,  da_dst[v] = sum over in-edges of dpre
"""

import argparse
import json
import os
import re
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import gsparse

NEGATIVE_SLOPE = 0.2  # the plugin's program has it built in


def attention_backward(plugin, features, device):
    """The backward of gat_attention_shifted_lse(g, x, a_src, a_dst, shift) -> (out, lse) for
    user_op(save_outputs=True): the plugin's gat_attention_transpose (dx on the reversed graph)
    and per-edge gat_score_grad, each edge's weight recomputed from lse where it is used (no [E]
    weights kept); lse is not differentiated (the layer uses it only here) and the output does not
    depend on the shift."""
    transpose = plugin.program("gat_attention_transpose", features, device=device)
    score_grad = plugin.edge_program("gat_score_grad", 1, device=device)

    def backward(g, grads, outs, x, a_src, a_dst, shift):
        grad, (out, lse) = grads[0], outs
        lse = lse[:, :1].contiguous()  # the same in every column
        dalpha = gsparse.gsddmm(g, "dot", x, grad, "u", "v")  # [E, 1]
        c = (out * grad).sum(1, keepdim=True)  # sum over v's in-edges of alpha dalpha
        dpre = score_grad(g, a_src=a_src, a_dst=a_dst, lse=lse, dalpha=dalpha, c=c)
        rev = g.reverse()
        return {"x": transpose(rev, dout=grad, a_dst=a_dst, lse=lse, a_src=a_src),
                "a_src": gsparse.gspmm(rev, "copy_rhs", "sum", None, dpre),
                "a_dst": gsparse.gspmm(g, "copy_rhs", "sum", None, dpre)}
    return backward


class FusedGATConv(torch.nn.Module):
    """One-head GAT without self-loops (add them to the graph) whose aggregation is the plugin's
    gat_attention_shifted_lse; the parameters are named and shaped as gsparse.nn.GATConv's (heads=1)."""

    def __init__(self, plugin, in_channels, out_channels, bias=True, point=None):
        super().__init__()
        self.plugin, self.out_channels, self.point = plugin, out_channels, dict(point or {})
        self.lin = torch.nn.Linear(in_channels, out_channels, bias=False)
        self.att_src = torch.nn.Parameter(torch.empty(1, 1, out_channels))
        self.att_dst = torch.nn.Parameter(torch.empty(1, 1, out_channels))
        self.bias = torch.nn.Parameter(torch.zeros(out_channels)) if bias else None
        torch.nn.init.xavier_uniform_(self.lin.weight)
        for a in (self.att_src, self.att_dst):
            torch.nn.init.uniform_(a, -0.5, 0.5)
        self._ops = {}

    def _op(self, device):
        if device.type not in self._ops:
            program = self.plugin.program("gat_attention_shifted_lse", self.out_channels, device=device.type,
                                          point=self.point if device.type == "cuda" else None)
            backward = attention_backward(self.plugin, self.out_channels, device.type)
            self._ops[device.type] = gsparse.user_op(program, backward, save_outputs=True)
        return self._ops[device.type]

    def forward(self, x, g):
        h = self.lin(x)
        # The per-node scores through the projection folded into the attention vectors (as GATConv).
        w = self.lin.weight
        a = F.linear(x, torch.cat([self.att_src.view(1, -1) @ w, self.att_dst.view(1, -1) @ w]))
        a_src, a_dst = a[:, :1], a[: g.num_dst, 1:]
        with torch.no_grad():  # each row's largest score (leaky_relu is increasing)
            shift = F.leaky_relu(gsparse.gspmm(g, "copy_lhs", "max", a_src.contiguous()) + a_dst, NEGATIVE_SLOPE)
        out, _ = self._op(x.device)(g, x=h, a_src=a_src, a_dst=a_dst, shift=shift)
        return out + self.bias if self.bias is not None else out


def check_graph(device):
    gen = torch.Generator().manual_seed(7)
    n, E = 300, 2400
    src = torch.randint(0, n, (E,), generator=gen)
    dst = torch.randint(0, n - 20, (E,), generator=gen)  # the last 20 rows are empty
    dst[:400] = 5  # a long row
    src[400:420] = dst[400:420]  # self-loops
    src[420:440], dst[420:440] = src[440:460].clone(), dst[440:460].clone()  # duplicate edges
    return gsparse.Graph(torch.stack([src, dst]).to(device), num_nodes=n)


def check(plugin, device):
    """Outputs and gradients of FusedGATConv against gsparse.nn.GATConv(heads=1) on `device`."""
    torch.manual_seed(0)
    g = check_graph(device)
    fused = FusedGATConv(plugin, 12, 16).to(device)
    ref = gsparse.nn.GATConv(12, 16, heads=1, add_self_loops=False).to(device)
    ref.load_state_dict(fused.state_dict())
    x = (3 * torch.randn(g.num_src, 12, device=device)).requires_grad_()  # large scores
    out, want = fused(x, g), ref(x, g)
    torch.testing.assert_close(out, want, rtol=1e-4, atol=1e-5)
    grad = torch.randn_like(out)
    params = [x] + list(fused.parameters())
    got = torch.autograd.grad(out, params, grad)
    exp = torch.autograd.grad(want, [x] + list(ref.parameters()), grad)
    for (name, _), a, b in zip([("x", None)] + list(fused.named_parameters()), got, exp):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4, msg=lambda m, name=name: f"gradient of {name}: {m}")
    print(f"fused GAT on {device}: outputs and gradients match GATConv")


def median_ms(fn, runs, device):
    """Median time of fn() over `runs` runs after three warm-up runs (CUDA events on a GPU)."""
    for _ in range(3):
        fn()
    times = []
    for _ in range(runs):
        if device.type == "cuda":
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b))
        else:
            t = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def bench(plugin, args):
    """Forward + backward of one layer on a graph file: fused (at each --lanes point), GATConv,
    PyG's GATConv (if installed)."""
    device = torch.device(args.device)
    g = gsparse.Graph.load(args.bench)
    torch.manual_seed(0)
    x = torch.randn(g.num_src, args.in_channels, device=device)
    layers = {}
    for point in args.lanes:
        name = "fused" + "".join(f" {k}={v}" for k, v in point.items())
        layers[name] = (FusedGATConv(plugin, args.in_channels, args.out_channels, point=point).to(device), g)
    layers["gsparse GATConv"] = (gsparse.nn.GATConv(args.in_channels, args.out_channels, heads=1,
                                                    add_self_loops=False).to(device), g)
    try:
        from torch_geometric.nn import GATConv as PyGGATConv
        layers["PyG GATConv"] = (PyGGATConv(args.in_channels, args.out_channels, heads=1,
                                            add_self_loops=False).to(device), g.edge_index(device))
    except ImportError:
        pass
    results = {}
    for name, (layer, graph) in layers.items():
        def step():
            layer.zero_grad(set_to_none=True)
            layer(x, graph).square().mean().backward()

        def forward():
            with torch.no_grad():
                layer(x, graph)
        results[name] = {"forward_ms": median_ms(forward, args.runs, device)}
        if device.type == "cuda":
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
        results[name]["median_ms"] = median_ms(step, args.runs, device)
        if device.type == "cuda":
            results[name]["peak_extra_gb"] = (torch.cuda.max_memory_allocated() - base) / 2**30
        print(f"{name}: {results[name]}", flush=True)
    if args.out:
        meta = {"device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu", "graph": args.bench,
                "num_nodes": g.num_dst, "num_edges": g.num_edges, "in": args.in_channels, "out": args.out_channels,
                "runs": args.runs, "date": time.strftime("%Y-%m-%d"),
                "timing": "median of CUDA-event times after 3 warm-up runs; median_ms: forward + loss + "
                          "backward; forward_ms: forward without autograd"}
        with open(args.out, "w") as f:
            json.dump({"meta": meta, "results": results}, f, indent=1)
        report(args.out)


def report(path):
    """A table (.md) and a plot (.png, where matplotlib is installed) beside a --bench JSON file."""
    with open(path) as f:
        data = json.load(f)
    meta, results = data["meta"], data["results"]
    pyg = results.get("PyG GATConv", {}).get("median_ms")
    base = os.path.splitext(path)[0]
    lines = [f"# One GAT layer, forward + backward: {meta['device']}, {meta.get('date', '')}", "",
             f"Graph {meta['graph']} ({meta['num_nodes']} nodes, {meta['num_edges']} edges), {meta['in']} -> "
             f"{meta['out']} features, one head. {meta.get('timing', '')}.", "",
             "| layer | forward + backward ms | forward ms | vs PyG | peak extra GB |", "|---|---:|---:|---:|---:|"]
    for name, r in results.items():
        speedup = f"{pyg / r['median_ms']:.2f}x" if pyg else "-"
        peak = f"{r['peak_extra_gb']:.3f}" if "peak_extra_gb" in r else "-"
        lines.append(f"| {name} | {r['median_ms']:.3f} | {r.get('forward_ms', float('nan')):.3f} | {speedup} | {peak} |")
    with open(base + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    names = list(results)
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(names)), 3.5))
    ax.bar(range(len(names)), [results[n]["median_ms"] for n in names], label="forward + backward")
    ax.bar(range(len(names)), [results[n].get("forward_ms", 0) for n in names], label="forward")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([n.replace(" ", "\n") for n in names], fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("ms (median)")
    ax.set_title(f"GAT layer on {os.path.basename(meta['graph'])}, {meta['device']}", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(base + ".png", dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("plugin", help="the example plugin (libgsparse_example_plugin.so)")
    ap.add_argument("--bench", metavar="GRAPH", help="time forward + backward on this graph file instead")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--in-channels", type=int, default=602)
    ap.add_argument("--out-channels", type=int, default=64)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--out", help="--bench: write the results as JSON to this file")
    ap.add_argument("--report", metavar="JSON", help="write the table and plot of a --bench JSON file and exit")
    ap.add_argument("--lanes", default="default",
                    help="--bench: the fused layer at these points of the default CUDA schedule, comma-separated: "
                         "'default', L (nnz_lanes), LxU (and nnz_steps), LxUvV (and feature_vector), "
                         "e.g. default,1,8x1,8x2v4")
    args = ap.parse_args()
    points = []
    for v in args.lanes.split(","):
        m = re.fullmatch(r"(\d+)(?:x(\d+))?(?:v(\d+))?", v)
        if v != "default" and not m:
            ap.error(f"--lanes takes 'default', L, LxU or LxUvV, got {v!r}")
        knobs = ("nnz_lanes", "nnz_steps", "feature_vector")
        points.append({} if v == "default" else {k: int(n) for k, n in zip(knobs, m.groups()) if n})
    args.lanes = points
    if args.report:
        report(args.report)
        return 0
    plugin = gsparse.load_plugin(args.plugin)
    if args.bench:
        bench(plugin, args)
        return 0
    check(plugin, "cpu")
    if torch.cuda.is_available():
        check(plugin, "cuda")
    return 0


if __name__ == "__main__":
    sys.exit(main())
