"""SAGEConv: GraphSAGE with PyG's SAGEConv signature.

    out = lin_l(aggregate over in-edges of x_src[u]) + lin_r(x_dst),  aggregate: mean, max, sum, min

The aggregation is one g-SpMM copy_lhs/<aggr> (max and min keep arg ids for backward); nodes
without in-edges aggregate to 0. For the linear aggregations (mean, sum) W mean(x) = mean(W x) (both
0 without in-edges, lin_l's bias added afterwards), so the layer may project first and aggregate
out_channels features per edge, or aggregate in_channels and project the destinations. It takes the
cheaper order by a cost estimate: the projection's multiply-adds (rows x in x out, at about
kFmaPerGather of them per gathered element) plus the gathered elements (edges x features).
Full graphs with more input than output channels project first; sampled blocks, whose sources
outnumber their destinations many times over, aggregate first.
"""

import torch
import torch.nn.functional as F

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
        if reduce in ("mean", "sum") and project_first(g.num_src, g.num_dst, g.num_edges, x_src.shape[-1],
                                                       self.out_channels):
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
