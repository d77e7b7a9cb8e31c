"""gsparse.gsddmm: g-SDDMM with autograd.

    out[e] = lhs[t_l(e)] op rhs[t_r(e)]   for e = (u -> v), t in {u: source, v: destination, e: edge}

Backward: the per-edge gradient of each operand (dZ, -dZ, dZ * other, dZ / other, ...) is summed
into the operand's rows: by g-SpMM on the graph (targets v) or its reverse (targets u), or kept per
edge (targets e). For mul / dot / div with one operand on each end of the edge, the product with
the other operand is fused into that g-SpMM, so no num_edges x features tensor is formed.
"""

import torch

from . import _kernels as K
from .graph import Graph
from ._native import ShapeError

_OTHER_END = {"u": "v", "v": "u"}


def _mul_grad(g, dz, other, t_self, t_other):
    """Rows of t_self of sum over edges of dZ[e] * other[t_other(e)] (broadcast), unreduced."""
    if t_self in _OTHER_END and t_other == _OTHER_END[t_self]:
        # Fused: g-SpMM on the graph whose rows are t_self, reading other at its sources (for
        # sources on a dynamic graph: the transposed g-SpMM, no reverse graph).
        if t_self == "u" and K.pushes(g):
            return K.spmm_transposed(g, "mul", "sum", other, dz)
        graph = g if t_self == "v" else g.reverse()
        return K.spmm(graph, "mul", "sum", other, dz)[0]
    if t_self == t_other and t_self != "e":
        # other is constant over the edges of a row.
        s, o = K.align(K.scatter_rows(g, dz, t_self), other)
        return s * o
    d, o = K.align(dz, K.gather_rows(g, other, t_other))
    return K.scatter_rows(g, (d * o).contiguous(), t_self)


class GSDDMM(torch.autograd.Function):
    @staticmethod
    def forward(ctx, g, op, lhs, rhs, lt, rt):
        out = K.sddmm(g, op, lhs, rhs, lt, rt)
        ctx.g, ctx.op, ctx.lt, ctx.rt = g, op, lt, rt
        ctx.save_for_backward(lhs, rhs, out if op == "div" else None)
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dz):
        lhs, rhs, out = ctx.saved_tensors
        g, op, lt, rt = ctx.g, ctx.op, ctx.lt, ctx.rt
        need_lhs = lhs is not None and ctx.needs_input_grad[2]
        need_rhs = rhs is not None and ctx.needs_input_grad[3]
        dz = dz.contiguous()
        dlhs = drhs = None
        if need_lhs:
            if op in ("add", "sub", "copy_lhs"):
                t = K.scatter_rows(g, dz, lt)
            elif op in ("mul", "dot"):
                t = _mul_grad(g, dz, rhs, lt, rt)
            else:  # div
                t = _mul_grad(g, dz, 1.0 / rhs, lt, rt)
            dlhs = K.reduce_to(t, lhs.shape)
        if need_rhs:
            if op in ("add", "copy_rhs"):
                t = K.scatter_rows(g, dz, rt)
            elif op == "sub":
                t = -K.scatter_rows(g, dz, rt)
            elif op in ("mul", "dot"):
                t = _mul_grad(g, dz, lhs, rt, lt)
            else:  # div: d(l / r)/dr = -out / r per edge
                q, r = K.align(-dz * out, K.gather_rows(g, rhs, rt))
                t = K.scatter_rows(g, (q / r).contiguous(), rt)
            drhs = K.reduce_to(t, rhs.shape)
        return None, None, dlhs, drhs, None, None


def gsddmm(g, op, lhs=None, rhs=None, lhs_target="u", rhs_target="v"):
    """g-SDDMM on graph g: out[e] = lhs[lhs_target(e)] op rhs[rhs_target(e)] for every edge
    e = (u -> v), in edge-id order.

    op: add, sub, mul, div, dot (reduces the last feature dimension to 1), copy_lhs, copy_rhs.
    Targets: 'u' (source node: lhs has num_src rows), 'v' (destination: num_dst rows) or 'e'
    (edge: num_edges rows). Feature dimensions broadcast (DGL rules).
    """
    if not isinstance(g, Graph):
        raise ShapeError(f"g must be a gsparse.Graph, got {type(g).__name__}")
    op = K.canonical_op(op, K.SDDMM_OPS, "g-SDDMM")
    lt = K.canonical_target(lhs_target, "lhs_target")
    rt = K.canonical_target(rhs_target, "rhs_target")
    lhs = lhs if K.uses_lhs(op) else None
    rhs = rhs if K.uses_rhs(op) else None
    if not K.needs_grad(lhs, rhs):  # nothing to differentiate: the kernel alone
        return K.sddmm(g, op, lhs, rhs, lt, rt)
    return GSDDMM.apply(g, op, lhs, rhs, lt, rt)
