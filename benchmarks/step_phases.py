#!/usr/bin/env python3
"""Host time of a mini-batch training step, phase by phase, gsparse against PyG.

A host-bound step (the GPU idles while Python, autograd and the kernel launches run) is as long as
its host work. This script times that work per phase (graph build, zero_grad, forward, loss,
backward, optimizer step) with the host clock and no synchronisation inside a step, over the same
models, inputs and steps as benchmarks/minibatch.py, and, for comparison, the step's CUDA-event time
as minibatch.py measures it. Libraries interleaved step by step; medians.

    python3 benchmarks/step_phases.py [--graph reddit=PATH] [--steps 60] [--out FILE.json]
"""

import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minibatch as mb  # noqa: E402  (the models and inputs of the mini-batch benchmark)
import gsparse  # noqa: E402
from gsparse.sampling import NeighborSampler  # noqa: E402

PHASES = ("build", "zero_grad", "forward", "loss", "backward", "optimizer")


def phased_step(workload, lib, model, opt):
    """step(item) -> {phase: host seconds}; the same work as minibatch.py's steps."""
    def step(item):
        t = [time.perf_counter()]
        if workload == "molecules":
            if lib.startswith("gsparse"):
                csr = "now" if lib == "gsparse-csr-now" else "auto"
                adj = gsparse.Graph(item["ei"], num_nodes=item["n"], csr=csr)
            else:
                adj = item["ei"]
        else:
            if lib == "gsparse":
                adj = [(gsparse.Graph.from_csr(rp, ci, num_src=s[0], dynamic=True, validate=False, max_degree=f), s)
                       for rp, ci, s, f in item["csrs"]]
            else:
                adj = item["blocks"]
        t.append(time.perf_counter())
        opt.zero_grad(set_to_none=True)
        t.append(time.perf_counter())
        if workload == "molecules":
            out = model(item["x"], adj, item["batch"], 128)
        else:
            out = model(item["x"], adj)
        t.append(time.perf_counter())
        loss = F.cross_entropy(out, item["y"])
        t.append(time.perf_counter())
        loss.backward()
        t.append(time.perf_counter())
        opt.step()
        t.append(time.perf_counter())
        return {p: t[i + 1] - t[i] for i, p in enumerate(PHASES)}
    return step


def measure(workload, make_model, pool, args, variants=()):
    """variants: further gsparse forms timed beside gsparse and PyG (gsparse-csr-now: molecule
    graphs that make their CSR at once)."""
    torch.manual_seed(args.seed)
    models = {"pyg": make_model("pyg")}
    for lib in ("gsparse",) + tuple(variants):
        models[lib] = make_model("gsparse")
        mb.copy_weights(models["pyg"], models[lib])
    steps = {}
    for lib, m in models.items():
        opt = torch.optim.Adam(m.parameters(), lr=0.01)
        steps[lib] = phased_step(workload, lib, m, opt)
        for i in range(args.warmup):
            steps[lib](pool[i % len(pool)])
    torch.cuda.synchronize()
    host = {lib: {p: [] for p in PHASES + ("total",)} for lib in steps}
    event = {lib: [] for lib in steps}
    # Host time: steps back to back, no synchronisation (the GPU runs behind the host).
    for i in range(args.steps):
        order = list(steps) if i % 2 == 0 else list(steps)[::-1]
        for lib in order:
            ph = steps[lib](pool[i % len(pool)])
            for p, s in ph.items():
                host[lib][p].append(s * 1e3)
            host[lib]["total"].append(sum(ph.values()) * 1e3)
    torch.cuda.synchronize()
    # Step time as minibatch.py measures it: events around one step on an idle device.
    for i in range(args.steps):
        order = list(steps) if i % 2 == 0 else list(steps)[::-1]
        for lib in order:
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            a.record()
            steps[lib](pool[i % len(pool)])
            b.record()
            b.synchronize()
            event[lib].append(a.elapsed_time(b))
    res = {}
    for lib in steps:
        res[lib] = {p: statistics.median(v) for p, v in host[lib].items()}
        res[lib]["event_step"] = statistics.median(event[lib])
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mb.add_workload_arguments(ap)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--out")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("step_phases.py needs a CUDA device")
    device = torch.device("cuda")
    results = []
    gen = torch.Generator(device="cpu").manual_seed(args.seed)
    pool = mb.molecule_pool(gen, device, args.pool)
    for kind in ("gin", "gcn"):
        r = measure("molecules", lambda lib, kind=kind: mb.GraphNet(kind, lib, 32, 128, 10, 3, True).to(device),
                    pool, args, variants=("gsparse-csr-now",))
        results.append({"workload": "molecules", "model": kind, **r})
    for spec in args.graph:
        name, path = spec.split("=", 1)
        feat, classes = mb.TWINS[name]
        g = gsparse.Graph.load(path)
        row_ptr, col_idx, _ = g.csr(device)
        n = g.num_dst
        x_all = torch.randn(n, feat, generator=gen).to(device)
        y_all = torch.randint(0, classes, (n,), generator=gen).to(device)
        fanouts = [25, 10]
        sampler = NeighborSampler((row_ptr, col_idx), fanouts, seed=args.seed, device=device)
        seeds_all = torch.randperm(n, generator=gen)[: args.batch * args.pool].to(device)
        bpool = mb.block_pool(sampler, seeds_all, x_all, y_all, fanouts, args.pool, args.batch)
        for kind in ("sage", "gat"):
            r = measure("blocks", lambda lib, kind=kind: mb.BlockNet(kind, lib, feat, args.hidden, classes, 2).to(device),
                        bpool, args)
            results.append({"workload": "blocks", "model": kind, "graph": name, **r})
    print(f"{'case':<22} {'lib':<16} " + " ".join(f"{p:>9}" for p in PHASES + ("total", "event_step")))
    for r in results:
        label = f"{r['workload']}/{r['model']}"
        for lib in [k for k in r if k not in ("workload", "model", "graph")]:
            print(f"{label:<22} {lib:<16} " + " ".join(f"{r[lib][p]:9.3f}" for p in PHASES + ("total", "event_step")))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d"),
                       "unit": "ms", "cases": results}, f, indent=1)


if __name__ == "__main__":
    main()
