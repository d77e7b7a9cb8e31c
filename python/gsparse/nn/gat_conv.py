"""GATConv: multi-head graph attention with PyG's GATConv signature.

    h = x W (heads x out_channels);  s[e] = leaky_relu(<h[u], a_src> + <h[v], a_dst>) per head
    alpha = softmax of s over the in-edges of v;  out[v] = sum over in-edges of alpha[e] h[u]

s is one g-SDDMM u_add_v of the per-node scores, the softmax gsparse.edge_softmax, and the
aggregation one g-SpMM u_mul_e_sum of h [N, H, C] with alpha [E, H, 1]: per-head weights broadcast
over the channels, so no [E, H, C] tensor is formed (its backward is a g-SDDMM dot).

On a dynamic graph the self-loops are not added to the graph (a read-back of the loop count and a
sort of the new edge list every step) but joined to the softmax per row: existing loop edges get
the score -inf, and node v < min(num_src, num_dst) takes part in its own softmax with the score
leaky_relu(<h[v], a_src> + <h_dst[v], a_dst>) and the message h[v] -- the same as the graph whose
loops are replaced by one loop per node (PyG's remove_self_loops + add_self_loops).
"""

import torch
import torch.nn.functional as F

from .. import sddmm, softmax, spmm
from .._native import ShapeError
from .graph_input import GraphInput


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
        dense_loops = self.add_self_loops and g.is_dynamic and not return_attention_weights
        if self.add_self_loops and not dense_loops:
            g = g.with_self_loops()
        H, C = self.heads, self.out_channels
        h = self.lin(x_src).view(-1, H, C)
        h_dst = self.lin(x_dst).view(-1, H, C) if x_dst is not None else h
        a_src = (h * self.att_src).sum(-1)  # [N_src, H]
        a_dst = (h_dst * self.att_dst).sum(-1)  # [N_dst, H]
        s = F.leaky_relu(sddmm.gsddmm(g, "add", a_src, a_dst, "u", "v"), self.negative_slope)
        if dense_loops:
            out = self._attend_with_row_loops(g, h, a_src, a_dst, s)
        else:
            alpha = softmax.edge_softmax(g, s)  # [E, H]
            alpha = F.dropout(alpha, p=self.dropout, training=self.training)
            out = spmm.gspmm(g, "mul", "sum", h, alpha.unsqueeze(-1))  # [N_dst, H, C]
        out = out.reshape(-1, H * C) if self.concat else out.mean(dim=1)
        if self.bias is not None:
            out = out + self.bias
        if return_attention_weights:
            return out, (g.edge_index(x_src.device), alpha)
        return out

    def _attend_with_row_loops(self, g, h, a_src, a_dst, s):
        """Softmax attention over every row's in-edges plus its own loop, the loop kept out of the
        graph (see the module docstring); no synchronisation, no new graph."""
        src, dst = g.coo(h.device)
        s = s.masked_fill((src == dst).unsqueeze(-1), float("-inf"))  # existing loops drop out
        n_dst, n_loops = g.num_dst, min(g.num_src, g.num_dst)
        s_self = torch.full((n_dst, self.heads), float("-inf"), dtype=s.dtype, device=s.device)
        s_self[:n_loops] = F.leaky_relu(a_src[:n_loops] + a_dst[:n_loops], self.negative_slope)
        with torch.no_grad():  # the softmax does not depend on the shift
            m = torch.maximum(spmm.gspmm(g, "copy_rhs", "max", None, s), s_self)
            m = m.masked_fill(torch.isinf(m), 0.0)
        ex = torch.exp(sddmm.gsddmm(g, "sub", s, m, "e", "v"))
        ex_self = torch.exp(s_self - m)
        den = spmm.gspmm(g, "copy_rhs", "sum", None, ex) + ex_self
        den = den + (den == 0).to(den.dtype)  # rows without edges or loop: nothing to weigh
        alpha = F.dropout(sddmm.gsddmm(g, "div", ex, den, "e", "v"), p=self.dropout, training=self.training)
        alpha_self = F.dropout(ex_self / den, p=self.dropout, training=self.training)
        out = spmm.gspmm(g, "mul", "sum", h, alpha.unsqueeze(-1))  # [N_dst, H, C]
        loop_part = torch.zeros_like(out)
        loop_part[:n_loops] = alpha_self[:n_loops].unsqueeze(-1) * h[:n_loops]
        return out + loop_part

    def __repr__(self):
        return f"{self.__class__.__name__}({self.in_channels}, {self.out_channels}, heads={self.heads})"
