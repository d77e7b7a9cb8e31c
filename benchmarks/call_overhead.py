#!/usr/bin/env python3
"""Host time per call of gsparse's operators on a small CUDA graph (64 nodes, 256 edges, F = 8)
against PyTorch ops: 5,000 calls after 300 warm-up calls, no synchronisation inside the loop, so
the number is what the calling thread spends per call (the kernels themselves take a few us).
Diagnostics for the host-bound mini-batch steps (benchmarks/minibatch.py is the benchmark of
record).

    python3 benchmarks/call_overhead.py
"""
import sys
import time

import torch

import gsparse
from gsparse import _kernels as K
from gsparse._native import _C, tensor_arg, launch_arg

if not torch.cuda.is_available():
    sys.exit("call_overhead.py needs a CUDA device")
torch.manual_seed(0)
dev = torch.device("cuda")
n = 64
ei = torch.randint(0, n, (2, 256), device=dev)
g = gsparse.Graph(ei, num_nodes=n, dynamic=True)
x = torch.randn(n, 8, device=dev)
xg = x.clone().requires_grad_()
def bench(f, N=5000):
    for _ in range(300): f()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(N): f()
    host = (time.perf_counter() - t) / N * 1e6
    torch.cuda.synchronize()
    return host
res = {}
res["torch add_"] = bench(lambda: x.add_(0.0))
res["torch empty"] = bench(lambda: torch.empty([n, 8], device=dev))
src, dst = ei[0], ei[1]
res["torch index_add 3 ops"] = bench(lambda: torch.zeros(n, 8, device=dev).index_add_(0, dst, x[src]))
res["gspmm"] = bench(lambda: gsparse.gspmm(g, "copy_lhs", "sum", x))
res["gspmm autograd fwd"] = bench(lambda: gsparse.gspmm(g, "copy_lhs", "sum", xg))
res["K.spmm"] = bench(lambda: K.spmm(g, "copy_lhs", "sum", x, None))
res["K.sddmm dot"] = bench(lambda: K.sddmm(g, "dot", x, x, "u", "v"))
out = torch.empty(n, 8, device=dev)
v = g._t.view
a = tensor_arg(x, "lhs"); o = tensor_arg(out, "out"); la = launch_arg(dev)
res["_C.gspmm_view"] = bench(lambda: _C.gspmm_view(v, "copy_lhs", "sum", a, None, o, None, None, la))
res["launch_arg"] = bench(lambda: launch_arg(dev))
rp, ci, _ = g.csr(dev)
res["Graph.from_csr unvalidated"] = bench(lambda: gsparse.Graph.from_csr(rp, ci, num_src=n, dynamic=True, validate=False, max_degree=16), N=2000)
# Forward + backward of one aggregation (what a GIN layer's sum costs the host), on a graph without
# its CSR (the COO path of small graphs) and with it, against PyTorch's gather + index_add.
g_now = gsparse.Graph(ei, num_nodes=n, dynamic=True, csr="now")
g_coo = gsparse.Graph(ei, num_nodes=n, dynamic=True, csr="lazy")
res["gspmm fwd+bwd, COO"] = bench(lambda: gsparse.gspmm(g_coo, "copy_lhs", "sum", xg).sum().backward(), N=2000)
res["gspmm fwd+bwd, CSR"] = bench(lambda: gsparse.gspmm(g_now, "copy_lhs", "sum", xg).sum().backward(), N=2000)
res["torch gather+index_add fwd+bwd"] = bench(
    lambda: torch.zeros(n, 8, device=dev).index_add_(0, dst, xg[src]).sum().backward(), N=2000)
res["sum().backward() alone"] = bench(lambda: xg.sum().backward(), N=2000)
batch = torch.arange(n, device=dev) // 8
res["global_mean_pool fwd+bwd"] = bench(
    lambda: gsparse.nn.global_mean_pool(xg, batch, n // 8).sum().backward(), N=2000)
res["torch scatter_reduce mean fwd+bwd"] = bench(
    lambda: torch.zeros(n // 8, 8, device=dev).scatter_reduce(0, batch.view(-1, 1).expand(-1, 8), xg, "mean",
                                                              include_self=False).sum().backward(), N=2000)
res["Graph(ei) validated, csr=lazy"] = bench(lambda: gsparse.Graph(ei, num_nodes=n, csr="lazy"), N=500)
res["Graph(ei) validated, csr=now"] = bench(lambda: gsparse.Graph(ei, num_nodes=n, csr="now"), N=500)
# The pieces of a GIN step on a batch of 128 molecules (3.7 k nodes, 8.2 k edges, F = 128): the graph
# without its CSR, its native calls alone, the autograd nodes around them, the readout.
nm, em = 3700, 8200
eim = torch.randint(0, nm, (2, em), device=dev)
gm = gsparse.Graph(eim, num_nodes=nm, dynamic=True, csr="lazy")
xm = torch.randn(nm, 128, device=dev)
xmg = xm.clone().requires_grad_()
om = torch.empty(nm, 128, device=dev)
cv, cvr = gm._t.coo_view(), gm._t.coo_view(reverse=True)
am, oma = tensor_arg(xm, "lhs"), tensor_arg(om, "out")
from gsparse._tensor_graph import COO_SEGMENTS  # noqa: E402
res["molecules: _C.gspmm_view COO"] = bench(lambda: _C.gspmm_view(cv, "copy_lhs", "sum", am, None, oma, None, None, la,
                                                                  COO_SEGMENTS))
res["molecules: K.spmm COO"] = bench(lambda: K.spmm(gm, "copy_lhs", "sum", xm, None))
res["molecules: K.spmm_transposed COO"] = bench(lambda: K.spmm_transposed(gm, "copy_lhs", "sum", xm, None))
res["molecules: torch index_add 3 ops"] = bench(
    lambda: torch.zeros(nm, 128, device=dev).index_add_(0, eim[1], xm[eim[0]]))
gin = gsparse.nn.GINConv(torch.nn.Identity()).to(dev)
res["molecules: GINConv(Identity) fwd+bwd"] = bench(lambda: gin(xmg, gm).sum().backward(), N=2000)
res["molecules: PyG-form GIN sum fwd+bwd"] = bench(
    lambda: (torch.zeros(nm, 128, device=dev).index_add_(0, eim[1], xmg[eim[0]]) + xmg).sum().backward(), N=2000)


class _Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        return t.view_as(t)

    @staticmethod
    def backward(ctx, d):
        return d


# The cost of a Python autograd node itself, on the small tensor (64 x 8) of the first cases.
res["python autograd.Function fwd+bwd"] = bench(lambda: _Identity.apply(xg).sum().backward(), N=2000)
res["native view_as fwd+bwd"] = bench(lambda: xg.view_as(xg).sum().backward(), N=2000)
bm = torch.arange(nm, device=dev) * 128 // nm
from gsparse.nn.pool import readout_graph  # noqa: E402
res["molecules: readout_graph"] = bench(lambda: readout_graph(bm, 128), N=2000)
res["molecules: global_mean_pool fwd+bwd"] = bench(
    lambda: gsparse.nn.global_mean_pool(xmg, bm, 128).sum().backward(), N=2000)
res["molecules: Graph(ei) validated"] = bench(lambda: gsparse.Graph(eim, num_nodes=nm), N=500)
res["molecules: Graph(ei) unvalidated"] = bench(lambda: gsparse.Graph(eim, num_nodes=nm, validate=False), N=500)
for k, val in res.items():
    print(f"{k:40s} {val:7.1f} us host/call")
