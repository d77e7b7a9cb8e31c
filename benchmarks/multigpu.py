#!/usr/bin/env python3
"""Several GPUs: data-parallel mini-batch GraphSAGE and partitioned full-graph GCN, 1 GPU against
N GPUs (gsparse.distributed on PyTorch Distributed, NCCL; gloo on the CPU with --device cpu).

Cases (each run once per world size in --worlds, default 1 and 2, by spawning one process per GPU):
  minibatch    GraphSAGE (mean, hidden 256, 3 layers, fan-outs 15/10/5), batch 1,024 seeds per GPU,
               on the shuffled ogbn-products twin; each rank samples its own blocks on its GPU
               (gsparse.distributed.DistributedNeighborLoader: disjoint seed shards, a sampler
               seeded per rank), the model under DistributedDataParallel; every rank holds the whole
               graph and feature matrix. Measured: seeds per second over all GPUs (sampling, feature
               gather, forward, backward, DDP's all-reduce and the Adam step), timed over --steps
               steps after --warmup, the median of --repeats runs.
  partitioned  2-layer GCN (hidden 256), full graph: with 1 GPU the faster of gsparse.nn.GCNConv on
               the whole graph and DistGCNConv on a 1-rank partition (both recorded); with N GPUs the graph split by destination rows (balanced by nonzeros), each
               rank holding its rows' features, DistGCNConv exchanging halo rows with all-to-alls,
               gradients summed with allreduce_gradients. Measured: the median epoch (forward, loss,
               backward, all-reduce, Adam) over --epochs after --warmup-epochs; the first epoch's
               loss of every world size (equal up to float rounding: the partitioned forward is
               exact); halo rows and bytes exchanged. Run on the shuffled twin and, with
               --community-graph, on the twin in community order (contiguous ranges cut few edges).
  large        the partitioned GCN on a feature matrix too large for one GPU (input features chosen
               so that the matrix alone is 1.1x one GPU's memory, --large-feat overrides): 1 GPU is
               expected to run out of memory (recorded as such), N GPUs hold half each and train.

Writes summary.json and multigpu.md to <out-root>/<date>-<device>-multigpu/ (device: the GPU's name,
or "cpu" with --device cpu). --device cpu runs every case with gloo on CPU processes (for checking
the script on a tiny graph; its numbers mean nothing).
"""

import argparse
import datetime as dt
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time
import traceback

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

import gsparse
import gsparse.distributed as gd

FEAT, CLASSES = 100, 47          # ogbn-products
TRAIN_FRACTION = 0.08            # ogbn-products: 196,615 of 2,449,029 nodes
TARGETS = {"minibatch": 1.8, "partitioned": 1.6}
OutOfMemory = getattr(torch.cuda, "OutOfMemoryError", RuntimeError)   # torch.cuda.OutOfMemoryError: torch >= 1.13


def log(*a):
    print(*a, flush=True)


# --- Per-rank setup --------------------------------------------------------------------------------

def setup(rank, world, cfg):
    device = torch.device(cfg["device"])
    if device.type == "cuda":
        torch.cuda.set_device(rank)
        device = torch.device("cuda", rank)
        backend = "nccl"
    else:
        torch.set_num_threads(max(1, cfg["cpu_threads"] // world))
        backend = "gloo"
    dist.init_process_group(backend, init_method="file://" + cfg["rendezvous"], rank=rank, world_size=world,
                            timeout=dt.timedelta(seconds=cfg["timeout_s"]))
    return device


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        dist.barrier(device_ids=[device.index])
    else:
        dist.barrier()


def peak_gb(device):
    return torch.cuda.max_memory_allocated(device) / 1e9 if device.type == "cuda" else None


def features(n, feat, seed=0):
    """The same random feature matrix and labels on every rank (CPU generator)."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(n, feat, generator=gen), torch.randint(0, CLASSES, (n,), generator=gen)


def train_nodes(n, seed=0):
    gen = torch.Generator().manual_seed(seed + 1)
    return torch.randperm(n, generator=gen)[: max(1, int(n * TRAIN_FRACTION))]


# --- Mini-batch GraphSAGE, data-parallel -----------------------------------------------------------

class SAGE(torch.nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.convs = torch.nn.ModuleList(gsparse.nn.SAGEConv(a, b) for a, b in zip(dims[:-1], dims[1:]))

    def forward(self, x, blocks):
        for i, (conv, block) in enumerate(zip(self.convs, blocks)):
            x = conv((x, x[:block.num_dst]), block)
            if i < len(self.convs) - 1:
                x = F.relu(x)
        return x


def run_minibatch(rank, world, cfg, device):
    g = gsparse.Graph.load(cfg["graph"])
    row_ptr, col_idx, _ = g.csr(device)
    n = g.num_dst
    x_all, y_all = features(n, FEAT)
    x_all, y_all = x_all.to(device), y_all.to(device)
    train = train_nodes(n)
    fanouts = cfg["fanouts"]
    torch.manual_seed(0)
    model = SAGE([FEAT] + [cfg["hidden"]] * (len(fanouts) - 1) + [CLASSES]).to(device)
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank] if device.type == "cuda" else None)
    opt = torch.optim.Adam(ddp.parameters(), lr=0.003)
    loader = gd.DistributedNeighborLoader((row_ptr, col_idx), fanouts, cfg["batch"], rank, world, input_nodes=train,
                                          seed=0, device=device, drop_last=True)
    if len(loader) == 0:
        raise RuntimeError(f"{train.numel()} training nodes are too few for batch {cfg['batch']} on {world} ranks")

    def batches():
        epoch = 0
        while True:
            loader.set_epoch(epoch)
            yield from loader
            epoch += 1

    it = batches()

    def step():
        batch = next(it)
        opt.zero_grad(set_to_none=True)
        out = ddp(x_all[batch.input_nodes], batch.blocks)
        loss = F.cross_entropy(out, y_all[batch.seeds])
        loss.backward()
        opt.step()
        return loss

    sync(device)
    t = time.perf_counter()
    step()
    sync(device)
    first_s = time.perf_counter() - t
    for _ in range(cfg["warmup"]):
        step()
    runs = []
    for _ in range(cfg["repeats"]):
        sync(device)
        t = time.perf_counter()
        for _ in range(cfg["steps"]):
            loss = step()
        sync(device)
        runs.append(time.perf_counter() - t)
    sec = statistics.median(runs)
    return {"seeds_per_s": world * cfg["batch"] * cfg["steps"] / sec, "step_ms": sec / cfg["steps"] * 1e3,
            "runs_s": runs, "first_step_s": first_s, "last_loss": loss.item(), "batch_per_gpu": cfg["batch"],
            "fanouts": fanouts, "train_nodes": int(train.numel()), "steps_per_epoch": len(loader),
            "peak_gb": peak_gb(device)}


# --- Full-graph GCN, partitioned -------------------------------------------------------------------

class GCN(torch.nn.Module):
    def __init__(self, conv, dims):
        super().__init__()
        self.convs = torch.nn.ModuleList(conv(a, b) for a, b in zip(dims[:-1], dims[1:]))

    def forward(self, x, g):
        for i, conv in enumerate(self.convs):
            x = conv(x, g)
            if i < len(self.convs) - 1:
                x = F.relu(x)
        return x


def run_partitioned(rank, world, cfg, device, graph_path, feat, local_features_only=False):
    """With 1 GPU: the plain gsparse.nn.GCNConv model on the whole graph, then the same DistGCNConv
    model as with N GPUs on a 1-rank partition (same code, empty halo); the faster is the baseline."""
    g = gsparse.Graph.load(graph_path)
    n = g.num_dst
    train = torch.zeros(n, dtype=torch.bool)
    train[train_nodes(n)] = True
    n_train = int(train.sum())
    info = {"graph": os.path.basename(graph_path), "nodes": n, "edges": g.num_edges, "feat": feat}
    t = time.perf_counter()
    dg = gd.DistGraph.from_global(g, node_weight=cfg["node_weight"])
    nodes = dg.nodes
    info.update(partition_s=time.perf_counter() - t, bounds=dg.bounds.tolist())
    halo = torch.tensor([dg.num_halo, dg.plan.num_send, dg.part.num_edges], device=gd.comm_device())
    every = [torch.zeros_like(halo) for _ in range(world)]
    dist.all_gather(every, halo)
    info["halo_rows"] = [int(h[0]) for h in every]
    info["local_edges"] = [int(h[2]) for h in every]
    info["exchanged_rows"] = int(sum(int(h[1]) for h in every))  # per exchange, each direction
    if world > 1:
        del g
    try:
        if local_features_only:
            # Only this rank's rows are ever made (on the device): the whole matrix need not fit anywhere.
            gen = torch.Generator(device=device).manual_seed(1000 + rank)
            x = torch.randn(nodes.numel(), feat, generator=gen, device=device)
            y = torch.randint(0, CLASSES, (nodes.numel(),), generator=gen, device=device)
        else:
            x_all, y_all = features(n, feat)
            x, y = x_all[nodes].to(device), y_all[nodes].to(device)
            del x_all, y_all
    except OutOfMemory as e:
        return {**info, "error": f"out of memory: {str(e).splitlines()[0]}", "oom": True}
    mask = train[nodes].to(device)
    dims = [feat] + [cfg["hidden"]] * (cfg["layers"] - 1) + [CLASSES]

    def train_model(conv, graph):
        torch.manual_seed(0)
        model = GCN(conv, dims).to(device)
        opt = torch.optim.Adam(model.parameters(), lr=0.01)

        def epoch():
            opt.zero_grad(set_to_none=True)
            out = model(x, graph)
            loss = F.cross_entropy(out[mask], y[mask], reduction="sum") / n_train
            loss.backward()
            if world > 1:
                gd.allreduce_gradients(model)
            opt.step()
            total = loss.detach().clone()
            if world > 1:
                dist.all_reduce(total)
            return float(total)

        try:
            sync(device)
            t = time.perf_counter()
            first_loss = epoch()
            sync(device)
            first_s = time.perf_counter() - t
            for _ in range(cfg["warmup_epochs"]):
                epoch()
            times = []
            for _ in range(cfg["epochs"]):
                sync(device)
                t = time.perf_counter()
                epoch()
                sync(device)
                times.append(time.perf_counter() - t)
        except OutOfMemory as e:
            return {"error": f"out of memory: {str(e).splitlines()[0]}", "oom": True, "peak_gb": peak_gb(device)}
        med = statistics.median(times)
        return {"epoch_ms": med * 1e3, "epoch_times_ms": [t * 1e3 for t in times], "first_epoch_s": first_s,
                "first_loss": first_loss, "peak_gb": peak_gb(device)}

    if world > 1:
        r = train_model(gd.DistGCNConv, dg)
        return {**info, **r, "model": "DistGCNConv"}
    plain = train_model(gsparse.nn.GCNConv, g)
    del g
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    one = train_model(gd.DistGCNConv, dg)
    best = min((r for r in (plain, one) if "epoch_ms" in r), key=lambda r: r["epoch_ms"], default=plain)
    return {**info, **best, "model": "GCNConv" if best is plain else "DistGCNConv (1 rank)",
            "plain_gcnconv": plain, "dist_one_rank": one}


# --- Spawning ---------------------------------------------------------------------------------------

def worker(rank, world, cfg, case, out_path):
    result = None
    try:
        device = setup(rank, world, cfg)
        if case == "minibatch":
            result = run_minibatch(rank, world, cfg, device)
        elif case == "partitioned":
            result = run_partitioned(rank, world, cfg, device, cfg["graph"], FEAT)
        elif case == "partitioned-community":
            result = run_partitioned(rank, world, cfg, device, cfg["community_graph"], FEAT)
        elif case == "large":
            result = run_partitioned(rank, world, cfg, device, cfg["graph"], cfg["large_feat"], local_features_only=True)
        else:
            raise ValueError(case)
    except Exception as e:  # noqa: BLE001 - recorded in the summary
        result = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
        log(f"[{case}, world {world}, rank {rank}] {result['traceback']}")
    finally:
        if rank == 0:
            with open(out_path, "w") as f:
                json.dump(result, f)
        if dist.is_initialized():
            dist.destroy_process_group()


def run_case(case, world, cfg):
    folder = tempfile.mkdtemp(prefix="gsparse-multigpu-")
    cfg = dict(cfg, rendezvous=os.path.join(folder, "rendezvous"))
    out_path = os.path.join(folder, "result.json")
    t = time.perf_counter()
    try:
        mp.spawn(worker, args=(world, cfg, case, out_path), nprocs=world, join=True)
    except Exception as e:  # noqa: BLE001 - a rank died (the result file may still say why)
        log(f"  {case} on {world}: {type(e).__name__}: {e}")
    result = json.load(open(out_path)) if os.path.exists(out_path) else {"error": "rank 0 wrote no result"}
    result.update(case=case, world=world, wall_s=time.perf_counter() - t)
    return result


# --- Report -----------------------------------------------------------------------------------------

def speedups(results, worlds):
    base = min(worlds)
    out = []
    for case, key, better in (("minibatch", "seeds_per_s", "higher"), ("partitioned", "epoch_ms", "lower"),
                              ("partitioned-community", "epoch_ms", "lower")):
        by_world = {r["world"]: r for r in results if r["case"] == case and key in r}
        if base not in by_world:
            continue
        for w in worlds:
            if w == base or w not in by_world:
                continue
            a, b = by_world[base][key], by_world[w][key]
            s = b / a if better == "higher" else a / b
            target = TARGETS.get(case.split("-")[0]) if (w, base) == (2, 1) else None
            out.append({"case": case, "worlds": [base, w], "speedup": s, "target": target,
                        "met": (s >= target) if target else None})
    return out


def write_report(out_dir, meta, results, summary):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump({"meta": meta, "speedups": summary, "results": results}, f, indent=1)
    lines = [f"# Several GPUs: {meta['device']} x {max(meta['worlds'])}, {meta['date']}", "",
             f"torch {meta['torch']}, backend {meta['backend']}; graph `{meta['graph']}`"
             + (f", community order `{meta['community_graph']}`" if meta.get("community_graph") else ""), "",
             "| case | GPUs | result | first step / epoch s | peak GB (rank 0) | notes |", "|---|---|---|---|---|---|"]
    for r in results:
        peak = f"{r['peak_gb']:.1f}" if r.get("peak_gb") is not None else ""
        if "error" in r:
            lines.append(f"| {r['case']} | {r['world']} | {'out of memory' if r.get('oom') else 'failed'} | | {peak} | "
                         f"{r['error'][:100]} |")
        elif r["case"] == "minibatch":
            lines.append(f"| minibatch GraphSAGE | {r['world']} | {r['seeds_per_s']:,.0f} seeds/s "
                         f"({r['step_ms']:.2f} ms a step) | {r['first_step_s']:.2f} | {peak} | "
                         f"batch {r['batch_per_gpu']}/GPU, fan-outs {'/'.join(map(str, r['fanouts']))} |")
        else:
            notes = f"{r['model']}, F={r['feat']}, loss(epoch 1) {r['first_loss']:.6f}"
            if r["world"] == 1 and "epoch_ms" in r.get("plain_gcnconv", {}) and "epoch_ms" in r.get("dist_one_rank", {}):
                notes += (f", GCNConv {r['plain_gcnconv']['epoch_ms']:.1f} ms / DistGCNConv on 1 rank "
                          f"{r['dist_one_rank']['epoch_ms']:.1f} ms")
            if "halo_rows" in r:
                notes += f", halo rows {r['halo_rows']}"
            lines.append(f"| {r['case']} GCN | {r['world']} | {r['epoch_ms']:.1f} ms an epoch | "
                         f"{r['first_epoch_s']:.2f} | {peak} | {notes} |")
    lines += ["", "| case | GPUs | speedup | target | met |", "|---|---|---|---|---|"]
    for s in summary:
        lines.append(f"| {s['case']} | {s['worlds'][1]} vs {s['worlds'][0]} | {s['speedup']:.2f}x | "
                     f"{s['target'] or ''} | {'' if s['met'] is None else ('yes' if s['met'] else 'no')} |")
    with open(os.path.join(out_dir, "multigpu.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--graph", required=True, help="the ogbn-products twin (.gcsr, shuffled ids)")
    ap.add_argument("--community-graph", help="the same twin in community order (partitioned case only)")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"], help="cpu: gloo on CPU processes")
    ap.add_argument("--worlds", default="1,2", help="world sizes to run, comma-separated")
    ap.add_argument("--cases", default="minibatch,partitioned,large")
    ap.add_argument("--batch", type=int, default=1024, help="seeds per GPU and step")
    ap.add_argument("--fanouts", default="15,10,5")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=2, help="GCN layers")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--warmup-epochs", type=int, default=3)
    ap.add_argument("--node-weight", type=float, default=1.0, help="partition cost of a row besides its in-edges")
    ap.add_argument("--large-feat", type=int, default=0, help="input features of the large case (0: 1.1x one GPU)")
    ap.add_argument("--timeout-s", type=int, default=600)
    ap.add_argument("--out-root", default="benchmarks/results")
    args = ap.parse_args()

    worlds = [int(w) for w in args.worlds.split(",")]
    cases = [c for c in args.cases.split(",") if c]
    if args.community_graph and "partitioned" in cases:
        cases.insert(cases.index("partitioned") + 1, "partitioned-community")
    if args.device == "cuda":
        if not torch.cuda.is_available():
            sys.exit("multigpu.py: no CUDA device (use --device cpu to check the script with gloo)")
        if torch.cuda.device_count() < max(worlds):
            sys.exit(f"multigpu.py: {max(worlds)} GPUs asked, {torch.cuda.device_count()} visible")
        name = torch.cuda.get_device_name(0)
        gpu_bytes = torch.cuda.get_device_properties(0).total_memory
    else:
        name = "cpu"
        gpu_bytes = 2 << 30   # the large case's notional device size on the CPU
    header = gsparse.Graph.load(args.graph)
    n = header.num_dst
    del header
    large_feat = args.large_feat or int(math.ceil(1.1 * gpu_bytes / (n * 4) / 64) * 64)
    cfg = {"device": args.device, "graph": os.path.abspath(args.graph),
           "community_graph": os.path.abspath(args.community_graph) if args.community_graph else None,
           "batch": args.batch, "fanouts": [int(f) for f in args.fanouts.split(",")], "hidden": args.hidden,
           "layers": args.layers, "steps": args.steps, "warmup": args.warmup, "repeats": args.repeats,
           "epochs": args.epochs, "warmup_epochs": args.warmup_epochs, "node_weight": args.node_weight,
           "large_feat": large_feat, "timeout_s": args.timeout_s, "cpu_threads": os.cpu_count() or 1}
    date = dt.date.today().isoformat()
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    meta = {"device": name, "date": date, "torch": torch.__version__, "worlds": worlds, "cases": cases,
            "backend": "nccl" if args.device == "cuda" else "gloo", "graph": args.graph,
            "community_graph": args.community_graph, "nodes": n, "args": vars(args), "large_feat": large_feat,
            "kernel_cache": gsparse.kernel_cache_dir()}
    results = []
    for case in cases:
        for world in worlds:
            if case == "large" and args.device == "cuda" and world == 1 and n * large_feat * 4 > gpu_bytes:
                log(f"{case} on 1: the feature matrix alone ({n * large_feat * 4 / 1e9:.0f} GB) exceeds the GPU; "
                    "trying anyway (expected: out of memory)")
            log(f"{case} on {world} {('GPU' if args.device == 'cuda' else 'process') + ('s' if world > 1 else '')}"
                .replace("processs", "processes"))
            r = run_case(case, world, cfg)
            log("  " + json.dumps({k: v for k, v in r.items() if k not in ("traceback", "runs_s", "epoch_times_ms")}))
            results.append(r)
    summary = speedups(results, worlds)
    out_dir = os.path.join(args.out_root, f"{date}-{slug}-multigpu")
    write_report(out_dir, meta, results, summary)
    for s in summary:
        log(f"{s['case']}: {s['speedup']:.2f}x on {s['worlds'][1]} against {s['worlds'][0]}"
            + (f" (target {s['target']}x: {'met' if s['met'] else 'not met'})" if s["target"] else ""))
    log(f"wrote {out_dir}")


if __name__ == "__main__":
    main()
