"""Compiles ahead of the first training step the kernels the layers run on dynamic graphs, into the
persistent kernel cache (gsparse.kernel_cache_dir()), so that the first process of a training run
loads them instead of compiling (about 1 s each on first use).

Kernels of dynamic graphs depend on the operator, the feature shape and the dtype, not on the graph:
running each layer forward and backward once on a tiny graph of the target device, at the feature
widths a model uses, compiles every kernel a step on any graph of that model needs (and the
graph-build kernels that build graphs from int32 and int64 index tensors on the device).

    python -m gsparse.precompile --device cuda --models sage,gcn,gat,gin --widths 602,256,41
    gsparse.precompile.precompile(["sage", "gat"], widths=[128, 64], device="cuda")

A width w stands for a layer with w input channels and for a layer with w output channels (the
aggregation of SAGEConv runs on the narrower side, GCN's on the output, GAT's on heads x channels).
"""

import argparse
import itertools
import sys
import time

import torch

from . import nn
from .graph import Graph

MODELS = ("sage", "gcn", "gat", "gin")


def _tiny_graphs(device, bipartite):
    """A block-like graph (more sources than destinations) and a square one, each with both kinds of
    edge ids (sorted edges keep positions, shuffled ones map them) and the shuffled ones with and
    without their CSR (small graphs run sums on their COO: Graph's csr rule), as dynamic graphs."""
    gen = torch.Generator().manual_seed(0)
    out = []
    for n_src, n_dst in ((24, 8), (16, 16)) if bipartite else ((16, 16),):
        src = torch.randint(0, n_src, (48,), generator=gen)
        dst = torch.randint(0, n_dst, (48,), generator=gen)
        for ordered in (True, False):
            d, s = (dst.sort().values, src) if ordered else (dst, src)
            ei = torch.stack([s, d]).to(device)
            for csr in ("now",) if ordered else ("now", "lazy"):
                out.append(Graph(ei, num_src=n_src, num_dst=n_dst, dynamic=True, csr=csr))
    return out


def _layers(model, c_in, c_out, heads):
    if model == "sage":
        return [nn.SAGEConv(c_in, c_out)]
    if model == "gcn":
        return [nn.GCNConv(c_in, c_out)]
    if model == "gat":
        layers = [nn.GATConv(c_in, c_out, heads=1)]
        if c_out % heads == 0:
            layers.append(nn.GATConv(c_in, c_out // heads, heads=heads))
        return layers
    if model == "gin":
        return [nn.GINConv(torch.nn.Linear(c_in, c_out))]
    raise ValueError(f"unknown model '{model}' (expected one of {', '.join(MODELS)})")


def graph_build_kernels(device):
    """Builds graphs from a COO on device in every form the graph-build kernels have, for int32 and
    int64 ids (each pipeline compiles on its first use): a COO graph and a graph with its CSR, of
    edges sorted by destination and enough of them that their statistics take a combining pass, and
    their self-loop graphs with GCN's weights (GATConv and GCNConv on dynamic graphs)."""
    device = torch.device(device)
    n, e = 64, 8192
    dst = torch.arange(e) * n // e
    src = torch.arange(e) % n
    for ids in (torch.int32, torch.int64):
        ei = torch.stack([src, dst]).to(device=device, dtype=ids)
        for csr in ("lazy", "now"):
            g = Graph(ei, num_nodes=n, dynamic=True, csr=csr)
            nn.GCNConv.loop_weights(g, 1.0, True, torch.float32)


def precompile(models=MODELS, widths=(64, 128, 256), device="cuda", dtype=torch.float32, heads=4, log=None):
    """Runs every layer of models forward and backward on tiny dynamic graphs of device for every
    (in, out) pair of widths; returns {'loaded', 'compiled', ...}: what the persistent kernel cache did
    (gsparse.kernel_cache_stats, counted over this call)."""
    from . import kernel_cache_stats

    device = torch.device(device)
    before = kernel_cache_stats()
    t0 = time.perf_counter()
    graph_build_kernels(device)
    for model, (c_in, c_out) in itertools.product(models, itertools.product(widths, widths)):
        for layer in _layers(model, c_in, c_out, heads):
            layer = layer.to(device=device, dtype=dtype)
            # Fresh graphs for every layer: a layer may make a graph's CSR, which changes the kernels
            # the next layer runs on it.
            for g in _tiny_graphs(device, bipartite=True):
                if model in ("gcn", "gin") and g.num_src != g.num_dst:
                    continue
                x = torch.rand(g.num_src, c_in, device=device, dtype=dtype, requires_grad=True)
                if model in ("sage", "gat"):
                    out = layer((x, x[: g.num_dst]), g, size=(g.num_src, g.num_dst))
                else:
                    out = layer(x, g)
                out.sum().backward()
        if log:
            log(f"{model} {c_in} -> {c_out}: done ({time.perf_counter() - t0:.1f} s)")
    if "gin" in models:  # readout of batched graphs (global pooling)
        for w in widths:
            x = torch.rand(20, w, device=device, dtype=dtype, requires_grad=True)
            batch = torch.tensor([0] * 8 + [1] * 12, device=device)
            for pool in (nn.global_add_pool, nn.global_mean_pool):
                pool(x, batch).sum().backward()
    after = kernel_cache_stats()
    return {k: after[k] - before[k] for k in after}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gsparse.precompile", description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda", help="cuda (default) or cpu")
    ap.add_argument("--models", default=",".join(MODELS), help=f"comma-separated, from {', '.join(MODELS)}")
    ap.add_argument("--widths", default="64,128,256", help="comma-separated feature widths")
    ap.add_argument("--heads", type=int, default=4, help="attention heads of the GAT layers (default 4)")
    ap.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    args = ap.parse_args(argv)
    from . import kernel_cache_dir

    models = [m for m in args.models.split(",") if m]
    for m in models:
        if m not in MODELS:
            ap.error(f"unknown model '{m}' (expected one of {', '.join(MODELS)})")
    try:
        widths = [int(w) for w in args.widths.split(",") if w]
    except ValueError:
        ap.error(f"--widths must be comma-separated integers, got '{args.widths}'")
    if not widths or min(widths) < 1:
        ap.error("--widths needs at least one positive width")
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        ap.error("--device cuda, but PyTorch sees no CUDA device")
    cache = kernel_cache_dir()
    if not cache:
        print("gsparse.precompile: the persistent kernel cache is off (GSPARSE_KERNEL_CACHE=off): nothing would be "
              "kept", file=sys.stderr)
        return 2
    print(f"precompiling into {cache}", flush=True)
    stats = precompile(models, widths, args.device, getattr(torch, args.dtype), args.heads,
                       log=lambda m: print(m, flush=True))
    print(f"kernels compiled {stats['compiled']}, already cached {stats['loaded']}, "
          f"compiled in memory only {stats['failed']}")
    return 1 if stats["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
