"""Worker side of test_distributed.py: checks that run in every rank of a gloo process group
(spawned by torch.multiprocessing), each comparing partitioned or data-parallel training with the
same model in a single process on the whole graph / union batch. Each rank writes the outcome of
every check it ran to <tmpdir>/rank<r>.json; the first failing check stops the rank (its peers
then fail in their next collective, or time out after TIMEOUT_S)."""

import datetime
import json
import os
import traceback

import torch
import torch.distributed as dist
import torch.nn.functional as F

TIMEOUT_S = 60
N, E, FEAT, CLASSES = 48, 260, 8, 3


def small_graph():
    """A random graph with self-loops, duplicate edges and nodes without in-edges (every rank
    builds the same one)."""
    gen = torch.Generator().manual_seed(7)
    src = torch.randint(0, N, (E,), generator=gen)
    dst = torch.randint(0, N - 4, (E,), generator=gen)          # the last 4 nodes have no in-edges
    loops = torch.arange(0, N, 5)
    src = torch.cat([src, loops, src[:10]])                        # self-loops, duplicates
    dst = torch.cat([dst, loops, dst[:10]])
    return torch.stack([src, dst])


def data(dtype=torch.float64):
    gen = torch.Generator().manual_seed(11)
    x = torch.randn(N, FEAT, generator=gen, dtype=dtype)
    y = torch.randint(0, CLASSES, (N,), generator=gen)
    train = torch.rand(N, generator=gen) < 0.6
    w = torch.rand(E + len(range(0, N, 5)) + 10, generator=gen, dtype=dtype) + 0.5
    return x, y, train, w


def close(a, b, what, tol=1e-9):
    if a.shape != b.shape:
        raise AssertionError(f"{what}: shape {list(a.shape)} vs {list(b.shape)}")
    err = (a - b).abs().max().item() if a.numel() else 0.0
    if not err <= tol * max(1.0, b.abs().max().item() if b.numel() else 1.0):
        raise AssertionError(f"{what}: max difference {err:.3g}")


def _gathered(t):
    out = [torch.empty_like(t) for _ in range(dist.get_world_size())]
    dist.all_gather(out, t.contiguous())
    return out


# --- Partitioned full-graph training ----------------------------------------------------------

class Net(torch.nn.Module):
    """Layers applied in sequence with relu between; forward(x, graph) for both forms."""

    def __init__(self, convs):
        super().__init__()
        self.convs = torch.nn.ModuleList(convs)

    def forward(self, x, g, **kw):
        for i, conv in enumerate(self.convs):
            x = conv(x, g, **kw) if kw else conv(x, g)
            if i < len(self.convs) - 1:
                x = F.relu(x)
        return x


def models(kind):
    import gsparse
    import gsparse.distributed as gd
    torch.manual_seed(3)
    if kind == "gcn":
        pairs = [(gsparse.nn.GCNConv, gd.DistGCNConv, (FEAT, 16), {}), (gsparse.nn.GCNConv, gd.DistGCNConv, (16, CLASSES), {})]
    elif kind == "gcn_weighted":
        pairs = [(gsparse.nn.GCNConv, gd.DistGCNConv, (FEAT, 16), {"improved": True}),
                 (gsparse.nn.GCNConv, gd.DistGCNConv, (16, CLASSES), {})]
    elif kind == "sage":  # mean without projecting first, max, mean projecting first
        pairs = [(gsparse.nn.SAGEConv, gd.DistSAGEConv, (FEAT, 16), {}),
                 (gsparse.nn.SAGEConv, gd.DistSAGEConv, (16, 16), {"aggr": "max"}),
                 (gsparse.nn.SAGEConv, gd.DistSAGEConv, (16, CLASSES), {})]
    elif kind == "gin_gat":
        pairs = [(gsparse.nn.GATConv, gd.DistGATConv, (FEAT, 4), {"heads": 2}),
                 (lambda: gsparse.nn.GINConv(torch.nn.Linear(8, CLASSES), train_eps=True),
                  lambda: gd.DistGINConv(torch.nn.Linear(8, CLASSES), train_eps=True), (), {})]
    else:
        raise ValueError(kind)
    ref = Net([a(*args, **kw) for a, _, args, kw in pairs]).double()
    par = Net([b(*args, **kw) for _, b, args, kw in pairs]).double()
    par.load_state_dict(ref.state_dict())
    return ref, par


def check_partitioned(kind, method="auto"):
    import gsparse
    import gsparse.distributed as gd
    ei = small_graph()
    g = gsparse.Graph(ei, num_nodes=N)
    x, y, train, w = data()
    dg = gd.DistGraph.from_global(g, method=method)
    ref, par = models(kind)
    kw_ref, kw_par = {}, {}
    if kind == "gcn_weighted":
        kw_ref, kw_par = {"edge_weight": w}, {"edge_weight": dg.local_edge_values(w)}
    n_train = int(train.sum())
    # Single process, whole graph.
    xr = x.clone().requires_grad_()
    out_ref = ref(xr, g, **kw_ref)
    F.cross_entropy(out_ref[train], y[train], reduction="sum").div(n_train).backward()
    # Partitioned.
    nodes = dg.nodes
    xl = x[nodes].clone().requires_grad_()
    out = par(xl, dg, **kw_par)
    loss = F.cross_entropy(out[train[nodes]], y[nodes][train[nodes]], reduction="sum").div(n_train)
    loss.backward()
    gd.allreduce_gradients(par)
    close(out, out_ref[nodes].detach(), f"{kind} forward rows")
    close(xl.grad, xr.grad[nodes], f"{kind} input gradient rows")
    for (name, p), (_, q) in zip(ref.named_parameters(), par.named_parameters()):
        close(q.grad, p.grad, f"{kind} gradient of {name}")
    # Every rank ends with the same gradients.
    for other in _gathered(torch.cat([p.grad.flatten() for p in par.parameters()])):
        close(other, torch.cat([p.grad.flatten() for p in par.parameters()]), f"{kind} gradients across ranks", 0)


def check_exchange_p2p():
    """The pairwise fallback moves the same rows as all_to_all_single, forward and backward."""
    import gsparse.distributed as gd
    ws, r = dist.get_world_size(), dist.get_rank()
    counts_to = [(r + q) % 3 + (q == r) for q in range(ws)]            # rows this rank sends to q
    counts_from = [(q + r) % 3 + (q == r) for q in range(ws)]          # rows q sends to this rank
    send = torch.arange(sum(counts_to), dtype=torch.float64).unsqueeze(1) * 10 + r
    a = gd.exchange_rows(send, counts_to, counts_from, method="a2a")
    b = gd.exchange_rows(send, counts_to, counts_from, method="p2p")
    close(a, b, "p2p exchange", 0)
    check_partitioned("gcn", method="p2p")


# --- Data-parallel mini-batch training --------------------------------------------------------

class BlockSAGE(torch.nn.Module):
    def __init__(self):
        super().__init__()
        import gsparse
        self.convs = torch.nn.ModuleList([gsparse.nn.SAGEConv(FEAT, 16), gsparse.nn.SAGEConv(16, CLASSES)])

    def forward(self, x, blocks):
        for i, (conv, b) in enumerate(zip(self.convs, blocks)):
            x = conv((x, x[:b.num_dst]), b)
            if i == 0:
                x = F.relu(x)
        return x


def _step(model, opt, batch, x, y):
    opt.zero_grad()
    out = model(x[batch.input_nodes], batch.blocks)
    F.cross_entropy(out, y[batch.seeds]).backward()
    grads = torch.cat([p.grad.flatten().clone() for p in model.parameters()])
    opt.step()
    return grads


def check_data_parallel_exact():
    """Full neighbourhoods (fan-out -1): DDP's averaged gradient of equal-size rank batches is the
    gradient of the union batch in one process."""
    import gsparse.distributed as gd
    from torch.nn.parallel import DistributedDataParallel as DDP
    ws, r = dist.get_world_size(), dist.get_rank()
    ei = small_graph()
    import gsparse
    g = gsparse.Graph(ei, num_nodes=N)
    x, y, _, _ = data()
    torch.manual_seed(5)
    ref = BlockSAGE().double()
    model = BlockSAGE().double()
    model.load_state_dict(ref.state_dict())
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.5)
    loaders = [gd.DistributedNeighborLoader(g, [-1, -1], batch_size=5, rank=q, world_size=ws, seed=1, device="cpu")
               for q in range(ws)]
    batches = [next(iter(ld)) for ld in loaders]
    seeds = [b.seeds for b in batches]
    union = torch.cat(seeds)
    if union.unique().numel() != union.numel():
        raise AssertionError(f"the ranks' seeds overlap: {[s.tolist() for s in seeds]}")
    grads = _step(ddp, opt, batches[r], x, y)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.5)
    ref_grads = _step(ref, ref_opt, loaders[0].sampler.sample(union), x, y)
    close(grads, ref_grads, "DDP gradient against the union batch")
    for other in _gathered(grads):
        close(other, grads, "DDP gradients across ranks", 0)
    params = torch.cat([p.detach().flatten() for p in model.parameters()])
    close(params, torch.cat([p.detach().flatten() for p in ref.parameters()]), "parameters after a step")


def check_data_parallel_sampled():
    """Sampled fan-outs: disjoint seeds per rank and epoch, different samples per rank, the same
    parameters on every rank after each step, and as many steps on every rank."""
    import gsparse
    import gsparse.distributed as gd
    from torch.nn.parallel import DistributedDataParallel as DDP
    ws, r = dist.get_world_size(), dist.get_rank()
    g = gsparse.Graph(small_graph(), num_nodes=N)
    x, y, train, _ = data(torch.float32)
    torch.manual_seed(5)
    ddp = DDP(BlockSAGE())
    opt = torch.optim.Adam(ddp.parameters(), lr=0.01)
    loader = gd.DistributedNeighborLoader(g, [3, 2], batch_size=4, rank=r, world_size=ws,
                                          input_nodes=train.nonzero().flatten(), seed=2, device="cpu")
    steps = 0
    for epoch in range(2):
        loader.set_epoch(epoch)
        mine = loader.seeds()
        all_seeds = _gathered(mine)
        union = torch.cat(all_seeds)
        n_train = int(train.sum())
        if union.unique().numel() != min(union.numel(), n_train) or len(set(t.numel() for t in all_seeds)) != 1:
            raise AssertionError(f"epoch {epoch}: seed shards {[t.tolist() for t in all_seeds]}")
        for batch in loader:
            _step(ddp, opt, batch, x, y)
            steps += 1
        params = torch.cat([p.detach().flatten() for p in ddp.parameters()])
        for other in _gathered(params):
            close(other, params, f"epoch {epoch}: parameters across ranks", 0)
    counts = _gathered(torch.tensor([steps]))
    if len(set(int(c) for c in counts)) != 1:
        raise AssertionError(f"steps per rank differ: {[int(c) for c in counts]}")


def check_kernel_cache():
    """The ranks share GSPARSE_KERNEL_CACHE (a fresh folder): both compile or load the same kernels
    at once, none falls back, and no temporary file is left."""
    import gsparse
    folder = os.path.join(os.environ["GSPARSE_TEST_RUN_DIR"], "kernel-cache")  # shared, empty
    previous = gsparse.kernel_cache_dir()
    gsparse.set_kernel_cache_dir(folder)
    try:
        _cached_kernel(folder)
    finally:
        gsparse.set_kernel_cache_dir(previous)


def _cached_kernel(folder):
    import gsparse
    dist.barrier()
    g = gsparse.Graph(small_graph(), num_nodes=N, dynamic=True)
    x = torch.randn(N, 13)
    before = gsparse.kernel_cache_stats()
    out = gsparse.gspmm(g, "copy_lhs", "max", x)
    from conftest import ref_gspmm
    close(out, ref_gspmm(small_graph(), N, "copy_lhs", "max", x, None), "cached kernel result", 1e-6)
    after = gsparse.kernel_cache_stats()
    if after["failed"] != before["failed"] or after["rejected"] != before["rejected"]:
        raise AssertionError(f"kernel cache: {before} -> {after}")
    dist.barrier()
    if after["compiled"] + after["loaded"] == before["compiled"] + before["loaded"]:
        raise AssertionError(f"the kernel did not go through the cache {folder}: {before} -> {after}")
    left = [f for f in os.listdir(folder) if ".tmp" in f]
    if left:
        raise AssertionError(f"temporary files left in {folder}: {left}")


CHECKS = {
    "partitioned_gcn": lambda: check_partitioned("gcn"),
    "partitioned_gcn_weighted": lambda: check_partitioned("gcn_weighted"),
    "partitioned_sage": lambda: check_partitioned("sage"),
    "partitioned_gin_gat": lambda: check_partitioned("gin_gat"),
    "exchange_p2p": check_exchange_p2p,
    "data_parallel_exact": check_data_parallel_exact,
    "data_parallel_sampled": check_data_parallel_sampled,
    "kernel_cache": check_kernel_cache,
}


def worker(rank, world, folder, names):
    torch.set_num_threads(1)
    os.environ["GSPARSE_TEST_RUN_DIR"] = folder
    results = {}
    path = os.path.join(folder, f"rank{rank}.json")

    def save():
        with open(path + ".tmp", "w") as f:
            json.dump(results, f)
        os.replace(path + ".tmp", path)

    dist.init_process_group("gloo", init_method="file://" + os.path.join(folder, "rendezvous"), rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=TIMEOUT_S))
    try:
        for name in names:
            try:
                CHECKS[name]()
                results[name] = "ok"
            except Exception:  # noqa: BLE001 - reported to the parent
                results[name] = traceback.format_exc()
                save()
                raise
            save()
    finally:
        save()
        dist.destroy_process_group()
