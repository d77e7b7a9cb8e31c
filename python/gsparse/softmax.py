"""gsparse.edge_softmax: softmax of edge scores over the in-edges of each destination node (or the
out-edges of each source node), as in GAT.

    a[e] = exp(s[e] - m[v]) / sum over in-edges e' of v of exp(s[e'] - m[v]),   m[v] = max s over them

Forward: g-SpMM copy_rhs/max (m), g-SDDMM sub (s - m[v]), exp, g-SpMM copy_rhs/sum, g-SDDMM div.
Backward: ds = a * (da - sum over in-edges of v of a * da), one g-SpMM and one g-SDDMM.

edge_attention: GAT's attention weights from per-node scores in one autograd node,

    alpha = edge_softmax(leaky_relu(a_src[u] + a_dst[v]))   (masked edges scored -inf)

the same kernels as the composition (one g-SDDMM for the scores, the softmax's four) without the
per-operator autograd nodes between them, whose host work is what small sampled blocks wait for.
Backward: the softmax's backward, leaky_relu's, then one g-SpMM into a_dst and one transposed
g-SpMM into a_src.
"""

import torch
import torch.nn.functional as F

from . import _kernels as K
from .graph import Graph
from ._native import ShapeError


def _softmax(g, scores):
    m = K.spmm(g, "copy_rhs", "max", None, scores)[0]
    ex = torch.exp_(K.sddmm(g, "sub", scores, m, "e", "v"))
    den = K.spmm(g, "copy_rhs", "sum", None, ex)[0]
    return K.sddmm(g, "div", ex, den, "e", "v")


def _softmax_backward(g, out, grad):
    p = out * grad
    t = K.spmm(g, "copy_rhs", "sum", None, p)[0]
    return p.sub_(K.sddmm(g, "mul", out, t, "e", "v"))


class EdgeSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, g, scores):
        out = _softmax(g, scores)
        ctx.g = g
        ctx.save_for_backward(out)
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return None, _softmax_backward(ctx.g, out, grad)


class EdgeAttention(torch.autograd.Function):
    """alpha [E, H] = edge_softmax(leaky_relu(a_src[u] + a_dst[v]), -inf where mask) (see the module
    docstring); mask [E] bool or None."""

    @staticmethod
    def forward(ctx, g, a_src, a_dst, negative_slope, mask):
        pre = K.sddmm(g, "add", a_src, a_dst, "u", "v")
        # leaky_relu's derivative from its result where the slope keeps the sign, else from its input.
        from_result = negative_slope >= 0
        s = F.leaky_relu_(pre, negative_slope) if from_result else F.leaky_relu(pre, negative_slope)
        if mask is not None:
            s.masked_fill_(mask.unsqueeze(-1), float("-inf"))
        alpha = _softmax(g, s)
        ctx.g, ctx.negative_slope, ctx.from_result = g, negative_slope, from_result
        ctx.save_for_backward(alpha, s if from_result else pre)
        return alpha

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        alpha, act = ctx.saved_tensors
        need = ctx.needs_input_grad
        # Masked edges have alpha = 0, so their score gradient is 0 already.
        ds = _softmax_backward(ctx.g, alpha, grad.contiguous())
        ds = torch.ops.aten.leaky_relu_backward(ds, act, ctx.negative_slope, ctx.from_result)
        da_src = K.scatter_rows(ctx.g, ds, "u") if need[1] else None
        da_dst = K.spmm(ctx.g, "copy_rhs", "sum", None, ds)[0] if need[2] else None
        return None, da_src, da_dst, None, None


def edge_attention(g, a_src, a_dst, negative_slope=0.2, mask=None):
    """GAT's attention weights on graph g: alpha [num_edges, H] = softmax over the in-edges of each
    destination of leaky_relu(a_src[u] + a_dst[v]), with a_src [num_src, H] and a_dst [num_dst, H]
    the per-node scores; edges where mask [num_edges] (bool) is True are left out (weight 0)."""
    return EdgeAttention.apply(g, a_src, a_dst, float(negative_slope), mask)


def edge_softmax(g, scores, norm_by="dst"):
    """Softmax of scores [num_edges, ...] over the in-edges of every destination node (norm_by='dst',
    PyG's and DGL's default) or the out-edges of every source node (norm_by='src'). Every feature
    column is normalized separately (one softmax per attention head)."""
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
