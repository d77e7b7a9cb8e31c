"""gsparse.capture: fixed-capacity buffers for sampled blocks and batches of small graphs (their
padded graphs give the real rows exactly, on gsparse graphs and as edge lists; batches too large
for the buffers are refused), and on CUDA training steps captured as CUDA graphs (the replayed
step's loss and updated weights against the eager step on the unpadded inputs; a step whose
optimizer lives only in its closure still replays after the memory cache is emptied)."""

import copy
import gc

import pytest
import torch
import torch.nn.functional as F

import gsparse
from gsparse.capture import BatchBuffers, BlockBuffers, CapturedStep
from gsparse.sampling import NeighborSampler


def _sampler(device, fanouts=(5, 3), n=3000, seed=0):
    gen = torch.Generator().manual_seed(seed)
    ei = torch.randint(0, n, (2, 40000), generator=gen)
    ei[1, :400] = 7  # a hub: its sampled rows reach the fan-out
    g = gsparse.Graph(ei, num_nodes=n)
    row_ptr, col_idx, _ = g.csr(device)
    return NeighborSampler((row_ptr, col_idx), list(fanouts), seed=seed, device=device), n


def _molecules(gen, graphs=20, device="cpu"):
    sizes = torch.randint(3, 12, (graphs,), generator=gen)
    parts, offset = [], 0
    for s in sizes.tolist():
        m = torch.randint(0, s, (2, 2 * s), generator=gen) + offset
        parts.append(m)
        offset += s
    ei = torch.cat(parts, dim=1)
    batch = torch.repeat_interleave(torch.arange(graphs), sizes)
    return ei.to(device), batch.to(device), int(sizes.sum())


@pytest.mark.parametrize("reduce,shape", [("mean", "two"), ("sum", "two"), ("max", "two"), ("mean", "small"),
                                          ("max", "small"), ("sum", "three")])
def test_block_buffers_give_the_real_rows(reduce, shape):
    if shape == "small":  # a graph of fewer nodes than D (1 + f): the sources bounded by its node count
        sampler, n = _sampler("cpu", n=700)
        buffers = BlockBuffers(64, [5, 3], "cpu", num_features=7, num_nodes=n)
        assert buffers.sizes == [(701, 261), (261, 65)]
    elif shape == "three":  # three layers: every block's capacity from the one after it
        sampler, n = _sampler("cpu", fanouts=(4, 3, 2))
        buffers = BlockBuffers(64, [4, 3, 2], "cpu", num_features=7, num_nodes=n)
        assert buffers.sizes == [(min(785 * 5, n) + 1, 785), (196 * 4 + 1, 196), (65 * 3 + 1, 65)]
    else:
        sampler, n = _sampler("cpu")
        buffers = BlockBuffers(64, [5, 3], "cpu", num_features=7)
        assert buffers.sizes == [(261 * 6 + 1, 261), (65 * 4 + 1, 65)]  # D (1 + f) + 1 sources
    feats = torch.randn(n, 7)
    for step in range(3):
        batch = sampler.sample(torch.randperm(n, generator=torch.Generator().manual_seed(step))[:64])
        x = feats[batch.input_nodes]
        buffers.load(batch, x, torch.arange(64), edge_index=True)
        assert torch.equal(buffers.y, torch.arange(64))
        for block, row_ptr, (S, D) in zip(batch.blocks, buffers.row_ptr, buffers.sizes):
            lengths = (row_ptr[1:] - row_ptr[:-1])[block.num_dst:]  # the padding rows share the padding edges
            cap = int(row_ptr[-1])
            assert int(lengths.min()) >= 0 and int(lengths.sum()) == cap - block.num_edges
            assert int(lengths.max()) <= -(-(cap - block.num_edges) // (D - block.num_dst))
        h, hp = x, buffers.x
        for block, (graph, (S, D)), (ei, size) in zip(batch.blocks, buffers.adjs(), buffers.edge_indices()):
            assert (graph.num_src, graph.num_dst) == (S, D) == size
            assert block.num_src < S and block.num_dst < D
            want = gsparse.gspmm(block, "copy_lhs", reduce, h)
            got = gsparse.gspmm(graph, "copy_lhs", reduce, hp)
            torch.testing.assert_close(got[: block.num_dst], want, rtol=1e-5, atol=1e-5)
            # The edge lists: the same real rows through a plain scatter.
            real_ei = block.edge_index("cpu")
            ref = torch.zeros(block.num_dst, 7).index_add_(0, real_ei[1], h[real_ei[0]])
            agg = torch.zeros(D, 7).index_add_(0, ei[1], hp[ei[0]])
            torch.testing.assert_close(agg[: block.num_dst], ref, rtol=1e-5, atol=1e-5)
            assert int(ei[0].max()) < S and int(ei[1].max()) < D
            h, hp = want, got


def test_block_buffers_refuse_other_batches():
    sampler, n = _sampler("cpu")
    batch = sampler.sample(torch.arange(64))
    with pytest.raises(gsparse.ShapeError, match="seeds"):
        BlockBuffers(32, [5, 3], "cpu").load(batch)
    with pytest.raises(gsparse.ShapeError, match="exceeds the buffers' capacity"):
        BlockBuffers(64, [2, 3], "cpu").load(batch)
    with pytest.raises(gsparse.ShapeError, match="blocks"):
        BlockBuffers(64, [5], "cpu").load(batch)
    with pytest.raises(gsparse.ShapeError, match="no edge lists"):
        BlockBuffers(64, [5, 3], "cpu").edge_indices()
    with pytest.raises(gsparse.ShapeError, match="fan-outs"):
        BlockBuffers(64, [0], "cpu")
    with pytest.raises(gsparse.ShapeError, match="num_nodes"):
        BlockBuffers(64, [5, 3], "cpu", num_nodes=10)
    buffers = BlockBuffers(64, [5, 3], "cpu", num_features=4)
    x = torch.zeros(batch.blocks[0].num_src, 4)
    with pytest.raises(gsparse.ShapeError, match="input nodes' rows"):
        buffers.load(batch, x[1:])
    with pytest.raises(gsparse.ShapeError, match="features"):
        buffers.load(batch, torch.zeros(batch.blocks[0].num_src, 5))
    with pytest.raises(gsparse.ShapeError, match="labels"):
        buffers.load(batch, x, torch.zeros(63, dtype=torch.long))


def test_batch_buffers_give_the_real_graphs():
    gen = torch.Generator().manual_seed(1)
    buffers = BatchBuffers(20, 20 * 11, 2 * 11 * 20, "cpu", num_features=6)
    for _ in range(3):
        ei, batch, n = _molecules(gen)
        x = torch.randn(n, 6, generator=gen)
        y = torch.randint(0, 3, (20,), generator=gen)
        buffers.load(ei, batch, n, x, y)
        g = buffers.graph()
        assert g.num_src == buffers.num_nodes and int(buffers.edge_index.max()) < buffers.num_nodes
        padding = buffers.edge_index[:, ei.shape[1]:]
        assert torch.equal(padding[0], padding[1]) and bool((padding[0] >= n).all())
        want = gsparse.gspmm(gsparse.Graph(ei, num_nodes=n, dynamic=True), "copy_lhs", "sum", x)
        got = gsparse.gspmm(g, "copy_lhs", "sum", buffers.x)
        torch.testing.assert_close(got[:n], want, rtol=1e-5, atol=1e-5)
        # Padding graphs of at most 32 nodes, sorted ids past the real graphs', none empty of ids.
        counts = torch.bincount(buffers.batch, minlength=buffers.num_graphs)
        assert counts.numel() == buffers.num_graphs and int(counts[20:].max()) <= 32
        assert torch.equal(buffers.batch[:n], batch) and bool((buffers.batch.diff() >= 0).all())
        pooled = gsparse.nn.global_mean_pool(got, buffers.batch, buffers.num_graphs)
        torch.testing.assert_close(pooled[:20], gsparse.nn.global_mean_pool(want, batch, 20), rtol=1e-5, atol=1e-5)
        assert torch.equal(buffers.y, y)
    ei, batch, n = _molecules(gen, graphs=40)
    with pytest.raises(gsparse.ShapeError, match="exceeds the buffers' capacity"):
        buffers.load(ei, batch, n)
    with pytest.raises(gsparse.ShapeError, match="entries for"):
        buffers.load(ei[:, :5], batch[:3], 10)
    ei, batch, n = _molecules(gen)
    with pytest.raises(gsparse.ShapeError, match="features"):
        buffers.load(ei, batch, n, torch.zeros(n, 7))


def test_captured_step_needs_cuda_or_runs():
    if torch.cuda.is_available():
        pytest.skip("covered by the CUDA tests below")
    with pytest.raises(gsparse.ShapeError, match="CUDA"):
        CapturedStep(lambda: None)


cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


class _Sage(torch.nn.Module):
    def __init__(self, c_in, hidden, classes):
        super().__init__()
        self.convs = torch.nn.ModuleList([gsparse.nn.SAGEConv(c_in, hidden), gsparse.nn.SAGEConv(hidden, classes)])

    def forward(self, x, adjs):
        for i, (adj, size) in enumerate(adjs):
            x = self.convs[i]((x, x[: size[1]]), adj, size=size)
            if i == 0:
                x = F.relu(x)
        return x


def _replays_match_eager_steps(captured, buffers, model, eager_model, feats, labels, sequence, warmup):
    """An eager copy of the model trains on `sequence`; from step `warmup` on (the captured step's
    warm-up trained the steps before), each replay on the same batch gives the eager step's loss,
    and the weights end equal."""
    eager_opt = torch.optim.Adam(eager_model.parameters(), lr=0.01, capturable=True)
    for i, b in enumerate(sequence):
        adjs = [(blk, (blk.num_src, blk.num_dst)) for blk in b.blocks]
        eager_opt.zero_grad(set_to_none=True)
        want = F.cross_entropy(eager_model(feats[b.input_nodes], adjs), labels[b.seeds])
        want.backward()
        eager_opt.step()
        if i >= warmup:
            buffers.load(b, feats[b.input_nodes], labels[b.seeds])
            torch.testing.assert_close(captured(), want.detach(), rtol=1e-4, atol=1e-5)
    torch.cuda.synchronize()
    for p, q in zip(model.parameters(), eager_model.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-3, atol=1e-4)


@cuda
@pytest.mark.cuda
def test_captured_block_step_matches_the_eager_step():
    sampler, n = _sampler("cuda")
    feats = torch.randn(n, 16, device="cuda")
    labels = torch.randint(0, 4, (n,), device="cuda")
    buffers = BlockBuffers(64, [5, 3], "cuda", num_features=16)
    torch.manual_seed(0)
    model = _Sage(16, 32, 4).cuda()
    eager_model = copy.deepcopy(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, capturable=True)

    def step():
        opt.zero_grad(set_to_none=True)
        out = model(buffers.x, buffers.adjs())
        loss = F.cross_entropy(out[: buffers.batch_size], buffers.y)
        loss.backward()
        opt.step()
        return loss

    batches = [sampler.sample(torch.randperm(n, device="cuda")[:64]) for _ in range(5)]
    buffers.load(batches[0], feats[batches[0].input_nodes], labels[batches[0].seeds])
    captured = CapturedStep(step, warmup=2)
    # The eager model takes the same steps: two warm-up steps on batch 0, then batches 1..4.
    _replays_match_eager_steps(captured, buffers, model, eager_model, feats, labels,
                               [batches[0], batches[0]] + batches[1:], warmup=2)


@cuda
@pytest.mark.cuda
def test_captured_step_keeps_what_it_reads_alive():
    # The optimizer (and its state, made in the warm-up) lives only in the step's closure; the
    # caller keeps the CapturedStep alone. Emptying PyTorch's cache (as every later capture does)
    # must not unmap anything the replay reads.
    sampler, n = _sampler("cuda", seed=3)
    feats = torch.randn(n, 16, device="cuda")
    labels = torch.randint(0, 4, (n,), device="cuda")
    buffers = BlockBuffers(32, [5, 3], "cuda", num_features=16)
    torch.manual_seed(1)
    model = _Sage(16, 32, 4).cuda()
    eager_model = copy.deepcopy(model)
    batches = [sampler.sample(torch.randperm(n, device="cuda")[:32]) for _ in range(4)]

    def captured_training():
        opt = torch.optim.Adam(model.parameters(), lr=0.01, capturable=True)

        def step():
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(buffers.x, buffers.adjs())[: buffers.batch_size], buffers.y)
            loss.backward()
            opt.step()
            return loss
        return CapturedStep(step, warmup=1)

    buffers.load(batches[0], feats[batches[0].input_nodes], labels[batches[0].seeds])
    captured = captured_training()
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    with torch.cuda.graph(torch.cuda.CUDAGraph()):  # a later capture
        pass
    _replays_match_eager_steps(captured, buffers, model, eager_model, feats, labels, batches, warmup=1)


@cuda
@pytest.mark.cuda
@pytest.mark.parametrize("kind", ["gin", "gcn"])
def test_captured_batch_step_matches_the_eager_step(kind):
    gen = torch.Generator().manual_seed(2)
    buffers = BatchBuffers(20, 20 * 11, 2 * 11 * 20, "cuda", num_features=6)
    torch.manual_seed(0)
    conv = (gsparse.nn.GINConv(torch.nn.Linear(6, 8)) if kind == "gin" else gsparse.nn.GCNConv(6, 8)).cuda()
    head = torch.nn.Linear(8, 3).cuda()
    params = list(conv.parameters()) + list(head.parameters())
    eager_conv, eager_head = copy.deepcopy(conv), copy.deepcopy(head)
    opt = torch.optim.Adam(params, lr=0.01, capturable=True)
    eager_opt = torch.optim.Adam(list(eager_conv.parameters()) + list(eager_head.parameters()), lr=0.01,
                                 capturable=True)

    def forward(c, h, x, g, batch, size):
        return h(gsparse.nn.global_mean_pool(F.relu(c(x, g)), batch, size))

    def step():
        opt.zero_grad(set_to_none=True)
        out = forward(conv, head, buffers.x, buffers.graph(), buffers.batch, buffers.num_graphs)
        loss = F.cross_entropy(out[: buffers.max_graphs], buffers.y)
        loss.backward()
        opt.step()
        return loss

    data = []
    for _ in range(4):
        ei, batch, n = _molecules(gen, device="cuda")
        data.append((ei, batch, n, torch.randn(n, 6, device="cuda"), torch.randint(0, 3, (20,), device="cuda")))
    buffers.load(*data[0])
    captured = CapturedStep(step, warmup=1)
    for i, (ei, batch, n, x, y) in enumerate([data[0]] + data[1:]):
        eager_opt.zero_grad(set_to_none=True)
        want = F.cross_entropy(forward(eager_conv, eager_head, x, gsparse.Graph(ei, num_nodes=n), batch, 20), y)
        want.backward()
        eager_opt.step()
        if i >= 1:
            buffers.load(ei, batch, n, x, y)
            torch.testing.assert_close(captured(), want.detach(), rtol=1e-4, atol=1e-5)
