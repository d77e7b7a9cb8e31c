#!/usr/bin/env python3
"""Where a mini-batch training step spends its time: torch.profiler over the steps of
benchmarks/minibatch.py (the same models, inputs and step functions), for gsparse and PyG.

    python3 benchmarks/profile_minibatch.py --graph reddit=PATH [--models sage,gat,gcn] [--out DIR]
    python3 benchmarks/profile_minibatch.py --graph molecules=- --models gin,gcn [--captured]

Per model and library it writes <out>/<graph>-<model>-<lib>.txt: the operators by GPU time and
by host (self CPU) time over --steps profiled steps after --warmup steps, and the step's wall
time with and without a synchronisation per step. With --captured (blocks of sage / gat, molecule
batches), the steps of benchmarks/minibatch_capture.py instead: each library's step captured as a
CUDA graph over fixed buffers, profiled over replays (the batch loaded into the buffers before
each): the kernels inside the graphs, their count and GPU time. Diagnostics only; the benchmark of
record is minibatch.py.
"""

import argparse
import os
import statistics
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minibatch as mb  # noqa: E402
import minibatch_capture as mc  # noqa: E402

import gsparse  # noqa: E402
from gsparse.capture import BlockBuffers, CapturedStep  # noqa: E402
from gsparse.sampling import NeighborSampler  # noqa: E402


def wall_ms(step, pool, steps, sync_each):
    """Median host wall time per step (sync_each: a synchronisation after every step), and the
    pipelined mean (one synchronisation after all steps)."""
    torch.cuda.synchronize()
    times = []
    t0 = time.perf_counter()
    for i in range(steps):
        t = time.perf_counter()
        step(pool[i % len(pool)])
        if sync_each:
            torch.cuda.synchronize()
        times.append((time.perf_counter() - t) * 1e3)
    torch.cuda.synchronize()
    return statistics.median(times), (time.perf_counter() - t0) * 1e3 / steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--graph", required=True, help="NAME=PATH of a twin (reddit, ogbn-products)")
    ap.add_argument("--models", default="sage,gat,gcn")
    ap.add_argument("--fanouts", default="25,10")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--pool", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="profile")
    ap.add_argument("--captured", action="store_true",
                    help="profile captured steps (CUDA graphs; block models and molecules)")
    ap.add_argument("--stack", action="store_true",
                    help="also the operators by host time grouped by their Python call sites (slower profile)")
    args = ap.parse_args()
    device = torch.device("cuda")
    name, path = args.graph.split("=", 1)
    os.makedirs(args.out, exist_ok=True)
    if name == "molecules":
        profile_molecules(args, device)
        return
    feat, classes = mb.TWINS[name]
    fanouts = [int(f) for f in args.fanouts.split(",")]
    g = gsparse.Graph.load(path)
    row_ptr, col_idx, _ = g.csr(device)
    gen = torch.Generator(device="cpu").manual_seed(args.seed)
    x_all = torch.randn(g.num_dst, feat, generator=gen).to(device)
    y_all = torch.randint(0, classes, (g.num_dst,), generator=gen).to(device)
    sampler = NeighborSampler((row_ptr, col_idx), fanouts, seed=args.seed, device=device)
    seeds_all = torch.randperm(g.num_dst, generator=gen)[: args.batch * args.pool].to(device)
    pool = mb.block_pool(sampler, seeds_all, x_all, y_all, fanouts, args.pool, args.batch)

    for kind in args.models.split(","):
        torch.manual_seed(args.seed)
        models = {}
        for lib in ("pyg", "gsparse"):
            if kind == "gcn":
                models[lib] = mb.GraphNet(kind, lib, feat, args.hidden, classes, len(fanouts), False).to(device)
            else:
                models[lib] = mb.BlockNet(kind, lib, feat, args.hidden, classes, len(fanouts)).to(device)
        mb.copy_weights(models["pyg"], models["gsparse"])
        for lib in ("gsparse", "pyg"):
            model = models[lib]
            if args.captured and kind != "gcn":
                opt = torch.optim.Adam(model.parameters(), lr=0.01, capturable=True)
                buffers = BlockBuffers(args.batch, fanouts, device, num_features=feat, num_nodes=g.num_dst)
                replay = captured_replay(mc.captured_block_step(lib, model, opt, buffers),
                                         lambda item, buffers=buffers: mc.load_blocks(buffers, item), pool, args,
                                         f"{name}-{kind}-{lib}")
                if replay is not None:
                    profile_step(replay, pool, args, f"{name}-{kind}-{lib}-captured")
                continue
            opt = torch.optim.Adam(model.parameters(), lr=0.01)
            step = (mb.subgraph_step if kind == "gcn" else mb.block_step)(lib, model, opt)
            profile_step(step, pool, args, f"{name}-{kind}-{lib}")


def captured_replay(step, load, pool, args, label):
    """A step over fixed buffers captured on the pool's first batch, as replay(item): load(item) and
    replay; None (reported) when it cannot be captured (a host synchronisation inside)."""
    load(pool[0])
    try:
        captured = CapturedStep(step, warmup=args.warmup)
    except Exception as e:  # noqa: BLE001 - reported: PyG's GAT and GCN layers cannot be captured
        print(f"{label}: not captured: {type(e).__name__}: {str(e).splitlines()[0][:120]}", flush=True)
        torch.cuda.synchronize()
        return None

    def replay(item):
        load(item)
        captured()
    return replay


def profile_step(step, pool, args, label):
    """Wall times of step, then torch.profiler's tables over args.steps steps into <out>/<label>.txt."""
    for i in range(args.warmup):
        step(pool[i % len(pool)])
    sync_ms, piped_ms = wall_ms(step, pool, 20, True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], with_stack=args.stack,
                 record_shapes=args.stack) as prof:
        for i in range(args.steps):
            step(pool[i % len(pool)])
        torch.cuda.synchronize()
    ka = prof.key_averages()
    kernels = [e for e in ka if str(getattr(e, "device_type", "")).endswith("CUDA")]
    gpu_us = sum(getattr(e, "self_device_time_total", getattr(e, "self_cuda_time_total", 0)) for e in kernels)
    report = [f"{label}: wall {sync_ms:.3f} ms/step synchronised, {piped_ms:.3f} ms/step pipelined; "
              f"{args.steps} profiled steps; per step {sum(e.count for e in kernels) / args.steps:.1f} "
              f"GPU operations (kernels, copies, fills), {gpu_us / 1e3 / args.steps:.3f} ms of GPU time", "",
              ka.table(sort_by="cuda_time_total", row_limit=30, max_name_column_width=60), "",
              ka.table(sort_by="self_cpu_time_total", row_limit=40, max_name_column_width=60)]
    if args.stack:
        report += ["", "By call site (5 frames):", "",
                   prof.key_averages(group_by_stack_n=5).table(sort_by="self_cpu_time_total", row_limit=25,
                                                               max_name_column_width=40, max_src_column_width=120),
                   "", "By input shape:", "",
                   prof.key_averages(group_by_input_shape=True).table(sort_by="self_cpu_time_total", row_limit=25,
                                                                      max_name_column_width=40, max_shapes_column_width=80)]
    with open(os.path.join(args.out, f"{label}.txt"), "w") as f:
        f.write("\n".join(report) + "\n")
    print(report[0], flush=True)


def profile_molecules(args, device):
    """GIN and GCN with readout on batches of small graphs (--graph molecules=-), eager or captured."""
    pool = mb.molecule_pool(torch.Generator(device="cpu").manual_seed(args.seed), device, args.pool)
    buffers = mc.molecule_buffers(device)
    for kind in args.models.split(","):
        torch.manual_seed(args.seed)
        models = {lib: mb.GraphNet(kind, lib, 32, 128, 10, 3, True).to(device) for lib in ("pyg", "gsparse")}
        mb.copy_weights(models["pyg"], models["gsparse"])
        for lib in ("gsparse", "pyg"):
            if not args.captured:
                opt = torch.optim.Adam(models[lib].parameters(), lr=0.01)
                profile_step(mb.molecule_step(lib, models[lib], opt), pool, args, f"molecules-{kind}-{lib}")
                continue
            opt = torch.optim.Adam(models[lib].parameters(), lr=0.01, capturable=True)
            replay = captured_replay(mc.captured_molecule_step(lib, models[lib], opt, buffers),
                                     lambda item: mc.load_molecules(buffers, item), pool, args, f"molecules-{kind}-{lib}")
            if replay is not None:
                profile_step(replay, pool, args, f"molecules-{kind}-{lib}-captured")


if __name__ == "__main__":
    main()
