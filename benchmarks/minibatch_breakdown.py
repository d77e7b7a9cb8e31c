#!/usr/bin/env python3
"""Where a mini-batch step's time goes: the per-call costs of gsparse's dynamic-graph path on the
GPU, measured one by one (CUDA events or host time with a synchronisation around many calls), and
one GraphSAGE step of each library under torch.profiler (top operators by GPU and host time).

    python3 benchmarks/minibatch_breakdown.py --graph reddit=PATH [--out FILE.json]
"""

import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F

import gsparse
from gsparse import _kernels as K
from gsparse.sampling import NeighborSampler


def host_us(fn, n=200):
    fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / n * 1e6


def event_ms(fn, n=20):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graph", required=True)
    ap.add_argument("--out")
    args = ap.parse_args()
    dev = torch.device("cuda")
    res = {}
    tiny = gsparse.Graph(torch.randint(0, 100, (2, 300), device=dev), num_nodes=100)
    x = torch.rand(100, 16, device=dev)
    res["spmm_call_tiny_us"] = host_us(lambda: K.spmm(tiny, "copy_lhs", "sum", x, None))
    res["torch_add_us"] = host_us(lambda: x + x)
    name, path = args.graph.split("=", 1)
    g = gsparse.Graph.load(path)
    row_ptr, col_idx, _ = g.csr(dev)
    sampler = NeighborSampler((row_ptr, col_idx), [25, 10], seed=0, device=dev)
    seeds = torch.randperm(g.num_dst, device=dev)[:1024]
    batch = sampler.sample(seeds)
    b0 = batch.blocks[0]
    ei = b0.edge_index(dev)
    shuffled = ei[:, torch.randperm(ei.shape[1], device=dev)]
    size = dict(num_src=b0.num_src, num_dst=b0.num_dst)
    res["block_edges"] = b0.num_edges
    res["sample_ms"] = event_ms(lambda: sampler.sample(seeds), 10)
    res["build_sorted_validated_ms"] = event_ms(lambda: gsparse.Graph(ei, **size))
    res["build_sorted_unvalidated_ms"] = event_ms(lambda: gsparse.Graph(ei, validate=False, **size))
    res["build_shuffled_validated_ms"] = event_ms(lambda: gsparse.Graph(shuffled, **size))
    res["reverse_ms"] = event_ms(lambda: gsparse.Graph(ei, **size).reverse())
    for f in (41, 64, 256):
        h = torch.rand(b0.num_src, f, device=dev)
        res[f"spmm_mean_F{f}_ms"] = event_ms(lambda: K.spmm(b0, "copy_lhs", "mean", h, None))
        hr = torch.rand(b0.num_dst, f, device=dev)
        rev = b0.reverse()
        res[f"spmm_rev_sum_F{f}_ms"] = event_ms(lambda: K.spmm(rev, "copy_lhs", "sum", hr, None))
        src, dst = ei[0], ei[1]
        res[f"index_add_F{f}_ms"] = event_ms(
            lambda: torch.zeros(b0.num_dst, f, device=dev).index_add_(0, dst, h.index_select(0, src)))
    for k, v in res.items():
        print(f"{k:32s} {v:.4f}" if isinstance(v, float) else f"{k:32s} {v}", flush=True)
    # One SAGE step of each library under the profiler.
    import torch_geometric.nn as pygnn
    xin = torch.rand(b0.num_src, 602 if name == "reddit" else 100, device=dev)
    y = torch.randint(0, 41, (1024,), device=dev)
    blocks = [(b.edge_index(dev), (b.num_src, b.num_dst)) for b in batch.blocks]
    for lib, L in (("gsparse", gsparse.nn), ("pyg", pygnn)):
        convs = torch.nn.ModuleList([L.SAGEConv(xin.shape[1], 256), L.SAGEConv(256, 41)]).to(dev)
        opt = torch.optim.Adam(convs.parameters())

        def step():
            h = xin
            for i, (e, s) in enumerate(blocks):
                adj = gsparse.Graph(e, num_src=s[0], num_dst=s[1]) if lib == "gsparse" else e
                h = convs[i]((h, h[: s[1]]), adj, size=s)
                if i == 0:
                    h = F.relu(h)
            opt.zero_grad()
            F.cross_entropy(h, y).backward()
            opt.step()
        for _ in range(5):
            step()
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(5):
                step()
            torch.cuda.synchronize()
        print(f"--- {lib}: 5 SAGE steps")
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=14))
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
