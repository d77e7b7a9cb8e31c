#!/usr/bin/env python3
"""Where a mini-batch step's time goes: the per-call costs of gsparse's dynamic-graph path on the
GPU, measured one by one (CUDA events, or host time with a synchronisation around many calls): each
layer of the Python API from the native call up to an autograd forward and backward, graph
construction, and the kernels against PyTorch's index_add. benchmarks/profile_minibatch.py profiles
whole training steps.

    python3 benchmarks/minibatch_breakdown.py --graph reddit=PATH [--out FILE.json]
"""

import argparse
import json
import time

import torch
import torch.nn.functional as F

import gsparse
from gsparse import _kernels as K
from gsparse.sampling import NeighborSampler
from cuda_timing import time_cuda


def host_us(fn, n=200):
    fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / n * 1e6


def event_ms(fn, n=20):
    return time_cuda(fn, 1, n)[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graph", required=True)
    ap.add_argument("--out")
    args = ap.parse_args()
    dev = torch.device("cuda")
    res = {}
    tiny = gsparse.Graph(torch.randint(0, 100, (2, 300), device=dev), num_nodes=100)
    x = torch.rand(100, 16, device=dev)
    # Host time per call, layer by layer, on a tiny graph (the kernels take no time).
    from gsparse._native import _C, launch_arg, tensor_arg
    out = torch.empty_like(x)
    view, a, o, la = tiny._t.view, tensor_arg(x, "lhs"), tensor_arg(out, "out"), launch_arg(x.device)
    res["native_gspmm_view_us"] = host_us(lambda: _C.gspmm_view(view, "copy_lhs", "sum", a, None, o, None, None, la))
    res["K_spmm_us"] = host_us(lambda: K.spmm(tiny, "copy_lhs", "sum", x, None))
    res["gspmm_nograd_us"] = host_us(lambda: gsparse.gspmm(tiny, "copy_lhs", "sum", x))
    xr = x.clone().requires_grad_()
    res["gspmm_autograd_forward_us"] = host_us(lambda: gsparse.gspmm(tiny, "copy_lhs", "sum", xr))
    res["gspmm_forward_backward_us"] = host_us(lambda: gsparse.gspmm(tiny, "copy_lhs", "sum", xr).sum().backward())
    w = torch.rand(16, 16, device=dev)
    res["torch_linear_forward_backward_us"] = host_us(lambda: F.linear(xr, w).sum().backward())
    s = torch.rand(300, 2, device=dev)
    res["gsddmm_add_us"] = host_us(lambda: gsparse.gsddmm(tiny, "add", s[:100], s[:100], "u", "v"))
    res["edge_softmax_us"] = host_us(lambda: gsparse.edge_softmax(tiny, s))
    rp, ci, _ = tiny.csr(dev)
    res["from_csr_unvalidated_us"] = host_us(
        lambda: gsparse.Graph.from_csr(rp, ci, num_src=100, dynamic=True, validate=False))
    ei_tiny = torch.randint(0, 100, (2, 300), device=dev)
    res["graph_edge_index_validated_us"] = host_us(lambda: gsparse.Graph(ei_tiny, num_nodes=100))
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
    if args.out:
        with open(args.out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
