"""gsparse.nn layers against plain PyTorch reference code (gather / index_add over the edge list,
no PyG): outputs and the gradients of inputs and parameters, in float64."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import gsparse
from conftest import N


def self_looped(edge_index, n, weight=None, fill=1.0):
    """PyG's add_remaining_self_loops: drop loops, add one per node (keeping an old loop's weight)."""
    src, dst = edge_index
    keep = src != dst
    w = torch.ones(src.shape[0], dtype=torch.float64) if weight is None else weight
    loop_w = torch.full((n,), fill, dtype=w.dtype)
    loop_w[src[~keep]] = w[~keep]
    loops = torch.arange(n)
    return torch.stack([torch.cat([src[keep], loops]), torch.cat([dst[keep], loops])]), torch.cat([w[keep], loop_w])


def ref_gcn(layer, x, edge_index, weight=None):
    ei, w = self_looped(edge_index, x.shape[0], weight, 2.0 if layer.improved else 1.0)
    src, dst = ei
    deg = torch.zeros(x.shape[0], dtype=x.dtype).index_add_(0, dst, w)
    dinv = deg.pow(-0.5)
    h = x @ layer.lin.weight.t()
    msg = h[src] * (dinv[src] * w * dinv[dst]).unsqueeze(-1)
    return torch.zeros_like(h).index_add_(0, dst, msg) + layer.bias


def ref_sage(layer, x, edge_index):
    src, dst = edge_index
    msgs = x[src]
    agg = torch.zeros(x.shape[0], x.shape[1], dtype=x.dtype)
    for v in range(x.shape[0]):
        m = msgs[dst == v]
        if m.shape[0]:
            agg[v] = {"mean": m.mean(0), "sum": m.sum(0)}.get(layer.aggr) if layer.aggr != "max" else m.max(0).values
    return layer.lin_l(agg) + layer.lin_r(x)


def ref_gat(layer, x, edge_index, x_dst=None):
    """x_dst: the destinations' features of a block whose destinations are its first sources (they
    get the loops, as in PyG's bipartite GATConv); by default x itself."""
    x_dst = x if x_dst is None else x_dst
    num_dst = x_dst.shape[0]
    ei, _ = self_looped(edge_index, num_dst)
    src, dst = ei
    H, C = layer.heads, layer.out_channels
    h = (x @ layer.lin.weight.t()).view(-1, H, C)
    hd = (x_dst @ layer.lin.weight.t()).view(-1, H, C)
    s = F.leaky_relu((h * layer.att_src).sum(-1)[src] + (hd * layer.att_dst).sum(-1)[dst], layer.negative_slope)
    alpha = torch.empty_like(s)
    for v in range(num_dst):
        m = dst == v
        alpha[m] = torch.softmax(s[m], dim=0)
    out = torch.zeros(num_dst, H, C, dtype=x.dtype).index_add_(0, dst, h[src] * alpha.unsqueeze(-1))
    out = out.reshape(-1, H * C) if layer.concat else out.mean(1)
    return out + layer.bias


def compare(layer, ref_fn, x, *args):
    layer = layer.double()
    x1 = x.clone().requires_grad_()
    x2 = x.clone().requires_grad_()
    out = layer(x1, *args)
    grads = torch.autograd.grad(out.pow(2).sum(), [x1] + list(layer.parameters()))
    ref = ref_fn(layer, x2)
    ref_grads = torch.autograd.grad(ref.pow(2).sum(), [x2] + list(layer.parameters()))
    torch.testing.assert_close(out, ref)
    for a, b in zip(grads, ref_grads):
        torch.testing.assert_close(a, b)


@pytest.fixture
def x():
    return torch.rand(N, 5, generator=torch.Generator().manual_seed(0), dtype=torch.float64)


def test_gcn(x, edge_index, graph):
    torch.manual_seed(0)
    layer = gsparse.nn.GCNConv(5, 4)
    ref = lambda l, xx: ref_gcn(l, xx, edge_index)  # noqa: E731
    compare(layer, ref, x, graph)
    compare(layer, ref, x, edge_index)  # a PyG edge_index works as well


@pytest.mark.parametrize("improved", [False, True])
@pytest.mark.parametrize("fold", [True, False])
def test_gcn_static_normalization_forms(x, edge_index, monkeypatch, improved, fold):
    # Static graphs fold the normalization into cached edge weights up to an average degree
    # (FOLD_MAX_AVG_DEGREE), and scale the rows before and after the aggregation above it: both
    # forms give the reference's outputs and gradients, with and without `improved`.
    from gsparse.nn import gcn_conv
    monkeypatch.setattr(gcn_conv, "FOLD_MAX_AVG_DEGREE", 10**9 if fold else 0)
    torch.manual_seed(4)
    layer = gsparse.nn.GCNConv(5, 4, improved=improved)
    graph = gsparse.Graph(edge_index, num_nodes=N)
    compare(layer, lambda l, xx: ref_gcn(l, xx, edge_index), x, graph)
    assert any(k[0] == "gcn_static_weights" for k in graph._cache if isinstance(k, tuple)) == fold


def test_gcn_edge_weight(x, edge_index, graph):
    torch.manual_seed(1)
    layer = gsparse.nn.GCNConv(5, 3, improved=True).double()
    w = torch.rand(edge_index.shape[1], dtype=torch.float64) + 0.5
    w1, w2 = w.clone().requires_grad_(), w.clone().requires_grad_()
    out = layer(x, graph, w1)
    ref = ref_gcn(layer, x, edge_index, w2)
    torch.testing.assert_close(out, ref)
    (g1,) = torch.autograd.grad(out.sum(), w1)
    (g2,) = torch.autograd.grad(ref.sum(), w2)
    torch.testing.assert_close(g1, g2)


@pytest.mark.parametrize("aggr", ["mean", "max", "sum"])
@pytest.mark.parametrize("out_channels", [4, 8])  # projected before the aggregation (4 < 5) or after it (8)
def test_sage(x, edge_index, graph, aggr, out_channels):
    torch.manual_seed(2)
    compare(gsparse.nn.SAGEConv(5, out_channels, aggr=aggr), lambda l, xx: ref_sage(l, xx, edge_index), x, graph)


def ref_gin(layer, x_src, x_dst, edge_index):
    src, dst = edge_index
    agg = torch.zeros(x_dst.shape[0], x_src.shape[1], dtype=x_src.dtype).index_add_(0, dst, x_src[src])
    return layer.nn(agg + (1 + layer.eps) * x_dst)


@pytest.mark.parametrize("eps, train_eps", [(0.0, False), (0.25, False), (0.25, True)])
def test_gin(x, edge_index, graph, eps, train_eps):
    # A constant eps runs the sum and the root term as one autograd node (both gradients of x
    # added in its backward), a trained one as PyTorch operations; both match the reference.
    torch.manual_seed(5)
    mlp = torch.nn.Sequential(torch.nn.Linear(5, 6), torch.nn.ReLU(), torch.nn.Linear(6, 3))
    layer = gsparse.nn.GINConv(mlp, eps=eps, train_eps=train_eps)
    compare(layer, lambda l, xx: ref_gin(l, xx, xx, edge_index), x, graph)
    compare(layer, lambda l, xx: ref_gin(l, xx, xx, edge_index), x, edge_index)


@pytest.mark.parametrize("train_eps", [False, True])
def test_gin_bipartite_and_new_eps(x, edge_index, train_eps):
    # (x_src, x_dst) of a block with fewer destinations: each input gets its own gradient. A
    # constant eps written after the first call (load_state_dict) is the one the next call uses.
    torch.manual_seed(6)
    num_dst = N // 2
    keep = edge_index[1] < num_dst
    ei = edge_index[:, keep]
    layer = gsparse.nn.GINConv(torch.nn.Linear(5, 4), eps=0.5, train_eps=train_eps).double()
    g = gsparse.Graph(ei, num_src=N, num_dst=num_dst)
    for eps in (0.5, -0.75):
        state = layer.state_dict()
        state["eps"] = torch.tensor([eps], dtype=torch.float64)
        layer.load_state_dict(state)
        xs, xd = x.clone().requires_grad_(), x[:num_dst].clone().requires_grad_()
        rs, rd = x.clone().requires_grad_(), x[:num_dst].clone().requires_grad_()
        out = layer((xs, xd), g, size=(N, num_dst))
        ref = ref_gin(layer, rs, rd, ei)
        torch.testing.assert_close(out, ref)
        params = [p for p in layer.parameters()]
        grads = torch.autograd.grad(out.pow(2).sum(), [xs, xd] + params)
        ref_grads = torch.autograd.grad(ref.pow(2).sum(), [rs, rd] + params)
        for a, b in zip(grads, ref_grads):
            torch.testing.assert_close(a, b)
        with torch.no_grad():  # without autograd: the same values
            torch.testing.assert_close(layer((x, x[:num_dst]), g, size=(N, num_dst)), ref.detach())


def test_gin_reads_eps_written_through_data(x, graph, edge_index):
    # A constant eps written without a version bump (.data, as reset_parameters does) is the one
    # the next call uses: 1 + eps is read on the device each call.
    layer = gsparse.nn.GINConv(torch.nn.Identity(), eps=0.0).double()
    xx = x.clone().requires_grad_()
    layer(xx, graph)
    layer.eps.data.fill_(0.75)
    torch.testing.assert_close(layer(xx, graph), ref_gin(layer, xx, xx, edge_index))
    layer.reset_parameters()
    torch.testing.assert_close(layer(xx, graph), ref_gin(layer, xx, xx, edge_index))


@pytest.mark.parametrize("concat", [True, False])
def test_gat(x, edge_index, graph, concat):
    torch.manual_seed(3)
    layer = gsparse.nn.GATConv(5, 3, heads=2, concat=concat)
    compare(layer, lambda l, xx: ref_gat(l, xx, edge_index), x, graph)


def test_gat_on_a_static_bipartite_block(x, edge_index):
    # A block of N sources and N // 2 destinations on the CPU (a static graph): loops u -> u for the
    # destinations (PyG's rule for bipartite GATConv), existing loops dropped.
    torch.manual_seed(7)
    num_dst = N // 2
    ei = edge_index[:, edge_index[1] < num_dst]
    g = gsparse.Graph(ei, num_src=N, num_dst=num_dst)
    layer = gsparse.nn.GATConv(5, 3, heads=2).double()
    xs, xd = x.clone().requires_grad_(), x[:num_dst].clone().requires_grad_()
    out = layer((xs, xd), g, size=(N, num_dst))
    rs, rd = x.clone().requires_grad_(), x[:num_dst].clone().requires_grad_()
    ref = ref_gat(layer, rs, ei, rd)
    torch.testing.assert_close(out, ref)
    grads = torch.autograd.grad(out.pow(2).sum(), [xs, xd] + list(layer.parameters()))
    ref_grads = torch.autograd.grad(ref.pow(2).sum(), [rs, rd] + list(layer.parameters()))
    for a, b in zip(grads, ref_grads):
        torch.testing.assert_close(a, b)


def test_layer_rejects_mismatched_graph(x, graph):
    layer = gsparse.nn.GCNConv(5, 4).double()
    with pytest.raises(gsparse.ShapeError, match="rows"):
        layer(x[:4], graph)


@pytest.mark.parametrize("make", [lambda: gsparse.nn.GCNConv(5, 4), lambda: gsparse.nn.SAGEConv(5, 4, aggr="sum"),
                                  lambda: gsparse.nn.GATConv(5, 3, heads=2),
                                  lambda: gsparse.nn.GINConv(torch.nn.Linear(5, 4))])
def test_layers_rebuild_the_graph_of_a_new_edge_index_at_a_freed_ones_address(x, make):
    # A new batch's edge_index can land where the last one was (the allocator reuses freed memory):
    # same address, shape and version, other edges. The layer must not take the old graph for it.
    # numpy memory gives that reuse deterministically: two tensor objects over one array.
    torch.manual_seed(4)
    layer = make().double()
    rng = np.random.default_rng(0)
    edges = rng.integers(0, N, size=(2, 3 * N))
    first = torch.from_numpy(edges)
    layer(x, first)
    address, version = first.data_ptr(), first._version
    del first
    edges[:] = rng.integers(0, N, size=edges.shape)  # the next batch, written in place
    second = torch.from_numpy(edges)
    assert (second.data_ptr(), second._version) == (address, version)
    fresh = make().double()
    fresh.load_state_dict(layer.state_dict())
    torch.testing.assert_close(layer(x, second), fresh(x, second.clone()))
    # The same tensor object again, unmodified, keeps its graph; modified in place, it is rebuilt.
    graph = layer._graph._graph
    layer(x, second)
    assert layer._graph._graph is graph
    second[1] = second[0]  # every edge a self-loop
    torch.testing.assert_close(layer(x, second), fresh(x, second.clone()))
