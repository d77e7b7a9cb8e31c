#!/usr/bin/env python3
"""Mini-batch GNN training: gsparse.nn layers against torch_geometric's layers on identical inputs.

Workloads (each model built from the same code with gsparse's and with PyG's layers, the same
weights, the same inputs):
  blocks   neighbour sampling (gsparse.sampling, on the GPU, without replacement), fan-outs 25 / 10
           and batch 1,024 on each twin (and 15 / 10 / 5 on ogbn-products); GraphSAGE (mean) and GAT
           (4 x 64 heads, then 1) run layer by layer on the bipartite blocks,
           conv((x, x[:num_dst]), edge_index, size=(num_src, num_dst)); GCN runs on the sampled
           subgraph (the union of the blocks' edges over the input nodes, PyG's NeighborLoader form:
           GCNConv is not bipartite), both layers over all its nodes, loss on the seeds;
  molecules batched small graphs: 128 graphs of 10-50 nodes, average degree ~2.2, 32 features, a
           new batch every step; GIN and GCN (3 layers, hidden 128), global mean pool, 10 classes.
A pool of batches is sampled once before timing and cycled; the feature rows of each batch are
gathered before timing (data loading, identical for both). Each timed step, for each library:
takes the step's graphs as the sampler produced them (gsparse: fresh gsparse graphs over the
sampler's CSR arrays, nothing derived kept across steps; PyG: the blocks' edge_index tensors; GCN's
subgraph and the molecule batches: gsparse.Graph built from the edge_index on the GPU, validated),
forward, cross-entropy loss, backward and an Adam step. Median
over the timed steps, CUDA events, after warm-up; the two libraries' timed steps interleave in
alternating order (host-bound steps drift with the host's load).

Also per case: the time to build the step's graphs from the blocks' edge_index tensors alone (gsparse,
validated: PyG-style drop-in use; all of a step's blocks, and each block alone), the first step in this process
(kernels compiled on first use: gsparse's JIT, PyTorch's own lazy initialisation), the peak of
PyTorch's allocator for each library alone, and the sampler against a plain PyTorch sampler (random
keys per candidate edge, one sort).

Writes summary.json ({"cases": [...]}), minibatch.md and minibatch.png into
<out-root>/<date>-<device>-minibatch/.
"""

import argparse
import copy
import datetime as dt
import json
import os
import re
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import gsparse
from gsparse.sampling import NeighborSampler

TWINS = {"reddit": (602, 41), "ogbn-products": (100, 47)}
SAMPLER_RUNS = 20


def log(*a):
    print(*a, flush=True)


# --- Models ----------------------------------------------------------------------------------------

def layers(lib):
    if lib == "gsparse":
        return gsparse.nn
    import torch_geometric.nn as pygnn
    return pygnn


class BlockNet(torch.nn.Module):
    """SAGE or GAT over bipartite blocks, outermost first."""

    def __init__(self, kind, lib, in_dim, hidden, classes, num_layers):
        super().__init__()
        L = layers(lib)
        dims = [in_dim] + [hidden] * (num_layers - 1) + [classes]
        self.convs = torch.nn.ModuleList()
        for i in range(num_layers):
            last = i == num_layers - 1
            if kind == "sage":
                self.convs.append(L.SAGEConv(dims[i], dims[i + 1]))
            else:
                heads = 1 if last else 4
                out = dims[i + 1] if last else dims[i + 1] // heads
                self.convs.append(L.GATConv(dims[i], out, heads=heads))

    def forward(self, x, adjs):
        for i, (adj, size) in enumerate(adjs):
            x = self.convs[i]((x, x[: size[1]]), adj, size=size)
            if i < len(self.convs) - 1:
                x = F.relu(x)
        return x


class GraphNet(torch.nn.Module):
    """GCN over one graph (the sampled subgraph), or GIN / GCN with a mean readout (molecules)."""

    def __init__(self, kind, lib, in_dim, hidden, classes, num_layers, readout):
        super().__init__()
        L = layers(lib)
        dims = [in_dim] + [hidden] * num_layers
        self.convs = torch.nn.ModuleList()
        for i in range(num_layers):
            if kind == "gin":
                mlp = torch.nn.Sequential(torch.nn.Linear(dims[i], dims[i + 1]), torch.nn.ReLU(),
                                          torch.nn.Linear(dims[i + 1], dims[i + 1]))
                self.convs.append(L.GINConv(mlp))
            else:
                self.convs.append(L.GCNConv(dims[i], dims[i + 1]))
        self.head = torch.nn.Linear(hidden, classes)
        self.readout = readout
        self.pool = L.global_mean_pool if readout else None

    def forward(self, x, adj, batch=None, size=None):
        for conv in self.convs:
            x = F.relu(conv(x, adj))
        if self.readout:
            x = self.pool(x, batch, size)
        return self.head(x)


def weight_names(src, dst):
    """{name in dst: name in src} of the same weights (PyG's layers name a few differently)."""
    s = src.state_dict()
    names = {}
    for name, t in dst.state_dict().items():
        alt = [name, name.replace(".lin.", ".lin_src."), name.replace(".lin.weight", ".lin.lin.weight"),
               name.replace("lin_l.weight", "lin_l.weight")]
        key = next((a for a in alt if a in s and s[a].numel() == t.numel()), None)
        if key is None:
            raise KeyError(f"no PyG parameter for {name} (PyG has {sorted(s)})")
        names[name] = key
    return names


def copy_weights(src, dst):
    s, d = src.state_dict(), dst.state_dict()
    dst.load_state_dict({name: s[key].reshape(d[name].shape) for name, key in weight_names(src, dst).items()})


# Largest relative difference (per parameter, in the 2-norm) allowed between the two libraries'
# gradients after one step on the same batch with the same weights (float32 on the GPU).
PARITY_RTOL = 1e-3


def check_parity(models, make_step, item):
    """One step of each library's untrained model on the same batch, with an optimizer of learning
    rate 0 (the weights stay as copied), and the gradients of every parameter compared: a case whose
    gradients disagree raises instead of reporting times. Returns the largest relative difference."""
    grads = {}
    for lib, model in models.items():
        step = make_step(lib, model, torch.optim.SGD(model.parameters(), lr=0.0))
        step(item)
        grads[lib] = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}
    worst = 0.0
    for name, key in weight_names(models["pyg"], models["gsparse"]).items():
        if name not in grads["gsparse"] and key not in grads["pyg"]:
            continue  # a buffer, or a parameter neither model reaches
        a = grads["gsparse"].get(name)
        b = grads["pyg"].get(key)
        if a is None or b is None:
            raise AssertionError(f"parity: {name} has a gradient in only one library")
        err = float((a - b.reshape(a.shape)).norm() / b.norm().clamp(min=1e-12))  # same numel (weight_names)
        worst = max(worst, err)
        if err > PARITY_RTOL:
            raise AssertionError(f"parity: the gradient of {name} differs from PyG's {key} by {err:.2e} "
                                 f"(relative; shape {list(b.shape)})")
    for model in models.values():
        model.zero_grad(set_to_none=True)
    return worst


# --- Inputs ----------------------------------------------------------------------------------------

def plain_sampler(row_ptr, col_idx, seeds, fanouts, gen):
    """A plain PyTorch sampler (the baseline): per layer, a random key per candidate edge, one sort
    by (node, key), the first fanout of each node; relabel with torch.unique."""
    nodes = seeds
    blocks = []
    for fanout in reversed(fanouts):
        start = row_ptr[nodes]
        deg = row_ptr[nodes + 1] - start
        total = int(deg.sum())
        row = torch.repeat_interleave(torch.arange(nodes.numel(), device=nodes.device), deg, output_size=total)
        off = torch.zeros(nodes.numel() + 1, dtype=torch.int64, device=nodes.device)
        torch.cumsum(deg, 0, out=off[1:])
        eid = start[row] + torch.arange(total, device=nodes.device) - off[row]
        key = torch.rand(total, generator=gen, device=nodes.device) + row.to(torch.float64)
        order = torch.argsort(key)
        rank = torch.arange(total, device=nodes.device) - off[row[order]]
        keep = order[rank < fanout]
        nbr = col_idx[eid[keep]]
        uniq, inv = torch.unique(torch.cat([nodes, nbr]), return_inverse=True)
        blocks.append((uniq, inv))
        nodes = uniq
    return nodes, blocks


def block_inputs(batch):
    """Per block: (edge_index int64 [2, E] in the block's ids, (num_src, num_dst))."""
    out = []
    for b in batch.blocks:
        out.append((b.edge_index(b.device), (b.num_src, b.num_dst)))
    return out


def block_csrs(batch, fanouts):
    """Per block: the sampler's own CSR arrays (row_ptr, col_idx), (num_src, num_dst) and fan-out."""
    out = []
    for b, f in zip(batch.blocks, fanouts):
        row_ptr, col_idx, _ = b.csr(b.device)
        out.append((row_ptr, col_idx, (b.num_src, b.num_dst), f))
    return out


def molecule_batch(gen, device, graphs=128, feat=32, classes=10):
    sizes = torch.randint(10, 51, (graphs,), generator=gen)
    eis = []
    for n in sizes.tolist():
        m = max(1, int(round(1.1 * n)))  # 2.2 average degree counting both directions
        s = torch.randint(0, n, (m,), generator=gen)
        d = (s + 1 + torch.randint(0, n - 1, (m,), generator=gen)) % n
        eis.append(torch.stack([torch.cat([s, d]), torch.cat([d, s])]))
    offsets = torch.cumsum(sizes, 0) - sizes
    ei = torch.cat([e + o for e, o in zip(eis, offsets.tolist())], dim=1)
    batch = torch.repeat_interleave(torch.arange(graphs), sizes)
    n = int(sizes.sum())
    x = torch.randn(n, feat, generator=gen)
    y = torch.randint(0, classes, (graphs,), generator=gen)
    return ei.to(device), batch.to(device), x.to(device), y.to(device), n


def block_pool(sampler, seeds_all, x_all, y_all, fanouts, count, batch_size):
    """count sampled batches of batch_size seeds each from seeds_all, as the steps take them: input
    features and seed labels gathered, the blocks as edge_index tensors (PyG) and CSR arrays, and
    the sampled batch itself."""
    pool = []
    for i in range(count):
        batch = sampler.sample(seeds_all[i * batch_size:(i + 1) * batch_size])
        pool.append({"x": x_all[batch.input_nodes], "y": y_all[batch.seeds], "blocks": block_inputs(batch),
                     "csrs": block_csrs(batch, fanouts), "batch": batch})
    return pool


def molecule_pool(gen, device, count):
    """count batches of small graphs (molecule_batch) as the steps take them."""
    pool = []
    for _ in range(count):
        ei, batch, x, y, n = molecule_batch(gen, device)
        pool.append({"ei": ei, "batch": batch, "x": x, "y": y, "n": n})
    return pool


# --- Steps ------------------------------------------------------------------------------------------

def block_step(lib, model, opt):
    """A training step of a BlockNet on a pool item's sampled blocks."""
    def step(item):
        if lib == "gsparse":
            # The sampler's blocks as a gsparse user gets them: fresh graphs over the sampler's CSR
            # arrays each step (nothing derived is reused across steps).
            adjs = [(gsparse.Graph.from_csr(rp, ci, num_src=s[0], dynamic=True, validate=False, max_degree=f), s)
                    for rp, ci, s, f in item["csrs"]]
        else:
            adjs = item["blocks"]
        opt.zero_grad(set_to_none=True)
        out = model(item["x"], adjs)
        F.cross_entropy(out, item["y"]).backward()
        opt.step()
    return step


def subgraph_step(lib, model, opt):
    """A training step of a GraphNet (GCN) on the sampled subgraph: the union of the blocks' edges
    (gsparse: a Graph built from that edge_index on the GPU, validated), loss on the seeds."""
    def step(item):
        n = item["x"].shape[0]
        ei = torch.cat([b[0] for b in item["blocks"]], dim=1)
        adj = gsparse.Graph(ei, num_nodes=n) if lib == "gsparse" else ei
        opt.zero_grad(set_to_none=True)
        out = model(item["x"], adj)[: item["y"].numel()]
        F.cross_entropy(out, item["y"]).backward()
        opt.step()
    return step


def molecule_step(lib, model, opt):
    """A training step of a GraphNet with readout on a batch of small graphs (gsparse: a Graph built
    from the batch's edge_index on the GPU, validated)."""
    def step(item):
        adj = gsparse.Graph(item["ei"], num_nodes=item["n"]) if lib == "gsparse" else item["ei"]
        opt.zero_grad(set_to_none=True)
        out = model(item["x"], adj, item["batch"], 128)
        F.cross_entropy(out, item["y"]).backward()
        opt.step()
    return step


# --- Timing ----------------------------------------------------------------------------------------

def time_steps(step, pool, warmup, runs):
    """(median, all) CUDA-event times in ms of step over the pool's items, cycled, after warm-up."""
    for i in range(warmup):
        step(pool[i % len(pool)])
    torch.cuda.synchronize()
    times = []
    for i in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        step(pool[i % len(pool)])
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times), times


def first_step(step, item):
    torch.cuda.synchronize()
    t = time.perf_counter()
    step(item)
    torch.cuda.synchronize()
    return time.perf_counter() - t


def time_step_once(step, item):
    """CUDA-event time in ms of one step on an idle device."""
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    step(item)
    b.record()
    b.synchronize()
    return a.elapsed_time(b)


def run_pair(make_model, make_step, pool, args):
    """Both libraries on one case (gsparse's model takes PyG's initial weights). Per library alone:
    the first step in this process, then warm-up steps under a fresh peak-memory count. Then the
    timed steps of the two libraries interleaved, in alternating order, so that the host's drift
    and noise (the small steps are bound by host work) fall on both alike; median per library."""
    res = {}
    models = {}
    steps = {}
    torch.manual_seed(args.seed)
    models["pyg"] = make_model("pyg")
    models["gsparse"] = make_model("gsparse")
    copy_weights(models["pyg"], models["gsparse"])
    # The untrained twins, for the parity check after the timing (run before it, it would compile
    # gsparse's kernels ahead of the first step this case measures).
    untrained = {lib: copy.deepcopy(m) for lib, m in models.items()}
    libs = ("gsparse", "pyg")
    for lib in libs:
        model = models[lib]
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        steps[lib] = make_step(lib, model, opt)
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        first = first_step(steps[lib], pool[0])
        for i in range(args.warmup):
            steps[lib](pool[i % len(pool)])
        torch.cuda.synchronize()
        res[lib] = {"first_step_s": first, "peak_gb": torch.cuda.max_memory_allocated() / 1e9, "times_ms": []}
    for i in range(args.runs):
        for lib in (libs if i % 2 == 0 else libs[::-1]):
            res[lib]["times_ms"].append(time_step_once(steps[lib], pool[i % len(pool)]))
    res["parity_rel_err"] = check_parity(untrained, make_step, pool[0])
    log(f"    parity: gradients within {res['parity_rel_err']:.1e} of PyG's (relative)")
    for lib in libs:
        res[lib]["median_ms"] = statistics.median(res[lib]["times_ms"])
        log(f"    {lib}: {res[lib]['median_ms']:.3f} ms/step (first {res[lib]['first_step_s']:.3f} s, "
            f"peak {res[lib]['peak_gb']:.2f} GB)")
    return res


def case_record(workload, model, graph, res, build_ms, extra=None):
    rec = {"workload": workload, "model": model, "graph": graph,
           "gsparse_ms": res["gsparse"]["median_ms"], "pyg_ms": res["pyg"]["median_ms"],
           "speedup": res["pyg"]["median_ms"] / res["gsparse"]["median_ms"],
           "build_ms": build_ms, "first_step_s": res["gsparse"]["first_step_s"],
           "first_step_s_pyg": res["pyg"]["first_step_s"],
           "peak_gb_gsparse": res["gsparse"]["peak_gb"], "peak_gb_pyg": res["pyg"]["peak_gb"],
           "parity_rel_err": res.get("parity_rel_err"),
           "times_ms": {k: v["times_ms"] for k, v in res.items() if k in ("gsparse", "pyg")}}
    rec.update(extra or {})
    return rec


def time_build(inputs, runs=20):
    """Median time to build a step's gsparse graphs from its blocks' edge_index tensors (CUDA events)."""
    def build(_):
        for ei, size in inputs:
            gsparse.Graph(ei, num_src=size[0], num_dst=size[1])
    return time_steps(build, [None], 3, runs)[0]


# --- Workloads -------------------------------------------------------------------------------------

def block_cases(name, path, fanout_sets, args, device):
    feat, classes = TWINS[name]
    log(f"loading {name} from {path}")
    g = gsparse.Graph.load(path)
    row_ptr, col_idx, _ = g.csr(device)
    num_nodes = g.num_dst
    gen = torch.Generator(device="cpu").manual_seed(args.seed)
    x_all = torch.randn(num_nodes, feat, generator=gen).to(device)
    y_all = torch.randint(0, classes, (num_nodes,), generator=gen).to(device)
    cases = []
    for fanouts in fanout_sets:
        sampler = NeighborSampler((row_ptr, col_idx), fanouts, seed=args.seed, device=device)
        seeds_all = torch.randperm(num_nodes, generator=gen)[: args.batch * args.pool].to(device)
        # Sampler timing: ours against the plain PyTorch sampler, two warm-up calls each, then
        # SAMPLER_RUNS calls each, interleaved in alternating order, over the pool's seed batches.
        sgen = torch.Generator(device=device).manual_seed(args.seed)
        rp64, ci64 = row_ptr.to(torch.int64), col_idx.to(torch.int64)
        samplers = (("ours", lambda seeds: sampler.sample(seeds)),
                    ("plain", lambda seeds: plain_sampler(rp64, ci64, seeds, fanouts, sgen)))
        t_samp = {"ours": [], "plain": []}
        for i in range(2 + SAMPLER_RUNS):
            seeds = seeds_all[(i % args.pool) * args.batch:(i % args.pool + 1) * args.batch]
            for label, fn in (samplers if i % 2 == 0 else samplers[::-1]):
                torch.cuda.synchronize()
                t = time.perf_counter()
                fn(seeds)
                torch.cuda.synchronize()
                if i >= 2:
                    t_samp[label].append((time.perf_counter() - t) * 1e3)
        t_ours, t_plain = t_samp["ours"], t_samp["plain"]
        pool = block_pool(sampler, seeds_all, x_all, y_all, fanouts, args.pool, args.batch)
        edges = [ei.shape[1] for ei, _ in pool[0]["blocks"]]
        fo = "/".join(str(f) for f in fanouts)
        log(f"  {name} fan-outs {fo}: block edges {edges}, sampler {statistics.median(t_ours):.2f} ms "
            f"(plain PyTorch {statistics.median(t_plain):.2f} ms)")
        build_ms = time_build(pool[0]["blocks"])
        block_build_ms = [time_build([block]) for block in pool[0]["blocks"]]
        log(f"  building the step's graphs: {build_ms:.3f} ms (each block alone: "
            + ", ".join(f"{e} edges {t:.3f} ms" for e, t in zip(edges, block_build_ms)) + ")")
        extra = {"fanouts": fanouts, "batch": args.batch, "block_edges": edges, "block_build_ms": block_build_ms,
                 "sampler_ms": statistics.median(t_ours), "plain_sampler_ms": statistics.median(t_plain)}
        for kind in ("sage", "gat", "gcn"):
            if kind == "gcn":
                def make_model(lib, kind=kind):
                    return GraphNet(kind, lib, feat, args.hidden, classes, len(fanouts), False).to(device)

                make_step = subgraph_step
            else:
                def make_model(lib, kind=kind):
                    return BlockNet(kind, lib, feat, args.hidden, classes, len(fanouts)).to(device)

                make_step = block_step
            log(f"  {kind}")
            try:
                res = run_pair(make_model, make_step, pool, args)
                cases.append(case_record("blocks", kind, name, res, build_ms, dict(extra)))
            except Exception as e:  # noqa: BLE001 - recorded
                log(f"    failed: {type(e).__name__}: {e}")
                cases.append({"workload": "blocks", "model": kind, "graph": name, "error": f"{type(e).__name__}: {e}",
                              **extra})
    del g, row_ptr, col_idx, x_all
    torch.cuda.empty_cache()
    return cases


def molecule_cases(args, device):
    gen = torch.Generator(device="cpu").manual_seed(args.seed)
    pool = molecule_pool(gen, device, args.pool)
    cases = []

    build_ms = time_build([(pool[0]["ei"], (pool[0]["n"], pool[0]["n"]))])
    log(f"  molecules: {pool[0]['n']} nodes, {pool[0]['ei'].shape[1]} edges a batch; build {build_ms:.3f} ms")
    for kind in ("gin", "gcn"):
        def make_model(lib, kind=kind):
            return GraphNet(kind, lib, 32, 128, 10, 3, True).to(device)

        log(f"  {kind}")
        try:
            res = run_pair(make_model, molecule_step, pool, args)
            cases.append(case_record("molecules", kind, "batched-small", res, build_ms,
                                     {"graphs_per_batch": 128}))
        except Exception as e:  # noqa: BLE001
            log(f"    failed: {type(e).__name__}: {e}")
            cases.append({"workload": "molecules", "model": kind, "graph": "batched-small",
                          "error": f"{type(e).__name__}: {e}"})
    return cases


# --- Report ----------------------------------------------------------------------------------------

def write_report(out_dir, meta, cases):
    os.makedirs(out_dir, exist_ok=True)
    slim = [{k: v for k, v in c.items() if k != "times_ms"} for c in cases]
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump({"meta": meta, "cases": slim}, f, indent=1)
    with open(os.path.join(out_dir, "steps.json"), "w") as f:
        json.dump({"meta": meta, "cases": cases}, f)
    lines = [f"# Mini-batch training, gsparse vs PyG ({meta['device']}, {meta['date']})", "",
             "Median step (graph build + forward + loss + backward + Adam), CUDA events; "
             "see benchmarks/minibatch.py. Gradients vs PyG: the largest relative difference of a "
             "parameter's gradient after one step of the untrained twins on the same batch.", "",
             "| workload | model | graph | fan-outs | gsparse ms | PyG ms | speedup | build ms | first step s (gsparse / PyG) | peak GB (gsparse / PyG) | gradients vs PyG |",
             "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for c in slim:
        fo = "/".join(str(f) for f in c.get("fanouts", [])) or "-"
        if "error" in c:
            lines.append(f"| {c['workload']} | {c['model']} | {c['graph']} | {fo} | failed: {c['error'][:80]} | | | | | | |")
            continue
        lines.append(f"| {c['workload']} | {c['model']} | {c['graph']} | {fo} | {c['gsparse_ms']:.3f} | {c['pyg_ms']:.3f} | "
                     f"{c['speedup']:.2f}x | {c['build_ms']:.3f} | {c['first_step_s']:.2f} / {c['first_step_s_pyg']:.2f} | "
                     f"{c['peak_gb_gsparse']:.2f} / {c['peak_gb_pyg']:.2f} | "
                     f"{'-' if c.get('parity_rel_err') is None else format(c['parity_rel_err'], '.1e')} |")
    samp = [c for c in slim if "sampler_ms" in c and c["model"] == "sage"]
    if samp:
        lines += ["", "Building each block's graph alone (validated, from its edge_index), ms:", "",
                  "| graph | fan-outs | block edges | build ms |", "|---|---|---|---|"]
        for c in samp:
            lines.append(f"| {c['graph']} | {'/'.join(map(str, c['fanouts']))} | "
                         f"{' / '.join(map(str, c['block_edges']))} | "
                         f"{' / '.join(f'{t:.3f}' for t in c.get('block_build_ms', []))} |")
        lines += ["", "| graph | fan-outs | gsparse.sampling ms | plain PyTorch sampler ms |", "|---|---|---:|---:|"]
        for c in samp:
            lines.append(f"| {c['graph']} | {'/'.join(map(str, c['fanouts']))} | {c['sampler_ms']:.2f} | "
                         f"{c['plain_sampler_ms']:.2f} |")
    with open(os.path.join(out_dir, "minibatch.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        ok = [c for c in slim if "error" not in c]
        labels = [f"{c['model']}\n{c['graph']}\n{'/'.join(map(str, c.get('fanouts', []))) or 'batch'}" for c in ok]
        xs = range(len(ok))
        fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(ok)), 4))
        ax.bar([x - 0.2 for x in xs], [c["gsparse_ms"] for c in ok], 0.4, label="gsparse")
        ax.bar([x + 0.2 for x in xs], [c["pyg_ms"] for c in ok], 0.4, label="PyG")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(labels, fontsize=7)
        ax.set_ylabel("ms per step (median)")
        ax.set_title(f"Mini-batch training step, {meta['device']}")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "minibatch.png"), dpi=120)
    except Exception as e:  # noqa: BLE001 - the plot is optional where matplotlib is missing
        log(f"no plot: {e}")


def fanout_sets(graph):
    """The fan-outs a twin's blocks are sampled with: 25/10, and 15/10/5 on ogbn-products."""
    return [[25, 10]] + ([[15, 10, 5]] if graph == "ogbn-products" else [])


def add_workload_arguments(ap, warmup=5):
    """The arguments the mini-batch scripts share: graphs, batch, model width, pool, timing, seed."""
    ap.add_argument("--graph", action="append", default=[], help="NAME=PATH of a twin (reddit, ogbn-products)")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--pool", type=int, default=8, help="distinct batches cycled through")
    ap.add_argument("--warmup", type=int, default=warmup)
    ap.add_argument("--seed", type=int, default=0)


def run_meta(script, args):
    """(device, metadata, result folder slug) of a GPU run; exits without CUDA or torch_geometric."""
    if not torch.cuda.is_available():
        sys.exit(f"{script} needs a CUDA device")
    try:
        import torch_geometric
    except ImportError:
        sys.exit(f"{script} needs torch_geometric")
    name = torch.cuda.get_device_name()
    date = dt.date.today().isoformat()
    meta = {"device": name, "date": date, "torch": torch.__version__, "torch_geometric": torch_geometric.__version__,
            "args": vars(args)}
    return torch.device("cuda"), meta, f"{date}-{re.sub(r'[^a-z0-9]+', '-', name.lower()).strip('-')}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_workload_arguments(ap)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--no-molecules", action="store_true")
    ap.add_argument("--out-root", default="benchmarks/results")
    args = ap.parse_args()
    device, meta, slug = run_meta("minibatch.py", args)
    cases = []
    for spec in args.graph:
        gname, path = spec.split("=", 1)
        cases += block_cases(gname, path, fanout_sets(gname), args, device)
    if not args.no_molecules:
        cases += molecule_cases(args, device)
    out_dir = os.path.join(args.out_root, f"{slug}-minibatch")
    write_report(out_dir, meta, cases)
    log(f"wrote {out_dir}")


if __name__ == "__main__":
    main()
