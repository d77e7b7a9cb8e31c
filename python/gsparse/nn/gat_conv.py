"""GATConv: multi-head graph attention with PyG's GATConv signature.

    h = x W (heads x out_channels);  s[e] = leaky_relu(<h[u], a_src> + <h[v], a_dst>) per head
    alpha = softmax of s over the in-edges of v;  out[v] = sum over in-edges of alpha[e] h[u]

s is one g-SDDMM u_add_v of the per-node scores and alpha its softmax, together one autograd node
(softmax.edge_attention); the aggregation is one g-SpMM u_mul_e_sum of h [N, H, C] with alpha
[E, H, 1]: per-head weights broadcast over the channels, so no [E, H, C] tensor is formed (its
backward is a g-SDDMM dot).

Self-loops (PyG's remove_self_loops + add_self_loops) come from Graph.with_masked_self_loops: on a
dynamic graph one loop per node is appended to the rows on the device and the graph's own loops
get the score -inf, so they weigh nothing, without the read-back that removing them would need.
Every row holding a masked loop also holds its appended loop, so no row is all -inf.
The per-node scores <h[n], a_src> and <h[n], a_dst> are computed from x with the projection folded
into the attention vectors, x (W^T a): a GEMM with 2H outputs instead of an [N, H, C] product and
its reduction, forward and backward. On a block whose destination features are the first rows of
its source features (x[:num_dst], as samplers lay blocks out), the destinations' scores are those
rows of the sources' GEMM.
"""

import torch
import torch.nn.functional as F

from .. import softmax, spmm
from .._native import ShapeError
from .graph_input import GraphInput


def _leading_rows_of(a, b):
    """Whether tensor a is b's first rows: a view of the same base at b's address with b's strides
    and gradient requirement (a sampled block's x[:num_dst]), so any function of a's rows is that
    function of b's first rows, gradients included."""
    if a.dim() != b.dim() or a.dtype != b.dtype or a.device != b.device or a.data_ptr() != b.data_ptr():
        return False
    if a.shape[1:] != b.shape[1:] or a.shape[0] > b.shape[0] or (a.shape[0] > 1 and a.stride() != b.stride()):
        return False
    base = b if b._base is None else b._base
    return a.requires_grad == b.requires_grad and (a is b or a._base is base)


class GATConv(torch.nn.Module):
    def __init__(self, in_channels, out_channels, heads=1, concat=True, negative_slope=0.2, dropout=0.0,
                 add_self_loops=True, bias=True):
        super().__init__()
        self.in_channels, self.out_channels, self.heads = in_channels, out_channels, heads
        self.concat, self.negative_slope, self.dropout = concat, negative_slope, dropout
        self.add_self_loops = add_self_loops
        self.lin = torch.nn.Linear(in_channels, heads * out_channels, bias=False)
        self.att_src = torch.nn.Parameter(torch.empty(1, heads, out_channels))
        self.att_dst = torch.nn.Parameter(torch.empty(1, heads, out_channels))
        out = heads * out_channels if concat else out_channels
        self.bias = torch.nn.Parameter(torch.empty(out)) if bias else None
        self._graph = GraphInput()
        self.reset_parameters()

    def reset_parameters(self):
        torch.nn.init.xavier_uniform_(self.lin.weight)
        bound = (6.0 / (self.heads + self.out_channels)) ** 0.5  # glorot over (heads, channels), as PyG
        for a in (self.att_src, self.att_dst):
            torch.nn.init.uniform_(a, -bound, bound)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)

    def forward(self, x, edge_index, return_attention_weights=None, size=None):
        # x: [N, in] on a graph, or (x_src, x_dst) on a bipartite block (both through lin, as PyG's
        # GATConv with an int in_channels); the block's self-loops join node i to itself for
        # i < min(num_src, num_dst).
        x_src, x_dst = x if isinstance(x, (tuple, list)) else (x, None)
        if x_src.dim() != 2:
            raise ShapeError(f"x must be [num_nodes, in_channels], got {list(x_src.shape)}")
        num_src = x_src.shape[0]
        num_dst = x_dst.shape[0] if x_dst is not None else num_src
        if size is not None:
            num_src, num_dst = size
        g = self._graph(edge_index, num_src, num_dst)
        dropped = None
        if self.add_self_loops:
            if return_attention_weights:
                g = g.with_self_loops()
            else:
                g, dropped = g.with_masked_self_loops()
        H, C = self.heads, self.out_channels
        h = self.lin(x_src).view(-1, H, C)
        # The per-node scores <h[n], a> = x[n] (W^T a): through the weights folded with the
        # attention vectors ([H, in] each), one narrow GEMM over x instead of an [N, H, C] product
        # and its reduction (and their backward: no gradient into h from the scores).
        att = torch.cat([self.att_src, self.att_dst]).view(2, H, C, 1)  # [src | dst]
        w_att = (self.lin.weight.view(1, H, C, -1) * att).sum(2).view(2 * H, -1)  # [2H, in]
        if x_dst is None or _leading_rows_of(x_dst, x_src):
            # A block's x[:num_dst] (or one node set): the destinations' rows of the sources' GEMMs.
            a = F.linear(x_src, w_att)
            a_src, a_dst = a[:, :H], a[: (x_dst if x_dst is not None else x_src).shape[0], H:]
        else:
            a_src, a_dst = F.linear(x_src, w_att[:H]), F.linear(x_dst, w_att[H:])
        # The graph's own loops (dropped), replaced by the appended ones, weigh nothing.
        alpha = softmax.edge_attention(g, a_src, a_dst, self.negative_slope, dropped)  # [E, H]
        if self.dropout > 0:
            alpha = F.dropout(alpha, p=self.dropout, training=self.training)
        out = spmm.gspmm(g, "mul", "sum", h, alpha.unsqueeze(-1))  # [N_dst, H, C]
        out = out.reshape(-1, H * C) if self.concat else out.mean(dim=1)
        if self.bias is not None:
            out = out + self.bias
        if return_attention_weights:
            return out, (g.edge_index(x_src.device), alpha)
        return out

    def __repr__(self):
        return f"{self.__class__.__name__}({self.in_channels}, {self.out_channels}, heads={self.heads})"
