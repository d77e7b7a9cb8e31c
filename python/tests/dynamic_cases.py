"""Shared checks of dynamic graphs (built from tensors on their device) against static graphs and
plain references, run on the CPU (test_dynamic.py, in CI) and on CUDA (test_dynamic_cuda.py)."""

import itertools

import pytest
import torch
import torch.nn.functional as F

import gsparse
from gsparse.sampling import NeighborSampler

SPMM_CASES = [("copy_lhs", "sum"), ("copy_lhs", "mean"), ("mul", "sum"), ("copy_lhs", "max"), ("add", "min"),
              ("copy_rhs", "sum"), ("div", "mean")]


def random_edges(n_src=120, n_dst=90, e=1500, seed=0):
    """Random edges with empty rows (destinations >= 80 get none), one long row, duplicate edges
    and self-loops."""
    gen = torch.Generator().manual_seed(seed)
    src = torch.randint(0, n_src, (e,), generator=gen)
    dst = torch.randint(0, min(n_dst, 80), (e,), generator=gen)
    dst[:300] = 3                      # a long row
    src[300:320] = 5                   # duplicates 5 -> 3 ... and 5 -> dst
    dst[300:320] = 3
    src[320:340] = dst[320:340]        # self-loops
    return torch.stack([src, dst])


def check_spmm(device, feats=None):
    # On the CPU F = 1 and an odd F above a warp (the CPU's kernels are tested at every shape in C++);
    # on CUDA also the vector widths of F = 5 and 64.
    feats = feats or ((1, 5, 33, 64) if device != "cpu" else (1, 33))
    ei = random_edges()
    static = gsparse.Graph(ei, num_src=120, num_dst=90)
    dyn = gsparse.Graph(ei.to(device), num_src=120, num_dst=90, dynamic=True)
    assert dyn.is_dynamic and not static.is_dynamic
    for f in feats:
        for op, reduce in SPMM_CASES:
            x = torch.rand(120, f, dtype=torch.float32) + 0.5
            w = torch.rand(ei.shape[1], 1 if op in ("mul", "div") else f) + 0.5
            ref = gsparse.gspmm(static, op, reduce, x, w)
            out = gsparse.gspmm(dyn, op, reduce, x.to(device), w.to(device))
            assert out.shape == ref.shape
            torch.testing.assert_close(out.cpu(), ref, rtol=1e-5, atol=1e-5), (f, op, reduce)
            assert torch.all(out[80:].cpu() == 0), "empty rows give 0"


def check_sorted_edges(device):
    """Edges already sorted by destination take the no-sort path (ids stay CSR positions) when the
    CSR is made at once."""
    ei = random_edges()
    ei = ei[:, torch.sort(ei[1], stable=True).indices]
    static = gsparse.Graph(ei, num_src=120, num_dst=90)
    dyn = gsparse.Graph(ei.to(device), num_src=120, num_dst=90, dynamic=True, csr="now")
    assert dyn._t.edge_ids is None
    x, w = torch.rand(120, 6), torch.rand(ei.shape[1], 6)
    for op, reduce in SPMM_CASES:
        # (The long row's sums differ in the last bits between the CPU's and the GPU's order.)
        torch.testing.assert_close(gsparse.gspmm(dyn, op, reduce, x.to(device), w.to(device)).cpu(),
                                   gsparse.gspmm(static, op, reduce, x, w), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(gsparse.gsddmm(dyn, "dot", x.to(device), x[:90].to(device), "u", "v").cpu(),
                               gsparse.gsddmm(static, "dot", x, x[:90], "u", "v"))
    y = torch.rand(90, 3)
    torch.testing.assert_close(gsparse.gspmm(dyn.reverse(), "copy_lhs", "sum", y.to(device)).cpu(),
                               gsparse.gspmm(static.reverse(), "copy_lhs", "sum", y))


def check_sddmm(device, feats=(1, 7, 32, 128)):
    ei = random_edges()
    static = gsparse.Graph(ei, num_src=120, num_dst=90)
    dyn = gsparse.Graph(ei.to(device), num_src=120, num_dst=90, dynamic=True)
    for f in feats:
        a, b = torch.rand(120, f), torch.rand(90, f)
        for op in ("dot", "add", "mul", "sub"):
            ref = gsparse.gsddmm(static, op, a, b, "u", "v")
            out = gsparse.gsddmm(dyn, op, a.to(device), b.to(device), "u", "v")
            torch.testing.assert_close(out.cpu(), ref, rtol=1e-5, atol=1e-5)


def check_gradients(device):
    ei = random_edges()
    static = gsparse.Graph(ei, num_src=120, num_dst=90)
    dyn = gsparse.Graph(ei.to(device), num_src=120, num_dst=90, dynamic=True)
    x = torch.rand(120, 16)
    w = torch.rand(ei.shape[1], 1)
    grads = []
    for g, dev in ((static, "cpu"), (dyn, device)):
        xv = x.detach().clone().to(dev).requires_grad_()
        wv = w.detach().clone().to(dev).requires_grad_()
        out = gsparse.gspmm(g, "mul", "mean", xv, wv)
        s = gsparse.edge_softmax(g, gsparse.gsddmm(g, "dot", xv, out, "u", "v"))
        (out.square().sum() + s.sum() * 0.5 + (s * wv).sum()).backward()
        grads.append((xv.grad.cpu(), wv.grad.cpu()))
    for a, b in zip(*grads):
        torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-5)


def check_push_gradients(device):
    """Source-feature gradients of g-SpMM sum / mean on dynamic graphs (the transposed g-SpMM in
    push form, no reverse graph) against the static graph's (g-SpMM on its reverse graph), and
    against the dynamic graph's own reverse-graph path (torch's deterministic mode)."""
    ei = random_edges()
    static = gsparse.Graph(ei, num_src=120, num_dst=90)
    dyn = gsparse.Graph(ei.to(device), num_src=120, num_dst=90, dynamic=True)
    E = ei.shape[1]
    cases = [("copy_lhs", "sum", (1,), None), ("copy_lhs", "mean", (7,), None), ("mul", "sum", (5,), (1,)),
             ("mul", "mean", (3, 5), (3, 1)), ("div", "mean", (4,), (4,)), ("add", "mean", (6,), (6,))]
    for op, reduce, lf, rf in cases:
        x = torch.rand((120,) + lf)
        w = torch.rand((E,) + rf) + 0.5 if rf else None
        results = []
        for g, dev, deterministic in ((static, "cpu", False), (dyn, device, False), (dyn, device, True)):
            xv = x.detach().clone().to(dev).requires_grad_()
            wv = w.detach().clone().to(dev).requires_grad_() if w is not None else None
            previous = torch.are_deterministic_algorithms_enabled()
            torch.use_deterministic_algorithms(deterministic)
            try:
                out = gsparse.gspmm(g, op, reduce, xv, wv)
                (out * torch.linspace(0.5, 1.5, out.numel(), device=dev).reshape(out.shape)).sum().backward()
            finally:
                torch.use_deterministic_algorithms(previous)
            results.append((xv.grad.cpu(), None if wv is None else wv.grad.cpu()))
        for other in results[1:]:
            torch.testing.assert_close(other[0], results[0][0], rtol=1e-4, atol=1e-5, msg=f"{op}/{reduce} lhs")
            if w is not None:
                torch.testing.assert_close(other[1], results[0][1], rtol=1e-4, atol=1e-5, msg=f"{op}/{reduce} rhs")
    # A graph without edges: zero gradients.
    empty = gsparse.Graph(torch.zeros(2, 0, dtype=torch.int64, device=device), num_src=5, num_dst=3, dynamic=True)
    xv = torch.rand(5, 4, device=device, requires_grad=True)
    gsparse.gspmm(empty, "copy_lhs", "mean", xv).sum().backward()
    assert torch.count_nonzero(xv.grad) == 0


def check_from_csr(device):
    ei = random_edges()
    static = gsparse.Graph(ei, num_src=120, num_dst=90)
    row_ptr, col_idx, edge_ids = static.csr()
    dyn = gsparse.Graph.from_csr(row_ptr.to(device), col_idx.to(device), num_src=120, edge_ids=edge_ids.to(device),
                                 dynamic=True)
    x = torch.rand(120, 9)
    w = torch.rand(ei.shape[1], 9)
    torch.testing.assert_close(gsparse.gspmm(dyn, "mul", "sum", x.to(device), w.to(device)).cpu(),
                               gsparse.gspmm(static, "mul", "sum", x, w))
    r_static, r_dyn = static.reverse(), dyn.reverse()
    y = torch.rand(90, 4)
    torch.testing.assert_close(gsparse.gspmm(r_dyn, "copy_lhs", "sum", y.to(device)).cpu(),
                               gsparse.gspmm(r_static, "copy_lhs", "sum", y))
    src_s, dst_s = static.coo()
    src_d, dst_d = dyn.coo()
    assert torch.equal(src_d.cpu(), src_s) and torch.equal(dst_d.cpu(), dst_s)


def sample_reference_check(batch, row_ptr, col_idx, fanouts, replace):
    """Degree and membership invariants of a sampled MiniBatch against the full CSR."""
    rp, ci = row_ptr.cpu().to(torch.int64), col_idx.cpu().to(torch.int64)
    nodes = batch.input_nodes.cpu()
    assert torch.unique(nodes).numel() == nodes.numel(), "input nodes are distinct"
    for b, fanout, eids in zip(batch.blocks, fanouts, batch.edge_ids):
        src_ids = nodes[: b.num_src]
        dst_ids = nodes[: b.num_dst]  # destinations are the first sources
        brp, bci, _ = (t.cpu().to(torch.int64) for t in b.csr())
        eids = eids.cpu()
        for v in range(b.num_dst):
            gv = int(dst_ids[v])
            deg = int(rp[gv + 1] - rp[gv])
            got = int(brp[v + 1] - brp[v])
            want = (fanout if deg > 0 else 0) if replace else min(deg, fanout)
            assert got == want, (v, deg, got, want)
            picked = eids[brp[v]:brp[v + 1]]
            assert torch.all((picked >= rp[gv]) & (picked < rp[gv + 1])), "edges of the node"
            if not replace:
                assert torch.unique(picked).numel() == picked.numel(), "no edge twice without replacement"
            assert torch.equal(src_ids[bci[brp[v]:brp[v + 1]]], ci[picked]), "sources are the edges' sources"
        nodes = nodes  # the next block's sources are this block's destinations (a prefix)
    assert torch.equal(batch.seeds.cpu(), nodes[: batch.blocks[-1].num_dst])


def check_sampler(device):
    gen = torch.Generator().manual_seed(3)
    n = 400
    ei = torch.randint(0, n, (2, 6000), generator=gen)
    ei[1, :100] = 11  # a high in-degree node
    g = gsparse.Graph(ei, num_nodes=n)
    row_ptr, col_idx, _ = g.csr()
    seeds = torch.tensor([11, 0, 5, 399, 17, 250])
    for replace in (False, True):
        s1 = NeighborSampler(g, [6, 4], replace=replace, seed=7, device=device)
        b1 = s1.sample(seeds.to(device))
        sample_reference_check(b1, row_ptr, col_idx, [6, 4], replace)
        b2 = NeighborSampler(g, [6, 4], replace=replace, seed=7, device=device).sample(seeds.to(device))
        for x, y in zip(b1.edge_ids, b2.edge_ids):
            assert torch.equal(x, y), "deterministic under a seed"
        x = torch.rand(b1.input_nodes.numel(), 8, device=device)
        conv = gsparse.nn.SAGEConv(8, 3).to(device)
        h = conv((x, x[: b1.blocks[0].num_dst]), b1.blocks[0])
        assert h.shape == (b1.blocks[0].num_dst, 3)


def check_sampler_relabel_paths(device):
    """The two relabelings (a node table, a sort) give the same blocks: destinations first, then the
    other sources in ascending id order."""
    from gsparse import sampling
    gen = torch.Generator().manual_seed(5)
    n = 300
    g = gsparse.Graph(torch.randint(0, n, (2, 3000), generator=gen), num_nodes=n)
    seeds = torch.tensor([7, 3, 250, 11])
    saved = sampling.MARK_NODES_PER_ENTRY
    batches = []
    try:
        for per_entry in (saved, 0):  # 0: always the sort
            sampling.MARK_NODES_PER_ENTRY = per_entry
            batches.append(NeighborSampler(g, [5, 3], seed=2, device=device).sample(seeds.to(device)))
    finally:
        sampling.MARK_NODES_PER_ENTRY = saved
    a, b = batches
    assert torch.equal(a.input_nodes, b.input_nodes)
    for x, y in zip(a.blocks, b.blocks):
        assert all(torch.equal(p, q) for p, q in zip(x.csr(), y.csr()))
    nodes = a.input_nodes.cpu()
    for blk in a.blocks:
        rest = nodes[blk.num_dst: blk.num_src]
        assert torch.all(rest[1:] > rest[:-1]), "new sources in ascending id order"
    assert torch.equal(nodes[: seeds.numel()], seeds)


def check_uniformity(device):
    """Without replacement every in-edge of a node is equally likely (chi-square-like bound)."""
    deg, fanout, trials = 12, 4, 3000
    src = torch.arange(deg)
    dst = torch.zeros(deg, dtype=torch.int64)
    g = gsparse.Graph(torch.stack([src, dst]), num_src=deg, num_dst=1)
    s = NeighborSampler(g, [fanout], seed=1, device=device)
    counts = torch.zeros(deg)
    for _ in range(trials):
        e = s.sample(torch.tensor([0])).edge_ids[0].cpu()
        counts[e] += 1
    expected = trials * fanout / deg
    assert torch.all((counts - expected).abs() < 0.15 * expected), counts


def _with_floyd(check, device):
    """check with the random-keys path of the sampler turned off (every layer by Floyd's algorithm)."""
    from gsparse import sampling
    saved = sampling.KEY_CANDIDATES_PER_PICK
    sampling.KEY_CANDIDATES_PER_PICK = 0
    try:
        check(device)
    finally:
        sampling.KEY_CANDIDATES_PER_PICK = saved


def check_sampler_floyd(device):
    _with_floyd(check_sampler, device)


def check_uniformity_floyd(device):
    _with_floyd(check_uniformity, device)


def check_batch_and_pool(device):
    eis = [torch.tensor([[0, 1, 2], [1, 2, 0]]), torch.tensor([[0], [1]]), torch.zeros((2, 0), dtype=torch.int64)]
    g, batch = gsparse.batch_graphs([e.to(device) for e in eis], [3, 2, 1])
    assert g.num_nodes == 6 and g.num_edges == 4
    src, dst = g.coo()
    assert src.cpu().tolist() == [0, 1, 2, 3] and dst.cpu().tolist() == [1, 2, 0, 4]
    assert batch.cpu().tolist() == [0, 0, 0, 1, 1, 2]
    x = torch.arange(12.0, device=device).view(6, 2).requires_grad_()
    mean = gsparse.nn.global_mean_pool(x, batch, 3)
    torch.testing.assert_close(mean.cpu(), torch.tensor([[2.0, 3.0], [7.0, 8.0], [10.0, 11.0]]))
    total = gsparse.nn.global_add_pool(x, batch, 3)
    total.sum().backward()
    assert torch.all(x.grad == 1)
    try:
        gsparse.batch_graphs([torch.tensor([[0], [3]], device=device)], [2])
    except gsparse.GraphError as e:
        assert "outside its graph" in str(e)
    else:
        raise AssertionError("an out-of-range local id must be rejected")


def check_layers(device):
    """The layers on a dynamic graph (its CSR made on first use, or at once) match the same layers on
    the static graph."""
    gen = torch.Generator().manual_seed(5)
    n = 60
    ei = torch.randint(0, n, (2, 400), generator=gen)
    ei = torch.cat([ei, torch.tensor([[3, 3, 3, 7], [3, 3, 3, 7]])], dim=1)  # repeated self-loops
    static = gsparse.Graph(ei, num_nodes=n)
    x = torch.rand(n, 12, generator=gen)
    makers = (lambda: gsparse.nn.GCNConv(12, 8), lambda: gsparse.nn.GCNConv(12, 8, improved=True),
              lambda: gsparse.nn.GCNConv(12, 8, normalize=False), lambda: gsparse.nn.SAGEConv(12, 8),
              lambda: gsparse.nn.GATConv(12, 4, heads=2),
              lambda: gsparse.nn.GINConv(torch.nn.Linear(12, 8), train_eps=True))
    for make, csr in itertools.product(makers, ("lazy", "now")):
        dyn = gsparse.Graph(ei.to(device), num_nodes=n, dynamic=True, csr=csr)
        torch.manual_seed(0)
        a = make()
        b = make().to(device)
        b.load_state_dict(a.state_dict())
        xa = x.detach().clone().requires_grad_()
        xb = x.detach().clone().to(device).requires_grad_()
        ya, yb = a(xa, static), b(xb, dyn)
        torch.testing.assert_close(yb.cpu(), ya, rtol=1e-4, atol=1e-5)
        ya.square().sum().backward()
        yb.square().sum().backward()
        torch.testing.assert_close(xb.grad.cpu(), xa.grad, rtol=1e-4, atol=1e-5)


def _loop_graph_reference(ei, num_src, num_dst):
    """The edges of ei without self-loops, then one loop u -> u per u < min(num_src, num_dst): the
    graph PyG's GATConv attends over, built in plain PyTorch."""
    keep = ei[0] != ei[1]
    loops = torch.arange(min(num_src, num_dst))
    return torch.cat([ei[:, keep], torch.stack([loops, loops])], dim=1)


def check_masked_self_loops(device):
    """GATConv on dynamic bipartite blocks (more and fewer sources than destinations, repeated
    self-loops, empty rows, unsorted and sorted edges) attends over the loops appended on the device
    with the graph's own loops masked: the same as the layer without add_self_loops on the explicit
    loop graph; and with_masked_self_loops itself leaves exactly that graph once masked edges go."""
    gen = torch.Generator().manual_seed(11)
    for num_src, num_dst, edges in ((70, 40, 300), (30, 50, 300), (45, 45, 300), (30, 20, 0), (20, 30, 0)):
        ei = torch.stack([torch.randint(0, num_src, (edges,), generator=gen),
                          torch.randint(0, max(1, num_dst - 8), (edges,), generator=gen)])  # last rows empty
        if edges:
            ei = torch.cat([ei, torch.tensor([[2, 2, 2, 9], [2, 2, 2, 9]])], dim=1)  # repeated self-loops
        for order in ("unsorted", "sorted"):
            if order == "sorted":
                ei = ei[:, torch.sort(ei[1], stable=True).indices]
            dyn = gsparse.Graph(ei.to(device), num_src=num_src, num_dst=num_dst, dynamic=True)
            g, dropped = dyn.with_masked_self_loops()
            src, dst = (t.cpu().to(torch.int64) for t in g.coo())
            kept = ~dropped.cpu()
            got = sorted(zip(src[kept].tolist(), dst[kept].tolist()))
            want = _loop_graph_reference(ei, num_src, num_dst)
            assert got == sorted(zip(want[0].tolist(), want[1].tolist())), (num_src, num_dst, order)
            ref_graph = gsparse.Graph(want, num_src=num_src, num_dst=num_dst)
            x_src = torch.rand(num_src, 12, generator=gen)
            x_dst = x_src[:num_dst] if num_dst <= num_src else torch.rand(num_dst, 12, generator=gen)
            for heads, concat in ((2, True), (1, False)):
                torch.manual_seed(0)
                a = gsparse.nn.GATConv(12, 4, heads=heads, concat=concat, add_self_loops=False)
                b = gsparse.nn.GATConv(12, 4, heads=heads, concat=concat).to(device)
                b.load_state_dict(a.state_dict())
                xa = x_src.detach().clone().requires_grad_()
                xb = x_src.detach().clone().to(device).requires_grad_()
                ya = a((xa, x_dst), ref_graph, size=(num_src, num_dst))
                yb = b((xb, x_dst.to(device)), dyn, size=(num_src, num_dst))
                torch.testing.assert_close(yb.cpu(), ya, rtol=1e-4, atol=1e-5)
                ya.square().sum().backward()
                yb.square().sum().backward()
                torch.testing.assert_close(xb.grad.cpu(), xa.grad, rtol=1e-4, atol=1e-5)
                for pa, pb in zip(a.parameters(), b.parameters()):
                    torch.testing.assert_close(pb.grad.cpu(), pa.grad, rtol=1e-4, atol=1e-5)


def check_sage_blocks(device):
    """SAGEConv on a dynamic bipartite block (aggregation first: one autograd node for the g-SpMM and
    both projections), with and without root weight and bias, mean and sum, against plain PyTorch:
    outputs and the gradients of x_src, x_dst and every parameter."""
    gen = torch.Generator().manual_seed(3)
    num_src, num_dst, feat = 90, 20, 4  # 4 -> 16 channels: aggregation first
    ei = torch.stack([torch.randint(0, num_src, (400,), generator=gen),
                      torch.randint(0, num_dst - 3, (400,), generator=gen)])  # the last rows are empty
    g = gsparse.Graph(ei.to(device), num_src=num_src, num_dst=num_dst, dynamic=True)
    for aggr, root_weight, bias in (("mean", True, True), ("sum", False, False), ("mean", True, False)):
        conv = gsparse.nn.SAGEConv(feat, 16, aggr=aggr, root_weight=root_weight, bias=bias).to(device)
        x_src = torch.rand(num_src, feat, generator=gen, dtype=torch.float32).to(device).requires_grad_()
        x_dst = torch.rand(num_dst, feat, generator=gen, dtype=torch.float32).to(device).requires_grad_()
        out = conv((x_src, x_dst), g, size=(num_src, num_dst))
        src, dst = ei[0].to(device), ei[1].to(device)
        agg = torch.zeros(num_dst, feat, dtype=torch.float32, device=device).index_add_(0, dst, x_src[src])
        if aggr == "mean":
            agg = agg / torch.bincount(dst, minlength=num_dst).clamp(min=1).unsqueeze(-1)
        ref = F.linear(agg, conv.lin_l.weight, conv.lin_l.bias)
        if root_weight:
            ref = ref + F.linear(x_dst, conv.lin_r.weight)
        torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-5)
        params = [x_src, x_dst] + list(conv.parameters())
        grads = torch.autograd.grad(out.square().sum(), params, allow_unused=True)
        want = torch.autograd.grad(ref.square().sum(), params, allow_unused=True)
        for a, b in zip(grads, want):
            if b is None:
                assert a is None or torch.all(a == 0)
            else:
                torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


def check_bad_input(device):
    ei = torch.tensor([[0, 1], [1, 5]], device=device)
    for kwargs, what in (({"num_nodes": 3}, "out of range"), ({"num_src": 2, "num_dst": 3}, "out of range")):
        try:
            gsparse.Graph(ei, dynamic=True, **kwargs)
        except gsparse.GraphError as e:
            assert what in str(e), str(e)
        else:
            raise AssertionError("out-of-range ids must be rejected")
    try:
        gsparse.Graph(torch.tensor([[0, -1], [1, 0]], device=device), num_nodes=3, dynamic=True)
    except gsparse.GraphError as e:
        assert "negative" in str(e)
    else:
        raise AssertionError("negative ids must be rejected")
    rp = torch.tensor([0, 2, 1, 3], device=device)
    try:
        gsparse.Graph.from_csr(rp, torch.tensor([0, 1, 2], device=device), dynamic=True)
    except gsparse.GraphError as e:
        assert "decreases" in str(e)
    else:
        raise AssertionError("a decreasing row_ptr must be rejected")
    g = gsparse.Graph(torch.tensor([[0, 1], [1, 2]], device=device), num_nodes=3, dynamic=True)
    other = "cpu" if torch.device(device).type == "cuda" else None
    if other:
        try:
            gsparse.gspmm(g, "copy_lhs", "sum", torch.rand(3, 2))
        except gsparse.ShapeError as e:
            assert "dynamic on" in str(e)
        else:
            raise AssertionError("operands on another device than a dynamic graph must be rejected")


def check_index_tensors_modified_after_the_build(device):
    """A dynamic graph reads the caller's index tensors where they are. Modifying one in place after
    the build makes every use of the graph raise GraphError naming it (not a mix of old and new
    edges), for graphs from an edge_index (sorted, unsorted) and from a CSR, and for the graphs
    derived from them; a graph that copied its edges (a small unsorted COO) is not affected."""
    x = torch.rand(120, 4, device=device)

    def expect_error(call):
        try:
            call()
        except gsparse.GraphError as e:
            assert "modified in place" in str(e), str(e)
        else:
            raise AssertionError("a use of a graph whose index tensors changed must be rejected")

    for csr, sort in (("now", False), ("now", True)):
        ei = random_edges().to(device)
        if sort:
            ei = ei[:, torch.argsort(ei[1], stable=True)].contiguous()
        g = gsparse.Graph(ei, num_src=120, num_dst=90, dynamic=True, csr=csr)
        rev = g.reverse()
        before = gsparse.gspmm(g, "copy_lhs", "sum", x)
        ei[0, :10] = 0
        expect_error(lambda: gsparse.gspmm(g, "copy_lhs", "sum", x))
        expect_error(lambda: gsparse.gsddmm(g, "dot", x, x[:90], "u", "v"))
        expect_error(lambda: gsparse.gspmm(rev, "copy_lhs", "sum", x[:90]))
        fresh = gsparse.gspmm(gsparse.Graph(ei, num_src=120, num_dst=90, dynamic=True, csr=csr), "copy_lhs", "sum", x)
        assert not torch.equal(fresh, before)
    # From a CSR whose col_idx the graph uses as it is (int32, contiguous).
    row_ptr = torch.tensor([0, 2, 3, 5], device=device)
    col_idx = torch.tensor([1, 2, 0, 3, 4], dtype=torch.int32, device=device)
    g = gsparse.Graph.from_csr(row_ptr, col_idx, num_src=120, dynamic=True)
    gsparse.gspmm(g, "copy_lhs", "sum", x)
    col_idx[0] = 7
    expect_error(lambda: gsparse.gspmm(g, "copy_lhs", "sum", x))
    # A small unsorted edge_index is copied into the graph's COO: the graph keeps its edges.
    ei = torch.tensor([[0, 1, 2], [2, 0, 1]], device=device)
    g = gsparse.Graph(ei, num_nodes=3, dynamic=True)
    before = gsparse.gspmm(g, "copy_lhs", "sum", x[:3])
    ei[0, 0] = 1
    torch.testing.assert_close(gsparse.gspmm(g, "copy_lhs", "sum", x[:3]), before)


def check_gat_block_shares_the_projection(device):
    """GATConv on a block with x_dst = x[:num_dst] (one projection, its first rows for the
    destinations) gives the outputs and gradients of x_dst as a separate tensor (two projections);
    a detached x_dst is not taken for x's rows (no gradient may reach x through it)."""
    from gsparse.nn.gat_conv import _leading_rows_of
    gen = torch.Generator().manual_seed(4)
    num_src, num_dst, feat = 70, 15, 6
    ei = torch.stack([torch.randint(0, num_src, (300,), generator=gen),
                      torch.randint(0, num_dst, (300,), generator=gen)])
    g = gsparse.Graph(ei.to(device), num_src=num_src, num_dst=num_dst, dynamic=True)
    conv = gsparse.nn.GATConv(feat, 4, heads=2).to(device)
    base = torch.rand(num_src, feat, generator=gen).to(device).requires_grad_()
    x = base * 2  # a non-leaf, as between layers
    assert _leading_rows_of(x[:num_dst], x) and not _leading_rows_of(x[:num_dst].detach(), x)
    assert not _leading_rows_of(x[1:num_dst + 1], x) and not _leading_rows_of(x[:num_dst].clone(), x)

    def run(dst_of):
        x = base * 2
        return conv((x, dst_of(x)), g, size=(num_src, num_dst))

    shared, separate = run(lambda x: x[:num_dst]), run(lambda x: x[:num_dst].clone())
    torch.testing.assert_close(shared, separate, rtol=1e-5, atol=1e-6)
    params = [base] + list(conv.parameters())
    for a, b in zip(torch.autograd.grad(shared.square().sum(), params),
                    torch.autograd.grad(separate.square().sum(), params)):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    # Detached destinations: x's gradient comes from the sources' projection alone.
    detached, copied = run(lambda x: x[:num_dst].detach()), run(lambda x: x[:num_dst].detach().clone())
    torch.testing.assert_close(torch.autograd.grad(detached.sum(), base)[0], torch.autograd.grad(copied.sum(), base)[0])


def check_segments(device):
    """g-SpMM by nonzeros (schedule="spmm_segments{run=R}") on dynamic graphs with empty rows, one very
    long row, duplicate edges and self-loops, edge ids along the rows and not: every op, sum and
    mean, F = 1, odd F and 64, runs shorter and longer than the rows, feature tiles (F = 64), against
    the default kernel;
    gradients through it; a static graph; bad points."""
    gen = torch.Generator().manual_seed(8)
    n, E = 300, 4000
    src = torch.randint(0, n, (E,), generator=gen)
    dst = torch.randint(0, n - 40, (E,), generator=gen)  # the last 40 rows are empty
    dst[:900] = 17  # a very long row
    src[:5] = dst[:5]  # self-loops
    src[5:10], dst[5:10] = src[10:15].clone(), dst[10:15].clone()  # duplicate edges
    order = torch.argsort(dst, stable=True)  # edge ids along the rows, as samplers and CSR files give them
    g = gsparse.Graph(torch.stack([src[order], dst[order]]).to(device), num_nodes=n, dynamic=True)
    unordered = gsparse.Graph(torch.stack([src, dst]).to(device), num_nodes=n, dynamic=True)
    # Every op once, F = 1, odd F and 64, both reductions (each case compiles its kernels).
    cases = [("copy_lhs", "sum", 1), ("copy_lhs", "mean", 64), ("copy_rhs", "sum", 7), ("add", "mean", 7),
             ("sub", "sum", 7), ("mul", "sum", 64), ("div", "mean", 1)]
    for graph in (g, unordered):
        for op, reduce, F in cases:
            x = torch.rand(n, F, generator=gen).to(device)
            w = torch.rand(E, F, generator=gen).add_(0.5).to(device)
            want = gsparse.gspmm(graph, op, reduce, x, w)
            # Runs shorter and longer than the rows; feature tiles up to the feature length.
            points = ["run=4", "run=256"] + (["run=16, tile=4", "run=64, tile=8"] if F >= 8 else [])
            points += ["run=8, lanes=32"] if F == 1 else []  # warp lanes (on the CPU: the same runs of edges)
            for point in points:
                got = gsparse.gspmm(graph, op, reduce, x, w, schedule=f"spmm_segments{{{point}}}")
                torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4, msg=f"{op} {reduce} F={F} {point}")
    x = torch.rand(n, 5, generator=gen).to(device).requires_grad_()
    seg = gsparse.gspmm(g, "copy_lhs", "mean", x, schedule="spmm_segments{run=16}")
    ref = gsparse.gspmm(g, "copy_lhs", "mean", x)
    torch.testing.assert_close(torch.autograd.grad(seg.square().sum(), x)[0], torch.autograd.grad(ref.square().sum(), x)[0])
    for bad, error in (("spmm_segments{run=3}", "run = 3"), ("spmm_segments{width=2}", "knobs run, tile and lanes, not width"),
                       ("spmm_segments{lanes=2}", "lanes = 2 is not one of 0, 32"),
                       ("spmm_segments{lanes=32}", "one feature thread"),
                       ("spmm_segments{tile=3}", "tile = 3"), ("spmm_segments{tile=8}", "exceeds the 5 feature")):
        with pytest.raises(gsparse.ScheduleError, match=error):
            gsparse.gspmm(g, "copy_lhs", "sum", x, schedule=bad)
    with pytest.raises(gsparse.ScheduleError):
        gsparse.gspmm(g, "copy_lhs", "max", x, schedule="spmm_segments{run=32}")
    # A static graph takes the point too (its own COO; on CUDA its device copies).
    static = gsparse.Graph(torch.stack([src, dst]), num_nodes=n)
    xs = x.detach().to(device)
    torch.testing.assert_close(gsparse.gspmm(static, "copy_lhs", "mean", xs, schedule="spmm_segments{run=64}"),
                               gsparse.gspmm(static, "copy_lhs", "mean", xs), rtol=1e-4, atol=1e-5)


def check_strided_index_tensors(device):
    """Index tensors that are strided views (the rows of a transposed [E, 2] edge list, every other
    entry of a larger array) build the same graphs as their dense copies: the kernels read the
    arrays by address (found by the graph fuzz test: a sorted int32 edge list's source row was
    passed on as it was, stride 2, and the kernel read the wrong sources)."""
    x = torch.arange(30, dtype=torch.float32).reshape(10, 3).to(device)
    for dtype in (torch.int32, torch.int64):
        for pairs in ([[9, 1], [2, 9]], [[2, 9], [9, 1], [4, 1]]):  # sorted by destination, and not
            e = torch.tensor(pairs, dtype=dtype, device=device)
            strided = gsparse.Graph(e.t(), num_nodes=10, dynamic=True)
            dense = gsparse.Graph(e.t().contiguous(), num_nodes=10, dynamic=True)
            torch.testing.assert_close(gsparse.gspmm(strided, "copy_lhs", "sum", x),
                                       gsparse.gspmm(dense, "copy_lhs", "sum", x))
    row_ptr = torch.tensor([0, 1, 1, 3], dtype=torch.int32, device=device)
    wide = torch.tensor([4, -1, 7, -1, 2, -1], dtype=torch.int32, device=device)
    strided = gsparse.Graph.from_csr(row_ptr, wide[::2], num_src=10, dynamic=True)
    dense = gsparse.Graph.from_csr(row_ptr, wide[::2].contiguous(), num_src=10, dynamic=True)
    torch.testing.assert_close(gsparse.gspmm(strided, "copy_lhs", "sum", x), gsparse.gspmm(dense, "copy_lhs", "sum", x))


def check_coo_graphs(device):
    """Graphs from an unsorted edge_index without their CSR (csr='lazy', the rule for small graphs):
    g-SpMM sum forward and backward and g-SDDMM run on the COO and leave the CSR unmade, against the
    static graph; an operator that needs the CSR (mean, max, edge softmax, reverse) makes it and
    agrees; csr='now' and PyTorch's deterministic mode take the CSR path; a bad csr value is refused."""
    ei = random_edges()
    E = ei.shape[1]
    static = gsparse.Graph(ei, num_src=120, num_dst=90)
    assert not gsparse.Graph(ei.to(device), num_src=120, num_dst=90, dynamic=True)._t.has_csr  # the "auto" rule
    big = torch.randint(0, 100, (2, 70000), generator=torch.Generator().manual_seed(1))
    assert gsparse.Graph(big.to(device), num_nodes=100, dynamic=True)._t.has_csr  # above LAZY_CSR_MAX_EDGES
    cases = [("copy_lhs", (1,), None), ("copy_lhs", (33,), None), ("mul", (5,), (1,)), ("mul", (3, 4), (3, 4)),
             ("copy_rhs", None, (6,)), ("div", (2,), (2,)), ("add", (7,), (7,))]
    for op, lf, rf in cases:
        x = torch.rand((120,) + lf) + 0.5 if lf else None
        w = torch.rand((E,) + rf) + 0.5 if rf else None
        results = []
        for g, dev, csr in ((static, "cpu", None), ("lazy", device, "lazy"), ("now", device, "now")):
            if csr is not None:
                g = gsparse.Graph(ei.to(device), num_src=120, num_dst=90, dynamic=True, csr=csr)
            xv = x.detach().clone().to(dev).requires_grad_() if x is not None else None
            wv = w.detach().clone().to(dev).requires_grad_() if w is not None else None
            out = gsparse.gspmm(g, op, "sum", xv, wv)
            (out * torch.linspace(0.5, 1.5, out.numel(), device=dev).reshape(out.shape)).sum().backward()
            if csr == "lazy":
                assert not g._t.has_csr, f"{op}: g-SpMM sum made the CSR"
            results.append((out.detach().cpu(), None if xv is None else xv.grad.cpu(),
                            None if wv is None else wv.grad.cpu()))
        for other in results[1:]:
            for a, b, what in zip(results[0], other, ("out", "lhs grad", "rhs grad")):
                if a is not None:
                    torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-5, msg=f"{op} {what}")
    g = gsparse.Graph(ei.to(device), num_src=120, num_dst=90, dynamic=True, csr="lazy")
    x = torch.rand(120, 8)
    xd = x.to(device)
    torch.testing.assert_close(gsparse.gsddmm(g, "dot", xd, xd[:90], "u", "v").cpu(),
                               gsparse.gsddmm(static, "dot", x, x[:90], "u", "v"), rtol=1e-5, atol=1e-5)
    assert not g._t.has_csr, "g-SDDMM made the CSR"
    rev = g.reverse()  # from the COO
    torch.testing.assert_close(gsparse.gspmm(rev, "copy_lhs", "sum", xd[:90]).cpu(),
                               gsparse.gspmm(static.reverse(), "copy_lhs", "sum", x[:90]), rtol=1e-5, atol=1e-5)
    for reduce in ("mean", "max"):
        torch.testing.assert_close(gsparse.gspmm(g, "copy_lhs", reduce, xd).cpu(),
                                   gsparse.gspmm(static, "copy_lhs", reduce, x), rtol=1e-5, atol=1e-5)
    assert g._t.has_csr
    # Deterministic mode: the CSR path (no atomics), same numbers.
    g = gsparse.Graph(ei.to(device), num_src=120, num_dst=90, dynamic=True, csr="lazy")
    previous = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        out = gsparse.gspmm(g, "copy_lhs", "sum", xd)
    finally:
        torch.use_deterministic_algorithms(previous)
    assert g._t.has_csr
    torch.testing.assert_close(out.cpu(), gsparse.gspmm(static, "copy_lhs", "sum", x), rtol=1e-5, atol=1e-5)
    with pytest.raises(gsparse.GraphError, match="csr must be"):
        gsparse.Graph(ei.to(device), num_src=120, num_dst=90, dynamic=True, csr="sometimes")


def check_coo_graph_edge_cases(device):
    """Graphs without their CSR: no edges (zeros, zero gradients), float64, a single node, edge
    features with heads, and the readout after a COO g-SpMM."""
    empty = gsparse.Graph(torch.zeros(2, 0, dtype=torch.int64, device=device), num_nodes=4, dynamic=True, csr="lazy")
    x = torch.rand(4, 3, device=device, requires_grad=True)
    out = gsparse.gspmm(empty, "copy_lhs", "sum", x)
    assert torch.count_nonzero(out) == 0
    out.sum().backward()
    assert torch.count_nonzero(x.grad) == 0
    ei = random_edges()
    static = gsparse.Graph(ei, num_src=120, num_dst=90)
    g = gsparse.Graph(ei.to(device), num_src=120, num_dst=90, dynamic=True, csr="lazy")
    x64 = torch.rand(120, 5, dtype=torch.float64)
    torch.testing.assert_close(gsparse.gspmm(g, "copy_lhs", "sum", x64.to(device)).cpu(),
                               gsparse.gspmm(static, "copy_lhs", "sum", x64))
    xh = torch.rand(120, 2, 4)
    wh = torch.rand(ei.shape[1], 2, 1)
    torch.testing.assert_close(gsparse.gspmm(g, "mul", "sum", xh.to(device), wh.to(device)).cpu(),
                               gsparse.gspmm(static, "mul", "sum", xh, wh), rtol=1e-5, atol=1e-5)
    assert not g._t.has_csr
    one = gsparse.Graph(torch.zeros(2, 3, dtype=torch.int64, device=device), num_nodes=1, dynamic=True, csr="lazy")
    torch.testing.assert_close(gsparse.gspmm(one, "copy_lhs", "sum", torch.ones(1, 2, device=device)).cpu(),
                               torch.full((1, 2), 3.0))


def check_native_csr_validation(device):
    """Graph.from_csr's validation by the graph-build kernels (_C.check_csr) against the PyTorch
    checks: on random CSRs (int32 and int64 arrays), a quarter broken in one way (a decreasing or
    misplaced offset, a wrong first or last offset, a negative or out-of-range source), both refuse
    the same inputs with the same message, and accept the others with the same arrays."""
    from gsparse import _tensor_graph as TG

    def build(native, *args, **kw):
        saved = set(TG.NATIVE_BUILD_DEVICES)
        TG.NATIVE_BUILD_DEVICES.clear()
        if native:
            TG.NATIVE_BUILD_DEVICES.add(torch.device(device).type)
        try:
            return gsparse.Graph.from_csr(*args, dynamic=True, **kw)._t
        except gsparse.GraphError as e:
            return str(e)
        finally:
            TG.NATIVE_BUILD_DEVICES.clear()
            TG.NATIVE_BUILD_DEVICES.update(saved)

    gen = torch.Generator().manual_seed(7)
    refused = 0
    for case in range(60):
        num_src, num_dst = int(torch.randint(1, 50, (1,), generator=gen)), int(torch.randint(0, 40, (1,), generator=gen))
        deg = torch.randint(0, 6, (num_dst,), generator=gen)
        row_ptr = torch.cat([torch.zeros(1, dtype=torch.int64), deg.cumsum(0)])
        col_idx = torch.randint(0, num_src, (int(row_ptr[-1]),), generator=gen)
        kind = case % 8
        if kind == 1 and num_dst >= 2 and row_ptr[-1] > 0:
            row_ptr[1 + case % (num_dst - 1)] = row_ptr[-1] + 1  # decreases after it
        elif kind == 2:
            row_ptr[0] = 1
        elif kind == 3:
            row_ptr[-1] += 1
        elif kind == 4 and col_idx.numel():
            col_idx[case % col_idx.numel()] = -3
        elif kind == 5 and col_idx.numel():
            col_idx[case % col_idx.numel()] = num_src
        for dtype in (torch.int32, torch.int64):
            args = (row_ptr.to(dtype).to(device), col_idx.to(dtype).to(device))
            a, b = build(True, *args, num_src=num_src), build(False, *args, num_src=num_src)
            assert type(a) is type(b), (case, dtype, a, b)
            if isinstance(a, str):
                refused += 1
                # A first offset of 1 before an empty row also decreases: either fault may be named.
                assert a == b or (kind in (1, 2) and a in ("row_ptr decreases", b)), (case, a, b)
                continue
            for x, y in zip(a.csr(), b.csr()):
                assert torch.equal(x.cpu(), y.cpu()), case
            assert torch.equal(a.row_ptr.cpu(), b.row_ptr.cpu()), case
    assert refused >= 20, refused


def check_native_build(device):
    """Graphs from a COO built by gsparse's graph-build kernels (_tensor_graph.NATIVE_BUILD_DEVICES)
    against the same graphs built with PyTorch operations: identical arrays for int32 and int64 ids,
    sorted and unsorted edges, the COO form and the CSR form (sizes on both sides of
    LAZY_CSR_MAX_EDGES and of the statistics' combining passes), and the same errors; and the
    self-loop graphs derived from them (with_loops_appended: row offsets with their padding, the
    COO with its padding and the own-loop flags)."""
    from gsparse import _tensor_graph as TG

    def natively(native, fn):
        saved = set(TG.NATIVE_BUILD_DEVICES)
        TG.NATIVE_BUILD_DEVICES.clear()
        if native:
            TG.NATIVE_BUILD_DEVICES.add(torch.device(device).type)
        try:
            return fn()
        finally:
            TG.NATIVE_BUILD_DEVICES.clear()
            TG.NATIVE_BUILD_DEVICES.update(saved)

    def build(ei, native, **kw):
        return natively(native, lambda: gsparse.Graph(ei, dynamic=True, **kw)._t)

    def check_loops(t, what):
        (a, da), (b, db) = natively(True, t.with_loops_appended), natively(False, t.with_loops_appended)
        assert (a.num_src, a.num_dst, a.num_edges, a.max_degree) == (b.num_src, b.num_dst, b.num_edges, b.max_degree)
        assert torch.equal(a.row_ptr.cpu(), b.row_ptr.cpu()), what
        assert torch.equal(a.col_idx.cpu(), b.col_idx.cpu()), what
        for x, y in zip(a.coo_padded(), b.coo_padded()):
            assert torch.equal(x.cpu(), y.cpu()), what
        assert da.dtype == torch.bool and torch.equal(da.cpu(), db.cpu()), what

    gen = torch.Generator().manual_seed(4)
    for e, n_src, n_dst in ((1, 1, 1), (1500, 120, 90), (70001, 3000, 2500), (300000, 50000, 41000)):
        src = torch.randint(0, n_src, (e,), generator=gen)
        dst = torch.randint(0, max(n_dst - 7, 1), (e,), generator=gen)  # the last rows stay empty
        for order in ("sorted", "unsorted"):
            if order == "sorted":
                dst = dst.sort(stable=True).values
            for dtype in (torch.int32, torch.int64):
                ei = torch.stack([src, dst]).to(dtype).to(device)
                for csr in ("auto", "now", "lazy"):
                    a, b = build(ei, True, num_src=n_src, num_dst=n_dst, csr=csr), \
                        build(ei, False, num_src=n_src, num_dst=n_dst, csr=csr)
                    what = f"{e} edges, {order}, {dtype}, csr={csr}"
                    assert a.has_csr == b.has_csr, what
                    if b.has_csr:
                        for x, y in zip(a.csr(), b.csr()):
                            assert torch.equal(x.cpu(), y.cpu()), what
                        assert torch.equal(a.row_ptr.cpu(), b.row_ptr.cpu()), what  # the padding too
                    for x, y in zip(a.coo_padded(), b.coo_padded()):
                        assert torch.equal(x.cpu(), y.cpu()), what
                    if csr == "now" and dtype == torch.int64:
                        check_loops(b, what)
    # Self-loops: more sources than destinations and fewer, repeated own loops, empty rows, no edges.
    for n_src, n_dst, e in ((70, 40, 300), (30, 50, 300), (45, 45, 300), (30, 20, 0), (1, 1, 1), (3000, 2900, 70001)):
        src = torch.randint(0, n_src, (e,), generator=gen)
        dst = torch.randint(0, max(1, n_dst - 8), (e,), generator=gen)
        if e >= 300:
            src[:4], dst[:4] = torch.tensor([2, 2, 2, 9]), torch.tensor([2, 2, 2, 9])
        check_loops(build(torch.stack([src, dst]).to(device), False, num_src=n_src, num_dst=n_dst, csr="now"),
                    f"self-loops of {e} edges, {n_src} x {n_dst}")
    for bad, message in ((torch.tensor([[0, -1], [1, 1]]), "negative source"),
                         (torch.tensor([[0, 1], [-2, 1]]), "negative destination"),
                         (torch.tensor([[0, 3], [1, 1]]), "source id 3 is out of range"),
                         (torch.tensor([[0, 1], [1, 9]]), "destination id 9 is out of range")):
        for dtype in (torch.int32, torch.int64):
            for csr in ("now", "lazy"):
                with pytest.raises(gsparse.GraphError, match=message):
                    build(bad.to(dtype).to(device), True, num_nodes=3, csr=csr)
