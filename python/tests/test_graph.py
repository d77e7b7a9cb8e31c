"""gsparse.Graph: the constructors agree with each other and with the edge list, cached layouts are
right, and bad input raises GraphError naming the problem."""

import os

import pytest
import torch

import gsparse
from conftest import EDGES, N, real_graph


def test_edge_index_layouts(graph, edge_index):
    assert (graph.num_src, graph.num_dst, graph.num_edges) == (N, N, len(EDGES[0]))
    row_ptr, col_idx, eids = graph.csr()
    # Row v lists the sources of v's in-edges, with their edge ids.
    for v in range(N):
        got = sorted((int(col_idx[p]), int(eids[p])) for p in range(row_ptr[v], row_ptr[v + 1]))
        want = sorted((EDGES[0][e], e) for e in range(len(EDGES[0])) if EDGES[1][e] == v)
        assert got == want
    src, dst = graph.coo()
    assert src.tolist() == EDGES[0] and dst.tolist() == EDGES[1]
    assert torch.equal(graph.edge_index(), edge_index)
    assert graph.in_degrees().tolist() == [2, 3, 3, 1, 2, 0]
    assert graph.out_degrees().tolist() == [2, 3, 2, 2, 0, 2]
    col_ptr, row_idx, rev_eids = graph.csc()
    assert col_ptr.tolist() == [0, 2, 5, 7, 9, 9, 11]
    assert graph.reverse().reverse() is graph


def test_from_csr_and_scipy_match(graph):
    row_ptr, col_idx, eids = graph.csr()
    g2 = gsparse.Graph.from_csr(row_ptr, col_idx, edge_ids=eids)
    assert torch.equal(g2.edge_index(), graph.edge_index())
    import scipy.sparse as sp  # python3-scipy, installed by scripts/install-deps.sh

    w = torch.arange(1, len(EDGES[0]) + 1, dtype=torch.float64)
    m = sp.coo_matrix((w.numpy(), (EDGES[0], EDGES[1])), shape=(N, N))
    g3 = gsparse.Graph.from_scipy(m)
    assert torch.equal(g3.edge_index(), graph.edge_index())
    assert torch.equal(g3.edge_weight, w)
    # A bipartite matrix: 3 sources, 2 destinations.
    g4 = gsparse.Graph.from_scipy(sp.csr_matrix(torch.tensor([[1.0, 0], [0, 2], [3, 0]]).numpy()))
    assert (g4.num_src, g4.num_dst, g4.num_edges) == (3, 2, 3)
    assert g4.edge_index().tolist() == [[0, 1, 2], [0, 1, 0]]


def test_load_cora():
    path = real_graph("cora")
    assert os.path.exists(path), f"{path} is missing"
    g = gsparse.Graph.load(path)
    assert g.num_nodes == 2708 and g.num_edges > 0
    assert int(g.in_degrees().sum()) == g.num_edges


def test_with_self_loops(graph):
    gl = graph.with_self_loops()
    src, dst = gl.coo()
    assert gl.num_edges == len(EDGES[0]) - 1 + N  # the loop 3 -> 3 is replaced
    assert sorted(int(s) for s, d in zip(src, dst) if s == d) == list(range(N))
    w = torch.arange(len(EDGES[0]), dtype=torch.float32) + 10
    wl = graph.self_loop_weights(w, fill_value=1.0)
    assert wl[-N:].tolist() == [1.0, 1.0, 1.0, 14.0, 1.0, 1.0]  # node 3 keeps its loop's weight


@pytest.mark.parametrize("bad, message", [
    (torch.tensor([[0, 1, 2]]), "shape"),
    (torch.tensor([[0, -1], [1, 0]]), "negative"),
    (torch.tensor([[0.0, 1.0], [1.0, 0.0]]), "integers"),
    (torch.tensor([[0, 7], [1, 0]]), "out of range"),
])
def test_bad_edge_index(bad, message):
    with pytest.raises(gsparse.GraphError, match=message):
        gsparse.Graph(bad, num_nodes=3)


def test_bad_csr():
    with pytest.raises(gsparse.GraphError, match="nnz"):
        gsparse.Graph.from_csr(torch.tensor([0, 2, 5]), torch.tensor([0, 1, 1]))
    with pytest.raises(gsparse.GraphError):
        gsparse.Graph.from_csr(torch.tensor([0, 2, 1]), torch.tensor([0]))
    with pytest.raises(gsparse.GraphError, match="edge_ids"):
        gsparse.Graph.from_csr(torch.tensor([0, 1, 2]), torch.tensor([0, 1]), edge_ids=torch.tensor([0]))
    assert issubclass(gsparse.GraphError, ValueError) and issubclass(gsparse.GraphError, gsparse.Error)


def test_missing_file():
    with pytest.raises(gsparse.Error, match="nonexistent"):
        gsparse.Graph.load("/nonexistent/g.mtx")


@pytest.mark.parametrize("dynamic", [False, True])
def test_training_steps_leave_no_reference_cycles(dynamic):
    """A graph and its cached reverse (the backward's graph) form no cycle: each step's graphs are
    freed by reference counting when the step lets go of them, never left to the garbage collector
    (which mini-batch training, new graphs every step, would otherwise keep busy and their arrays
    alive)."""
    import gc
    torch.manual_seed(0)
    conv = gsparse.nn.GINConv(torch.nn.Linear(8, 8))
    opt = torch.optim.SGD(conv.parameters(), lr=0.1)

    def step():
        ei = torch.randint(0, 50, (2, 200))
        g = gsparse.Graph(ei, num_nodes=50, dynamic=dynamic)
        assert g.reverse().reverse() is g
        x = torch.randn(50, 8, requires_grad=True)
        out = gsparse.gspmm(g, "copy_lhs", "mean", conv(x, g))
        out.square().sum().backward()
        opt.step()

    step()
    gc.collect()
    gc.disable()
    try:
        for _ in range(5):
            step()
        assert gc.collect() == 0
    finally:
        gc.enable()
