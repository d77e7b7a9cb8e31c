"""gsparse.nn's layers against torch_geometric's own layers with the same weights: outputs and the
gradients of the inputs and of every parameter, on a graph with duplicate edges, self-loops and
nodes without in-edges, on a bipartite block (x_src, x_dst, size) as the samplers hand them out,
and on a batch of small graphs with their readout. The layers are drop-in replacements, so they
must agree with what a PyG user runs, not only with a reference of our own (test_layers.py).

Skipped where torch_geometric is not installed (scripts/install-deps.sh puts it into
build/python-deps, which ctest adds to PYTHONPATH); runs on the CPU in float64 and, where CUDA is
available, on the GPU in float32 (gsparse's dynamic graphs, built on the device)."""

import pytest
import torch

import gsparse

pyg_nn = pytest.importorskip("torch_geometric.nn", reason="torch_geometric is not installed")

N, F_IN, F_OUT = 40, 8, 5
NUM_SRC, NUM_DST = 50, 20

DEVICES = [pytest.param("cpu", id="cpu"),
           pytest.param("cuda", id="cuda", marks=[pytest.mark.cuda,
                                                   pytest.mark.skipif(not torch.cuda.is_available(),
                                                                      reason="no CUDA device")])]


def _dtype(device):
    return torch.float64 if device == "cpu" else torch.float32


def _tolerance(device):
    return {} if device == "cpu" else {"rtol": 2e-4, "atol": 2e-5}


def features(rows, seed, device):
    """Random node features [rows, F_IN] in the device's dtype, the same on every run."""
    return torch.randn(rows, F_IN, generator=torch.Generator().manual_seed(seed), dtype=_dtype(device)).to(device)


def square_graph():
    """[2, E] int64: random edges, some twice, self-loops (one node's several times), and nodes
    5 and 7 without in-edges."""
    gen = torch.Generator().manual_seed(0)
    ei = torch.randint(0, N, (2, 6 * N), generator=gen)
    ei = torch.cat([ei, ei[:, :20], torch.tensor([[3, 3, 3, 9], [3, 3, 3, 9]])], dim=1)
    keep = (ei[1] != 5) & (ei[1] != 7)
    return ei[:, keep]


def block_graph():
    """A sampled block's edges: NUM_SRC sources, the first NUM_DST of them the destinations, every
    destination with a loop to itself as source (as samplers relabel), one destination without
    other in-edges, duplicates."""
    gen = torch.Generator().manual_seed(1)
    dst = torch.randint(0, NUM_DST, (5 * NUM_DST,), generator=gen)
    src = torch.randint(0, NUM_SRC, (dst.numel(),), generator=gen)
    keep = dst != 4
    loops = torch.arange(NUM_DST)
    ei = torch.stack([torch.cat([src[keep], loops, src[:6]]), torch.cat([dst[keep], loops, dst[:6]])])
    return ei[:, torch.argsort(ei[1], stable=True)]  # sorted by destination, as samplers give them


def molecule_batch():
    """Eight small graphs (both edge directions), block-diagonal, with the batch vector."""
    gen = torch.Generator().manual_seed(2)
    sizes = [7, 3, 12, 1, 9, 5, 15, 4]
    parts, offset = [], 0
    for n in sizes:
        m = max(1, n)
        s = torch.randint(0, n, (m,), generator=gen)
        d = torch.randint(0, n, (m,), generator=gen)
        parts.append(torch.stack([torch.cat([s, d]), torch.cat([d, s])]) + offset)
        offset += n
    batch = torch.repeat_interleave(torch.arange(len(sizes)), torch.tensor(sizes))
    return torch.cat(parts, dim=1), batch, offset, len(sizes)


def twin(make, device):
    """(gsparse layer, PyG layer) with PyG's initial weights copied into gsparse's (same names)."""
    torch.manual_seed(0)
    ref = make(pyg_nn).to(device, _dtype(device))
    ours = make(gsparse.nn).to(device, _dtype(device))
    theirs = ref.state_dict()
    assert set(ours.state_dict()) == set(theirs), (sorted(ours.state_dict()), sorted(theirs))
    ours.load_state_dict(theirs)
    # Non-zero attention vectors and bias, so that their gradients and effects are compared.
    with torch.no_grad():
        for p in ours.parameters():
            p.uniform_(-0.5, 0.5, generator=None)
    ref.load_state_dict(ours.state_dict())
    return ours, ref


def check(ours, ref, run, inputs, device):
    """run(layer, *inputs) on both layers; outputs, input gradients and parameter gradients agree."""
    tol = _tolerance(device)
    a = [t.detach().clone().requires_grad_(t.is_floating_point()) for t in inputs]
    b = [t.detach().clone().requires_grad_(t.is_floating_point()) for t in inputs]
    out_a, out_b = run(ours, *a), run(ref, *b)
    torch.testing.assert_close(out_a, out_b, **tol)
    w = torch.randn(out_a.shape, generator=torch.Generator().manual_seed(3), dtype=out_a.dtype).to(device)
    (out_a * w).sum().backward()
    (out_b * w).sum().backward()
    for ta, tb in zip(a, b):
        if ta.requires_grad:
            torch.testing.assert_close(ta.grad, tb.grad, **tol)
    named_b = dict(ref.named_parameters())
    for name, p in ours.named_parameters():
        q = named_b[name]
        assert (p.grad is None) == (q.grad is None), name
        if p.grad is not None:
            torch.testing.assert_close(p.grad, q.grad, **tol, msg=lambda m: f"{name}: {m}")


SQUARE_LAYERS = {
    "gcn": lambda L: L.GCNConv(F_IN, F_OUT),
    "sage-mean": lambda L: L.SAGEConv(F_IN, F_OUT),
    "sage-sum": lambda L: L.SAGEConv(F_IN, F_OUT, aggr="sum"),
    "sage-max": lambda L: L.SAGEConv(F_IN, F_OUT, aggr="max"),
    "sage-wide": lambda L: L.SAGEConv(F_IN, 3 * F_IN),
    "gat": lambda L: L.GATConv(F_IN, 3, heads=2),
    "gat-mean-heads": lambda L: L.GATConv(F_IN, 3, heads=2, concat=False),
    "gin": lambda L: L.GINConv(torch.nn.Sequential(torch.nn.Linear(F_IN, 6), torch.nn.ReLU(),
                                                   torch.nn.Linear(6, F_OUT)), eps=0.1),
    "gin-train-eps": lambda L: L.GINConv(torch.nn.Linear(F_IN, F_OUT), eps=0.1, train_eps=True),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", sorted(SQUARE_LAYERS))
def test_layers_match_pyg_on_a_graph(kind, device):
    ei = square_graph().to(device)
    x = features(N, 4, device)
    ours, ref = twin(SQUARE_LAYERS[kind], device)
    check(ours, ref, lambda layer, xx: layer(xx, ei), [x], device)
    # A gsparse.Graph built once gives the same as the edge_index (the layer's own build).
    g = gsparse.Graph(ei, num_nodes=N)
    check(ours, ref, lambda layer, xx: layer(xx, g if layer is ours else ei), [x], device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("improved", [False, True])
def test_gcn_with_edge_weights_matches_pyg(improved, device):
    # Weighted edges (an existing self-loop keeps its weight, as add_remaining_self_loops does).
    # improved is compared with weights only: PyG 2.8's gcn_norm drops its fill value of 2 when no
    # edge_weight is given (its loops then weigh 1), where gsparse keeps A + 2I as documented. Each
    # node has at most one loop here: of several, both keep the last one's weight, but PyG's
    # index_put backward also hands the gradient to the loops it overwrote (gsparse gives them 0).
    ei = square_graph()
    loop = ei[0] == ei[1]
    ei = torch.cat([ei[:, ~loop], torch.tensor([[3, 9, 11], [3, 9, 11]])], dim=1).to(device)
    x = features(N, 7, device)
    w = (torch.rand(ei.shape[1], generator=torch.Generator().manual_seed(8), dtype=_dtype(device)) + 0.5).to(device)
    ours, ref = twin(lambda L: L.GCNConv(F_IN, F_OUT, improved=improved), device)
    check(ours, ref, lambda layer, xx, ww: layer(xx, ei, ww), [x, w], device)


BLOCK_LAYERS = {
    "sage-mean": lambda L: L.SAGEConv(F_IN, F_OUT),
    "sage-max": lambda L: L.SAGEConv(F_IN, F_OUT, aggr="max"),
    "gat": lambda L: L.GATConv(F_IN, 3, heads=2),
    "gin": lambda L: L.GINConv(torch.nn.Linear(F_IN, F_OUT), eps=0.3),
    "gin-train-eps": lambda L: L.GINConv(torch.nn.Linear(F_IN, F_OUT), train_eps=True),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", sorted(BLOCK_LAYERS))
def test_layers_match_pyg_on_a_sampled_block(kind, device):
    # The drop-in call of the mini-batch benchmarks: conv((x, x[:num_dst]), edge_index, size=...).
    ei = block_graph().to(device)
    x = features(NUM_SRC, 5, device)
    ours, ref = twin(BLOCK_LAYERS[kind], device)
    size = (NUM_SRC, NUM_DST)
    check(ours, ref, lambda layer, xx: layer((xx, xx[:NUM_DST]), ei, size=size), [x], device)


POOLS = ("global_add_pool", "global_mean_pool", "global_max_pool")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", ["gin", "gcn"])
@pytest.mark.parametrize("pool", POOLS)
def test_layers_and_readout_match_pyg_on_a_batch_of_small_graphs(kind, pool, device):
    ei, batch, n, graphs = molecule_batch()
    ei, batch = ei.to(device), batch.to(device)
    x = features(n, 6, device)
    make = (lambda L: L.GINConv(torch.nn.Linear(F_IN, F_OUT))) if kind == "gin" else \
        (lambda L: L.GCNConv(F_IN, F_OUT))
    ours, ref = twin(make, device)
    pools = {id(ours): getattr(gsparse.nn, pool), id(ref): getattr(pyg_nn, pool)}
    check(ours, ref, lambda layer, xx: pools[id(layer)](torch.relu(layer(xx, ei)), batch, graphs), [x], device)
