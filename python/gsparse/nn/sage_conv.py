"""SAGEConv: GraphSAGE with PyG's SAGEConv signature.

    out = lin_l(aggregate over in-edges of x_src[u]) + lin_r(x_dst),  aggregate: mean, max, sum, min

The aggregation is one g-SpMM copy_lhs/<aggr> (max and min keep arg ids for backward); nodes
without in-edges aggregate to 0. For the linear aggregations (mean, sum) the layer aggregates the
narrower side: with more input than output channels it projects first and aggregates the projection,
lin_l's bias added afterwards (W mean(x) = mean(W x), and both are 0 without in-edges), so the g-SpMM
moves out_channels features per edge instead of in_channels.
"""

import torch
import torch.nn.functional as F

from .. import spmm
from .._native import ShapeError
from .graph_input import GraphInput

_AGGR = {"mean": "mean", "max": "max", "min": "min", "sum": "sum", "add": "sum"}


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
        if reduce in ("mean", "sum") and x_src.shape[-1] > self.out_channels:
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
