"""GINConv: the graph isomorphism network layer, with PyG's GINConv signature.

    out = nn((1 + eps) x_dst + sum over in-edges of x_src[u])

The sum is one g-SpMM copy_lhs/sum; eps is a constant or, with train_eps=True, a parameter.
"""

import torch

from .. import spmm
from .._native import ShapeError
from .graph_input import GraphInput


class GINConv(torch.nn.Module):
    def __init__(self, nn, eps=0.0, train_eps=False):
        super().__init__()
        self.nn = nn
        self.initial_eps = float(eps)
        if train_eps:
            self.eps = torch.nn.Parameter(torch.tensor([float(eps)]))
        else:
            self.register_buffer("eps", torch.tensor([float(eps)]))
        self._graph = GraphInput()

    def reset_parameters(self):
        if hasattr(self.nn, "reset_parameters"):
            self.nn.reset_parameters()
        self.eps.data.fill_(self.initial_eps)

    def forward(self, x, edge_index, size=None):
        x_src, x_dst = x if isinstance(x, (tuple, list)) else (x, x)
        if x_src.dim() != 2:
            raise ShapeError(f"x must be [num_nodes, channels], got {list(x_src.shape)}")
        num_src, num_dst = (x_src.shape[0], x_dst.shape[0]) if size is None else size
        g = self._graph(edge_index, num_src, num_dst)
        out = spmm.gspmm(g, "copy_lhs", "sum", x_src)
        if x_dst is not None:
            out = out + (1 + self.eps) * x_dst
        return self.nn(out)

    def __repr__(self):
        return f"{self.__class__.__name__}(nn={self.nn})"
