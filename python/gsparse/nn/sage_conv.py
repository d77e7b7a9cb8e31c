"""SAGEConv: GraphSAGE with PyG's SAGEConv signature.

    out = lin_l(aggregate over in-edges of x_src[u]) + lin_r(x_dst),  aggregate: mean, max, sum, min

The aggregation is one g-SpMM copy_lhs/<aggr> (max and min keep arg ids for backward); nodes
without in-edges aggregate to 0. For the linear aggregations (mean, sum) W mean(x) = mean(W x) (both
0 without in-edges, lin_l's bias added afterwards), so the layer may project first and aggregate
out_channels features per edge, or aggregate in_channels and project the destinations. It takes the
cheaper order by a cost estimate: the projection's multiply-adds (rows x in x out, at about
kFmaPerGather of them per gathered element) plus the gathered elements (edges x features).
Full graphs with more input than output channels project first; sampled blocks, whose sources
outnumber their destinations many times over, aggregate first: then the aggregation and both
projections are one autograd node (_AggregateThenProject).
"""

import torch
import torch.nn.functional as F

from .. import _kernels as K
from .. import spmm
from .._native import ShapeError
from .graph_input import GraphInput

_AGGR = {"mean": "mean", "max": "max", "min": "min", "sum": "sum", "add": "sum"}
# Multiply-adds of a dense projection that cost about as much as gathering one feature element
# (an H100: ~50 TFLOP/s of fp32 GEMM against ~3 TB/s of gathers).
kFmaPerGather = 32


def project_first(num_src, num_dst, num_edges, in_channels, out_channels):
    """Whether projecting the sources before aggregating is cheaper than projecting the aggregate."""
    project = num_src * in_channels * out_channels / kFmaPerGather + num_edges * out_channels
    aggregate = num_dst * in_channels * out_channels / kFmaPerGather + num_edges * in_channels
    return project < aggregate


class _AggregateThenProject(torch.autograd.Function):
    """lin_l(aggregate(x_src)) + lin_r(x_dst) for the linear aggregations as one autograd node:
    forward one g-SpMM and two GEMMs into one output, backward the GEMMs' transposes and one g-SpMM
    of the aggregate's gradient back to the sources (the transposed g-SpMM on dynamic graphs). The
    layer's per-step host work is what small sampled blocks wait for; one node instead of five keeps
    it down. w_r is None without a root weight, b_l None without a bias."""

    @staticmethod
    def forward(ctx, g, reduce, x_src, x_dst, w_l, b_l, w_r):
        agg = K.spmm(g, "copy_lhs", reduce, x_src, None)[0]
        out = torch.addmm(b_l, agg, w_l.t()) if b_l is not None else torch.mm(agg, w_l.t())
        if w_r is not None:
            out.addmm_(x_dst, w_r.t())
        ctx.g, ctx.reduce = g, reduce
        ctx.save_for_backward(x_src, agg, x_dst, w_l, w_r)
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dout):
        x_src, agg, x_dst, w_l, w_r = ctx.saved_tensors
        need = ctx.needs_input_grad
        dx_src = dx_dst = dw_l = db = dw_r = None
        if need[2]:
            dx_src = spmm.sum_backward(ctx.g, "copy_lhs", ctx.reduce, x_src, None, dout.mm(w_l), True, False)[0]
        if need[3] and w_r is not None:
            dx_dst = dout.mm(w_r)
        if need[4]:
            dw_l = dout.t().mm(agg)
        if need[5]:
            db = dout.sum(0)
        if need[6] and w_r is not None:
            dw_r = dout.t().mm(x_dst)
        return None, None, dx_src, dx_dst, dw_l, db, dw_r


class SAGEConv(torch.nn.Module):
    def __init__(self, in_channels, out_channels, aggr="mean", normalize=False, root_weight=True, project=False,
                 bias=True):
        super().__init__()
        if aggr not in _AGGR:
            raise ShapeError(f"aggr must be one of {', '.join(_AGGR)}, got '{aggr}'")
        if project:
            raise ShapeError("SAGEConv(project=True) is not supported")
        if isinstance(in_channels, int):
            in_channels = (in_channels, in_channels)
        self.in_channels, self.out_channels = in_channels, out_channels
        self.aggr, self.normalize, self.root_weight = aggr, normalize, root_weight
        self.lin_l = torch.nn.Linear(in_channels[0], out_channels, bias=bias)
        self.lin_r = torch.nn.Linear(in_channels[1], out_channels, bias=False) if root_weight else None
        self._graph = GraphInput()

    def reset_parameters(self):
        self.lin_l.reset_parameters()
        if self.lin_r is not None:
            self.lin_r.reset_parameters()

    def forward(self, x, edge_index, size=None):
        x_src, x_dst = x if isinstance(x, (tuple, list)) else (x, x)
        num_src, num_dst = (x_src.shape[0], x_dst.shape[0]) if size is None else size
        g = self._graph(edge_index, num_src, num_dst)
        reduce = _AGGR[self.aggr]
        linear = reduce in ("mean", "sum")
        project = linear and project_first(g.num_src, g.num_dst, g.num_edges, x_src.shape[-1], self.out_channels)
        if linear and not project and x_src.dim() == 2 and x_dst.dim() == 2 and torch.is_grad_enabled():
            w_r = self.lin_r.weight if self.root_weight else None
            out = _AggregateThenProject.apply(g, reduce, x_src, x_dst, self.lin_l.weight, self.lin_l.bias, w_r)
        else:
            if project:
                out = spmm.gspmm(g, "copy_lhs", reduce, F.linear(x_src, self.lin_l.weight))
                if self.lin_l.bias is not None:
                    out = out + self.lin_l.bias
            else:
                out = self.lin_l(spmm.gspmm(g, "copy_lhs", reduce, x_src))
            if self.root_weight:
                out = out + self.lin_r(x_dst)
        if self.normalize:
            out = F.normalize(out, p=2.0, dim=-1)
        return out

    def __repr__(self):
        return f"{self.__class__.__name__}({self.in_channels}, {self.out_channels}, aggr={self.aggr})"
