"""gsparse.edge_softmax: softmax of edge scores over the in-edges of each destination node (or the
out-edges of each source node), as in GAT.

    a[e] = exp(s[e] - m[v]) / sum over in-edges e' of v of exp(s[e'] - m[v]),   m[v] = max s over them

Forward: g-SpMM copy_rhs/max (m), g-SDDMM sub (s - m[v]), exp, g-SpMM copy_rhs/sum, g-SDDMM div.
Backward: ds = a * (da - sum over in-edges of v of a * da), one g-SpMM and one g-SDDMM.
"""

import torch

from . import _kernels as K
from ._native import ShapeError


class EdgeSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, g, scores):
        m = K.spmm(g, "copy_rhs", "max", None, scores)[0]
        ex = torch.exp_(K.sddmm(g, "sub", scores, m, "e", "v"))
        den = K.spmm(g, "copy_rhs", "sum", None, ex)[0]
        out = K.sddmm(g, "div", ex, den, "e", "v")
        ctx.g = g
        ctx.save_for_backward(out)
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        p = out * grad
        t = K.spmm(ctx.g, "copy_rhs", "sum", None, p)[0]
        return None, p - K.sddmm(ctx.g, "mul", out, t, "e", "v")


def edge_softmax(g, scores, norm_by="dst"):
    """Softmax of scores [num_edges, ...] over the in-edges of every destination node (norm_by='dst',
    PyG's and DGL's default) or the out-edges of every source node (norm_by='src'). Every feature
    column is normalized separately (one softmax per attention head)."""
    from .graph import Graph

    if not isinstance(g, Graph):
        raise ShapeError(f"g must be a gsparse.Graph, got {type(g).__name__}")
    if norm_by not in ("dst", "src"):
        raise ShapeError(f"norm_by must be 'dst' or 'src', got '{norm_by}'")
    if not isinstance(scores, torch.Tensor) or scores.dim() < 1 or scores.shape[0] != g.num_edges:
        shape = list(scores.shape) if isinstance(scores, torch.Tensor) else type(scores).__name__
        raise ShapeError(f"scores must have num_edges = {g.num_edges} rows, got {shape}")
    if scores.dim() == 1:
        return EdgeSoftmax.apply(g if norm_by == "dst" else g.reverse(), scores.unsqueeze(-1)).squeeze(-1)
    return EdgeSoftmax.apply(g if norm_by == "dst" else g.reverse(), scores)
