"""gsparse.gsddmm and gsparse.edge_softmax: forward against the reference and gradcheck in float64,
for every op and the target combinations that take different backward paths."""

import pytest
import torch

import gsparse
from conftest import N, ref_gsddmm


def rand(shape, seed):
    gen = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=gen, dtype=torch.float64) + 0.5).requires_grad_()


def rows(edge_index, target):
    return edge_index.shape[1] if target == "e" else N


def check(graph, edge_index, op, lt, rt, lf, rf, seed=0):
    lhs, rhs = rand([rows(edge_index, lt)] + lf, seed), rand([rows(edge_index, rt)] + rf, seed + 1)
    out = gsparse.gsddmm(graph, op, lhs, rhs, lt, rt)
    ref = ref_gsddmm(edge_index, op, lhs.detach() if op != "copy_rhs" else None,
                     rhs.detach() if op != "copy_lhs" else None, lt, rt)
    torch.testing.assert_close(out, ref)
    inputs = [t for t, used in ((lhs, op != "copy_rhs"), (rhs, op != "copy_lhs")) if used]

    def f(*xs):
        it = iter(xs)
        a = next(it) if op != "copy_rhs" else None
        b = next(it) if op != "copy_lhs" else None
        return gsparse.gsddmm(graph, op, a, b, lt, rt)

    assert torch.autograd.gradcheck(f, tuple(inputs), eps=1e-6, atol=1e-8)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "dot", "copy_lhs", "copy_rhs"])
def test_u_v(graph, edge_index, op):
    check(graph, edge_index, op, "u", "v", [3], [3])


@pytest.mark.parametrize("op, lt, rt", [
    ("mul", "v", "u"), ("mul", "e", "v"), ("mul", "u", "e"), ("mul", "u", "u"),
    ("dot", "v", "e"), ("div", "e", "u"), ("div", "v", "u"), ("sub", "e", "e"),
])
def test_targets(graph, edge_index, op, lt, rt):
    check(graph, edge_index, op, lt, rt, [3], [3], seed=3)


@pytest.mark.parametrize("op, lt, rt", [("add", "u", "v"), ("mul", "e", "v"), ("dot", "u", "v")])
def test_broadcast(graph, edge_index, op, lt, rt):
    check(graph, edge_index, op, lt, rt, [2, 3], [1, 3], seed=5)


def ref_edge_softmax(edge_index, scores):
    dst = edge_index[1]
    out = torch.empty_like(scores)
    for v in range(N):
        m = dst == v
        if m.any():
            out[m] = torch.softmax(scores[m], dim=0)
    return out


@pytest.mark.parametrize("heads", [None, 2])
def test_edge_softmax(graph, edge_index, heads):
    E = edge_index.shape[1]
    s = rand([E] if heads is None else [E, heads], 7) * 4
    s.retain_grad()
    a = gsparse.edge_softmax(graph, s)
    torch.testing.assert_close(a, ref_edge_softmax(edge_index, s.detach()))
    assert torch.autograd.gradcheck(lambda t: gsparse.edge_softmax(graph, t), (s.detach().requires_grad_(),),
                                    eps=1e-6, atol=1e-8)


def test_edge_softmax_by_src(graph, edge_index):
    s = rand([edge_index.shape[1], 2], 8)
    a = gsparse.edge_softmax(graph, s, norm_by="src")
    flipped = edge_index.flip(0)
    torch.testing.assert_close(a, ref_edge_softmax(flipped, s.detach()))


def ref_attention(edge_index, a_src, a_dst, slope, mask):
    s = torch.nn.functional.leaky_relu(a_src[edge_index[0]] + a_dst[edge_index[1]], slope)
    if mask is not None:
        s = s.masked_fill(mask.unsqueeze(-1), float("-inf"))
    return ref_edge_softmax(edge_index, s)


def first_edge_kept_mask(edge_index, seed):
    """A mask over the edges leaving every destination's first in-edge unmasked (no row all -inf)."""
    gen = torch.Generator().manual_seed(seed)
    mask = torch.rand(edge_index.shape[1], generator=gen) < 0.3
    seen = set()
    for i, v in enumerate(edge_index[1].tolist()):
        if v not in seen:
            seen.add(v)
            mask[i] = False
    return mask


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("slope, masked", [(0.2, False), (0.2, True), (-0.5, True), (0.0, False)])
def test_edge_attention_matches_composition(edge_index, dynamic, slope, masked):
    """GAT's fused attention node: forward against plain PyTorch, gradients by gradcheck (float64),
    for slopes that keep and that flip the sign, with and without masked edges."""
    g = gsparse.Graph(edge_index, num_nodes=N, dynamic=dynamic)
    a_src, a_dst = rand([N, 2], 11) * 3 - 2, rand([N, 2], 12) * 3 - 2
    a_src, a_dst = a_src.detach().requires_grad_(), a_dst.detach().requires_grad_()
    mask = first_edge_kept_mask(edge_index, 5) if masked else None
    alpha = gsparse.softmax.edge_attention(g, a_src, a_dst, slope, mask)
    torch.testing.assert_close(alpha, ref_attention(edge_index, a_src.detach(), a_dst.detach(), slope, mask))
    if masked:
        assert bool((alpha.detach()[mask] == 0).all())
    assert torch.autograd.gradcheck(lambda s, d: gsparse.softmax.edge_attention(g, s, d, slope, mask),
                                    (a_src, a_dst), eps=1e-6, atol=1e-7)
