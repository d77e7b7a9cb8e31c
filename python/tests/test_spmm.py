"""gsparse.gspmm: every op and reduce against the reference (float64, with broadcasting), the arg
ids of max / min, and torch.autograd.gradcheck of the backward pass in float64."""

import pytest
import torch

import gsparse
from conftest import N, ref_gspmm

OPS = ["add", "sub", "mul", "div", "copy_lhs", "copy_rhs"]
REDUCES = ["sum", "mean", "max", "min"]


def operands(edge_index, lhs_feat, rhs_feat, seed=0):
    gen = torch.Generator().manual_seed(seed)
    E = edge_index.shape[1]
    # Values in [0.5, 1.5): away from 0 for div, and distinct so max / min have no ties.
    lhs = (torch.rand([N] + lhs_feat, generator=gen, dtype=torch.float64) + 0.5).requires_grad_()
    rhs = (torch.rand([E] + rhs_feat, generator=gen, dtype=torch.float64) + 0.5).requires_grad_()
    return lhs, rhs


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("op", OPS)
def test_forward_and_gradcheck(graph, edge_index, op, reduce):
    lhs, rhs = operands(edge_index, [3], [3])
    out = gsparse.gspmm(graph, op, reduce, lhs, rhs)
    ref = ref_gspmm(edge_index, N, op, reduce, lhs.detach(), rhs.detach())
    torch.testing.assert_close(out, ref)
    assert out[5].abs().sum() == 0  # node 5 has no in-edges
    inputs = tuple(t for t, used in ((lhs, op != "copy_rhs"), (rhs, op != "copy_lhs")) if used)

    def f(*xs):
        it = iter(xs)
        a = next(it) if op != "copy_rhs" else None
        b = next(it) if op != "copy_lhs" else None
        return gsparse.gspmm(graph, op, reduce, a, b)

    assert torch.autograd.gradcheck(f, inputs, eps=1e-6, atol=1e-8)


@pytest.mark.parametrize("op, reduce", [("mul", "sum"), ("div", "sum"), ("mul", "max"), ("add", "mean")])
def test_broadcast_heads(graph, edge_index, op, reduce):
    # Multi-head features N x 2 x 3 with one weight per head and edge, E x 2 x 1.
    lhs, rhs = operands(edge_index, [2, 3], [2, 1], seed=1)
    out = gsparse.gspmm(graph, op, reduce, lhs, rhs)
    assert out.shape == (N, 2, 3)
    torch.testing.assert_close(out, ref_gspmm(edge_index, N, op, reduce, lhs.detach(), rhs.detach()))
    f = lambda a, b: gsparse.gspmm(graph, op, reduce, a, b)  # noqa: E731
    assert torch.autograd.gradcheck(f, (lhs, rhs), eps=1e-6, atol=1e-8)


def test_broadcast_lhs(graph, edge_index):
    # Node features broadcast over edge features: N x 1 x 3 with E x 2 x 3.
    lhs, rhs = operands(edge_index, [1, 3], [2, 3], seed=2)
    out = gsparse.gspmm(graph, "mul", "sum", lhs, rhs)
    torch.testing.assert_close(out, ref_gspmm(edge_index, N, "mul", "sum", lhs.detach(), rhs.detach()))
    assert torch.autograd.gradcheck(lambda a, b: gsparse.gspmm(graph, "mul", "sum", a, b), (lhs, rhs),
                                    eps=1e-6, atol=1e-8)


def test_arg_ids(graph, edge_index):
    lhs, rhs = operands(edge_index, [3], [3])
    out, arg_u, arg_e = gsparse.gspmm(graph, "mul", "max", lhs.detach(), rhs.detach(), return_args=True)
    assert arg_u.dtype == torch.int32 and (arg_u[5] == -1).all() and (arg_e[5] == -1).all()
    src = edge_index[0]
    for v in range(5):
        for f in range(3):
            e = int(arg_e[v, f])
            assert int(edge_index[1, e]) == v and int(arg_u[v, f]) == int(src[e])
            assert out[v, f] == lhs[src[e], f] * rhs[e, f]


def test_float32_matches_float64(graph, edge_index):
    lhs, rhs = operands(edge_index, [5], [5])
    out32 = gsparse.gspmm(graph, "mul", "sum", lhs.detach().float(), rhs.detach().float())
    assert out32.dtype == torch.float32
    torch.testing.assert_close(out32.double(), gsparse.gspmm(graph, "mul", "sum", lhs, rhs).detach(),
                               rtol=1e-5, atol=1e-5)


def test_aliases_and_non_contiguous(graph, edge_index):
    x = torch.rand(3, N, dtype=torch.float64).t()  # not contiguous
    torch.testing.assert_close(gsparse.gspmm(graph, "copy_u", "sum", x),
                               ref_gspmm(edge_index, N, "copy_lhs", "sum", x, None))
