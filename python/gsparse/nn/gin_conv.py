"""GINConv: the graph isomorphism network layer, with PyG's GINConv signature.

    out = nn((1 + eps) x_dst + sum over in-edges of x_src[u])

The sum is one g-SpMM copy_lhs/sum. With a constant eps (train_eps=False, the default) the sum and
the root term are one autograd node (_SumWithRoot): forward the g-SpMM and one in-place
multiply-add of (1 + eps) x_dst, backward the transposed g-SpMM and one in-place multiply-add,
instead of three nodes (the g-SpMM, the product, the sum) and autograd's sum of the two gradients
of x when x_src is x_dst. Steps on batches of small graphs are bound by this host work
(docs/minibatch.md). 1 + eps is read on the device each call, never cached on the host. With
train_eps=True eps is a parameter and the root term stays PyTorch operations, which give its
gradient.
"""

import torch

from .. import _kernels as K
from .. import spmm
from .._native import ShapeError
from .graph_input import GraphInput


def _sum_with_root(g, scale, x_src, root):
    """sum over in-edges of x_src[u] + scale * root: the g-SpMM, then one in-place multiply-add."""
    return K.spmm(g, "copy_lhs", "sum", x_src, None)[0].addcmul_(root, scale)


class _SumWithRoot(torch.autograd.Function):
    """sum over in-edges of x_src[u] + scale * x_dst as one autograd node; scale is 1 + eps, a
    one-element tensor without gradient (read on the device: no synchronisation, and never a value
    older than the buffer's). x_dst is None when it is x_src itself (a graph with num_src ==
    num_dst rows on one feature tensor): its two gradients are then added in the backward instead
    of by autograd."""

    @staticmethod
    def forward(ctx, g, scale, x_src, x_dst):
        out = _sum_with_root(g, scale, x_src, x_src if x_dst is None else x_dst)
        ctx.g, ctx.same = g, x_dst is None
        ctx.save_for_backward(scale)
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dout):
        (scale,) = ctx.saved_tensors
        need_src, need_dst = ctx.needs_input_grad[2], ctx.needs_input_grad[3]
        dout = dout.contiguous()
        dx_src = dx_dst = None
        if need_src:
            dx_src = spmm.sum_backward(ctx.g, "copy_lhs", "sum", dout, None, dout, True, False)[0]
            if ctx.same:
                dx_src.addcmul_(dout, scale)
        if need_dst:
            dx_dst = dout * scale
        return None, None, dx_src, dx_dst


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
        if (x_dst is not None and not self.eps.requires_grad and x_dst.shape == (g.num_dst, x_src.shape[1])
                and x_dst.dtype == x_src.dtype):
            scale = 1 + self.eps  # one element, on the device: no read-back
            if K.needs_grad(x_src, x_dst):
                out = _SumWithRoot.apply(g, scale, x_src, None if x_dst is x_src else x_dst)
            else:  # nothing to differentiate: the kernel and the add, without an autograd node
                out = _sum_with_root(g, scale, x_src, x_dst)
            return self.nn(out)
        out = spmm.gspmm(g, "copy_lhs", "sum", x_src)
        if x_dst is not None:
            out = out + (1 + self.eps) * x_dst
        return self.nn(out)

    def __repr__(self):
        return f"{self.__class__.__name__}(nn={self.nn})"
