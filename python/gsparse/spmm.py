"""gsparse.gspmm: g-SpMM with autograd.

    out[v] = reduce over edges e = (u -> v) of  lhs[u] op rhs[e]

Backward (dZ = the gradient of out):
  sum / mean  dlhs = g-SpMM on the reverse graph (copy / mul / div of dZ with rhs), reduced to
              lhs's shape; on dynamic graphs the transposed g-SpMM in push form on the graph
              itself instead (no reverse graph to build: _kernels.pushes); drhs = g-SDDMM of lhs[u] and dZ[v] (a dot product over the last
              dimension when rhs broadcasts over it, as for attention weights E x H x 1). mean
              divides dZ by the in-degree first.
  max / min   the gradient flows to the saved arg ids: dZ (times the local derivative of op) is
              scattered to lhs[arg_u] and rhs[arg_e].
"""

import torch

from . import _kernels as K
from .graph import Graph
from ._native import ShapeError


def _degree_scale(g, dz):
    deg = g.in_degrees(dz.device).clamp(min=1).to(dz.dtype)
    return dz / deg.view([-1] + [1] * (dz.dim() - 1))


def _dot_shaped(lhs_feat, rhs_feat, out_feat):
    """Whether lhs has the output's feature shape and rhs the same but 1 in the last dim."""
    lf = [1] * (len(out_feat) - len(lhs_feat)) + list(lhs_feat)
    rf = [1] * (len(out_feat) - len(rhs_feat)) + list(rhs_feat)
    return len(out_feat) >= 1 and out_feat[-1] > 1 and lf == list(out_feat) and rf == list(out_feat[:-1]) + [1]


def _lhs_dz_product(g, lhs, dz, rhs_shape):
    """sum over f of dZ[v] * lhs[u] per edge, in rhs's shape: [num_edges, *rhs_feat]."""
    out_feat = list(dz.shape[1:])
    if _dot_shaped(lhs.shape[1:], rhs_shape[1:], out_feat):
        t = K.sddmm(g, "dot", lhs, dz, "u", "v")
        return t.reshape(rhs_shape)
    return K.reduce_to(K.sddmm(g, "mul", lhs, dz, "u", "v"), rhs_shape)


def sum_backward(g, op, reduce, lhs, rhs, dz, need_lhs, need_rhs):
    """The gradients (dlhs, drhs) of g-SpMM sum or mean with op, given dZ (see the module docstring)."""
    dlhs = drhs = None
    if need_lhs and K.pushes(g):
        # The transposed g-SpMM on g itself (mean's 1 / in-degree applied in the kernel).
        if op in ("copy_lhs", "add", "sub"):
            t = K.spmm_transposed(g, "copy_lhs", reduce, dz, None)
        else:  # mul, div
            t = K.spmm_transposed(g, op, reduce, dz, rhs)
        dlhs = K.reduce_to(t, lhs.shape)
        need_lhs = False
    if reduce == "mean" and (need_lhs or need_rhs):
        dz = _degree_scale(g, dz)
    if need_lhs:
        rev = g.reverse()
        if op in ("copy_lhs", "add", "sub"):
            t = K.spmm(rev, "copy_lhs", "sum", dz, None)[0]
        else:  # mul, div
            t = K.spmm(rev, op, "sum", dz, rhs)[0]
        dlhs = K.reduce_to(t, lhs.shape)
    if need_rhs:
        if op in ("copy_rhs", "add", "sub"):
            t = K.reduce_to(K.sddmm(g, "copy_lhs", dz, None, "v", "v"), rhs.shape)
            drhs = -t if op == "sub" else t
        elif op == "mul":
            drhs = _lhs_dz_product(g, lhs, dz, rhs.shape)
        else:  # div: d(x / y)/dy = -x / y^2
            drhs = -_lhs_dz_product(g, lhs, dz, rhs.shape) / (rhs * rhs)
    return dlhs, drhs


def _arg_backward(g, op, lhs, rhs, dz, arg_u, arg_e, need_lhs, need_rhs):
    out_feat = list(dz.shape[1:])
    valid = arg_u >= 0
    iu = arg_u.clamp(min=0).to(torch.int64)
    ie = arg_e.clamp(min=0).to(torch.int64)
    dz = torch.where(valid, dz, torch.zeros((), dtype=dz.dtype, device=dz.device))
    x_at = (lambda: K.expand_to(lhs, out_feat).gather(0, iu)) if lhs is not None else None
    y_at = (lambda: K.expand_to(rhs, out_feat).gather(0, ie)) if rhs is not None else None
    dlhs = drhs = None
    if need_lhs:
        c = dz * y_at() if op == "mul" else dz / y_at() if op == "div" else dz
        full = torch.zeros([g.num_src] + out_feat, dtype=dz.dtype, device=dz.device).scatter_add_(0, iu, c)
        dlhs = K.reduce_to(full, lhs.shape)
    if need_rhs:
        if op == "mul":
            c = dz * x_at()
        elif op == "div":
            y = y_at()
            c = -dz * x_at() / (y * y)
        else:
            c = -dz if op == "sub" else dz
        full = torch.zeros([g.num_edges] + out_feat, dtype=dz.dtype, device=dz.device).scatter_add_(0, ie, c)
        drhs = K.reduce_to(full, rhs.shape)
    return dlhs, drhs


class GSpMM(torch.autograd.Function):
    @staticmethod
    def forward(ctx, g, op, reduce, lhs, rhs, schedule=None):
        out, arg_u, arg_e = K.spmm(g, op, reduce, lhs, rhs, schedule)
        ctx.g, ctx.op, ctx.reduce = g, op, reduce
        ctx.save_for_backward(lhs if K.uses_lhs(op) else None, rhs if K.uses_rhs(op) else None, arg_u, arg_e)
        if arg_u is not None:
            ctx.mark_non_differentiable(arg_u, arg_e)
        return out, arg_u, arg_e

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dz, _du, _de):
        lhs, rhs, arg_u, arg_e = ctx.saved_tensors
        need_lhs = lhs is not None and ctx.needs_input_grad[3]
        need_rhs = rhs is not None and ctx.needs_input_grad[4]
        if not (need_lhs or need_rhs):
            return None, None, None, None, None, None
        dz = dz.contiguous()
        if ctx.reduce in ("sum", "mean"):
            dlhs, drhs = sum_backward(ctx.g, ctx.op, ctx.reduce, lhs, rhs, dz, need_lhs, need_rhs)
        else:
            dlhs, drhs = _arg_backward(ctx.g, ctx.op, lhs, rhs, dz, arg_u, arg_e, need_lhs, need_rhs)
        return None, None, None, dlhs, drhs, None


def gspmm(g, op, reduce, lhs=None, rhs=None, *, return_args=False, schedule=None):
    """g-SpMM on graph g: out[v] = reduce over in-edges e = (u -> v) of (lhs[u] op rhs[e]).

    op: add, sub, mul, div, copy_lhs (copy_u), copy_rhs (copy_e); reduce: sum, mean, max, min.
    lhs: [num_src, ...] node features (unused by copy_rhs); rhs: [num_edges, ...] edge features by
    edge id (unused by copy_lhs). Feature dimensions broadcast (DGL rules). Nodes without in-edges
    get 0. With return_args=True, max / min also return (arg_u, arg_e), the int32 source and edge
    id that produced each element (-1 for nodes without in-edges).

    schedule: the forward kernel's schedule point instead of the default, e.g.
    "spmm_segments{run=R}": the edges divided into runs of R (4 to 256, default 32) whatever the
    rows' lengths, for graphs with a few very long rows (sum and mean; atomic adds on the GPU, so the
    order of the additions varies between calls); "spmm_segments{run=R, tile=K}" also gives each GPU
    thread K feature elements (1, 2, 4 or 8, at most the feature length; faster from about F = 16
    up); "spmm_segments{run=R, tile=K, lanes=32}" (CUDA, float32, rows of at most K elements: F = 1,
    or F = K) gives each warp 32 x R consecutive edges, one a lane per step, combined through warp
    shuffles (the default's form at F = 1 on heavy-tailed graphs). The backward pass is the default one.
    """
    if not isinstance(g, Graph):
        raise ShapeError(f"g must be a gsparse.Graph, got {type(g).__name__}")
    op = K.canonical_op(op, K.SPMM_OPS, "g-SpMM")
    if reduce not in K.REDUCES:
        raise ShapeError(f"unknown reduce '{reduce}' (expected one of {', '.join(K.REDUCES)})")
    lhs = lhs if K.uses_lhs(op) else None
    rhs = rhs if K.uses_rhs(op) else None
    if schedule is not None and not isinstance(schedule, str):
        raise ShapeError(f"schedule must be a schedule point as text, got {type(schedule).__name__}")
    if K.needs_grad(lhs, rhs):
        out, arg_u, arg_e = GSpMM.apply(g, op, reduce, lhs, rhs, schedule)
    else:  # nothing to differentiate: the kernel alone, without an autograd node
        out, arg_u, arg_e = K.spmm(g, op, reduce, lhs, rhs, schedule)
    if return_args:
        return out, arg_u, arg_e
    return out
