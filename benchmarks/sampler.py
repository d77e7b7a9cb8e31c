#!/usr/bin/env python3
"""gsparse.sampling.NeighborSampler against the plain PyTorch sampler of benchmarks/minibatch.py
(random keys, one sort per layer, torch.unique), on the same seeds: host wall time of one sampled
batch with a synchronisation before and after, 3 warm-up batches, median of --runs; both without
replacement; and gsparse's sampler with its random-keys path off (every layer by Floyd's
algorithm), for comparison.

    python3 benchmarks/sampler.py --graph reddit=PATH --graph ogbn-products=PATH [--out DIR]
"""

import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minibatch as mb  # noqa: E402

import gsparse  # noqa: E402
from gsparse import sampling  # noqa: E402
from gsparse.sampling import NeighborSampler  # noqa: E402


def timed(fn):
    torch.cuda.synchronize()
    t = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--graph", action="append", default=[], help="NAME=PATH")
    ap.add_argument("--fanouts", action="append", default=None, help="e.g. 25,10 (repeatable)")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="folder for sampler.json and sampler.md")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("sampler.py needs a CUDA device")
    fanout_sets = [[int(f) for f in s.split(",")] for s in (args.fanouts or ["25,10", "15,10,5"])]
    device = torch.device("cuda")
    rows = []
    for spec in args.graph:
        name, path = spec.split("=", 1)
        g = gsparse.Graph.load(path)
        row_ptr, col_idx, _ = g.csr(device)
        rp64, ci64 = row_ptr.to(torch.int64), col_idx.to(torch.int64)
        gen = torch.Generator(device="cpu").manual_seed(args.seed)
        for fanouts in fanout_sets:
            sampler = NeighborSampler((row_ptr, col_idx), fanouts, seed=args.seed, device=device)
            sgen = torch.Generator(device=device).manual_seed(args.seed)
            n = args.runs + 3
            seeds_all = torch.randperm(g.num_dst, generator=gen)[: args.batch * n].to(device)
            ours, plain, floyd = [], [], []
            keys = sampling.KEY_CANDIDATES_PER_PICK
            for i in range(n):
                seeds = seeds_all[i * args.batch:(i + 1) * args.batch]
                a = timed(lambda: sampler.sample(seeds))
                b = timed(lambda: mb.plain_sampler(rp64, ci64, seeds, fanouts, sgen))
                sampling.KEY_CANDIDATES_PER_PICK = 0
                c = timed(lambda: sampler.sample(seeds))
                sampling.KEY_CANDIDATES_PER_PICK = keys
                if i >= 3:
                    ours.append(a)
                    plain.append(b)
                    floyd.append(c)
            batch = sampler.sample(seeds_all[: args.batch])
            row = {"graph": name, "fanouts": fanouts, "batch": args.batch, "gsparse_ms": statistics.median(ours),
                   "plain_ms": statistics.median(plain), "floyd_only_ms": statistics.median(floyd),
                   "block_edges": [b.num_edges for b in batch.blocks]}
            rows.append(row)
            print(f"{name} {'/'.join(map(str, fanouts))}: gsparse {row['gsparse_ms']:.2f} ms, plain PyTorch "
                  f"{row['plain_ms']:.2f} ms, gsparse Floyd only {row['floyd_only_ms']:.2f} ms, "
                  f"block edges {row['block_edges']}", flush=True)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        meta = {"device": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d"),
                "torch": torch.__version__, "runs": args.runs}
        with open(os.path.join(args.out, "sampler.json"), "w") as f:
            json.dump({"meta": meta, "cases": rows}, f, indent=1)
        with open(os.path.join(args.out, "sampler.md"), "w") as f:
            f.write(f"# Neighbour sampling, gsparse vs a plain PyTorch sampler ({meta['device']}, {meta['date']})\n\n")
            f.write("| graph | fan-outs | gsparse ms | plain PyTorch ms | speed-up | gsparse, Floyd only ms |\n"
                    "|---|---|---:|---:|---:|---:|\n")
            for r in rows:
                f.write(f"| {r['graph']} | {'/'.join(map(str, r['fanouts']))} | {r['gsparse_ms']:.2f} | "
                        f"{r['plain_ms']:.2f} | {r['plain_ms'] / r['gsparse_ms']:.2f}x | {r['floyd_only_ms']:.2f} |\n")


if __name__ == "__main__":
    main()
