#!/usr/bin/env python3
"""PyTorch baselines of g-SDDMM on the graphs of gsparse-bench-sddmm.

What PyTorch users get today for Z[e = (u -> v)] = X[u] . Y[v] (u_dot_v) and X[u] OP Y[v] (u_OP_v):

  torch.sparse.sampled_addmm   dot only: sampled_addmm(C, Y, X.t(), beta=0) with C the CSR pattern by
                               destination (torch.sparse_csr_tensor, int32 indices when accepted, else
                               int64, values 0); values come out in CSR position order. PyTorch runs
                               cuSPARSE SDDMM underneath, setting it up on every call.
  torch.gather_mul_sum         dot: (X[src] * Y[dst]).sum(-1) with src, dst in edge-id order: the
                               formulation DGL-free PyTorch / PyG code writes; it materializes two
                               nnz x F tensors and their product, so large graphs with large F are
                               skipped when the estimate exceeds free memory (recorded as errors).
  torch.gather_OP              add, sub, mul, div: X[src] OP Y[dst] (nnz x F).

X (num_src x F) and Y (num_dst x F) are torch.rand on the GPU (seeds --seed and --seed + 1). Every
competitor's output is checked, before it is timed, against a CPU reference in float64 on sampled
edges (every edge when nnz <= --sample-edges). Timing matches the C++ harness (torch_baselines.Timer:
one stream, warm-up, CUDA events per run, median, L2 flush before every call outside the timed
interval). Graph arguments and the JSON schema are those of torch_baselines.py, so report_sddmm.py
merges this file with gsparse-bench-sddmm's:

  torch_sddmm_baselines.py --graph reddit:shuffled=graphs/reddit.shuffled.gcsr \\
                           --graph cora=datasets/real/cora.mtx --json torch_sddmm.json
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import torch_baselines as tb  # noqa: E402  (graph readers, Timer, compare, JSON helpers)

np = tb.np

OPS = {"dot": "u_dot_v", "add": "u_add_v", "sub": "u_sub_v", "mul": "u_mul_v", "div": "u_div_v"}


def sddmm_bytes(num_dst, num_src, nnz, feat, op):
    """The byte model of gsparse-bench-sddmm (sddmm_util.cpp: sddmm_bytes)."""
    out = 4.0 * nnz * (1 if op == "dot" else feat)
    index = 4.0 * (num_dst + 1) + 4.0 * nnz
    return {"index": index, "compulsory": index + 4.0 * feat * (num_src + num_dst) + out,
            "gathered": index + 8.0 * nnz * feat + out}


def sample_positions(nnz: int, max_edges: int, seed: int):
    """CSR positions to check: all when nnz <= max_edges, else first, last and random ones (sorted)."""
    if nnz <= max_edges:
        return np.arange(nnz, dtype=np.int64)
    rng = np.random.default_rng(seed)
    pos = np.concatenate([[0, nnz - 1], rng.integers(0, nnz, size=max_edges - 2)])
    return np.unique(pos.astype(np.int64))


def parse_ops(text):
    ops = []
    for t in text.split(","):
        t = t.strip()
        if not t:
            continue
        if t.startswith("u_") and t.endswith("_v"):
            t = t[2:-2]
        if t not in OPS:
            raise ValueError(f"unsupported op '{t}' (dot, add, sub, mul, div or u_OP_v)")
        ops.append(t)
    return ops


def reference(torch, ctx, op, sample):
    """float64 CPU reference on the sampled edges: (len(sample), 1) for dot, (len(sample), F) else."""
    s = torch.from_numpy(sample["pos"]).cuda()
    x = ctx["x"].index_select(0, ctx["src_pos"].index_select(0, s)).cpu().double()
    y = ctx["y"].index_select(0, ctx["dst_pos"].index_select(0, s)).cpu().double()
    if op == "dot":
        return (x * y).sum(-1, keepdim=True)
    # element-wise ops: computed in float32 like every competitor, then widened
    xf, yf = x.float(), y.float()
    return {"add": xf + yf, "sub": xf - yf, "mul": xf * yf, "div": xf / yf}[op].double()


def competitors(torch, op):
    """(name, builder, materializing factor, output order); builder(ctx) returns a callable computing Z.
    The factor is how many nnz x F float tensors the formulation creates (memory estimate)."""
    out = []
    if op == "dot":
        def sampled_addmm(c):
            n_dst, n_src = c["n_dst"], c["n_src"]
            vals = torch.zeros(c["nnz"], device="cuda")
            x, y = c["x"], c["y"]
            try:  # int32 indices as gsparse and cuSPARSE use; int64 when this build rejects them
                pat = torch.sparse_csr_tensor(c["row_ptr"], c["col_idx"], vals, size=(n_dst, n_src))
                torch.sparse.sampled_addmm(pat, y, x.t(), beta=0.0, alpha=1.0)
            except RuntimeError:
                pat = torch.sparse_csr_tensor(c["row_ptr"].long(), c["col_idx"].long(), vals, size=(n_dst, n_src))
            return lambda: torch.sparse.sampled_addmm(pat, y, x.t(), beta=0.0, alpha=1.0)
        out.append(("torch.sparse.sampled_addmm", sampled_addmm, 0, "position"))

        def gather_mul_sum(c):
            x, y, src, dst = c["x"], c["y"], c["src_eid"], c["dst_eid"]
            return lambda: (x[src] * y[dst]).sum(-1)
        out.append(("torch.gather_mul_sum", gather_mul_sum, 3, "edge_id"))
    else:
        fn = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div}[op]

        def gather_op(c):
            x, y, src, dst = c["x"], c["y"], c["src_eid"], c["dst_eid"]
            return lambda: fn(x[src], y[dst])
        out.append((f"torch.gather_{op}", gather_op, 3, "edge_id"))
    return out


def sampled_output(torch, z, order, sample):
    """The competitor's output on the sampled edges as a CPU tensor (rows like reference())."""
    if z.layout == torch.sparse_csr:
        z = z.values()
    idx = sample["pos"] if order == "position" else sample["eid"]
    v = z.index_select(0, torch.from_numpy(idx).cuda()).cpu()
    return v.view(len(idx), -1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graph", action="append", default=[], metavar="NAME[:ORDER]=PATH",
                    help="a graph file (.gcsr or .mtx); repeat for more graphs")
    ap.add_argument("--scale", type=float, default=1.0, help="scale the twins were generated at (recorded only)")
    ap.add_argument("--feats", default="1,2,4,8,16,32,64,128,256,512,1024")
    ap.add_argument("--ops", default="dot")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--no-flush-l2", action="store_true")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--sample-edges", type=int, default=16384)
    ap.add_argument("--memory-fraction", type=float, default=0.9,
                    help="skip a formulation whose estimated memory exceeds this fraction of free memory")
    ap.add_argument("--json", help="output JSON file (default: stdout)")
    args = ap.parse_args(argv)

    if not args.graph:
        ap.error("no graph given (--graph NAME[:ORDER]=PATH)")
    if args.runs < 1 or args.warmup < 0 or args.sample_edges < 1:
        ap.error("--runs and --sample-edges must be >= 1 and --warmup >= 0")
    feats = [int(t) for t in args.feats.split(",") if t.strip()]
    if any(f <= 0 for f in feats):
        ap.error("--feats must be positive")
    try:
        ops = parse_ops(args.ops)
    except ValueError as e:
        ap.error(str(e))

    if np is None:
        print("torch_sddmm_baselines.py: error: numpy is not installed; run this on the GPU host", file=sys.stderr)
        return 1
    try:
        import torch
    except ImportError as e:
        print(f"torch_sddmm_baselines.py: error: PyTorch is not installed ({e}); run this on the GPU host",
              file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        print("torch_sddmm_baselines.py: error: PyTorch sees no CUDA device; torch "
              f"{torch.__version__}, built for CUDA {torch.version.cuda}", file=sys.stderr)
        return 1

    device = torch.cuda.get_device_name()
    date = tb.utc_date()
    timer = tb.Timer(torch, args.warmup, args.runs, not args.no_flush_l2)
    meta = {
        "benchmark": "torch_sddmm_baselines.py",
        "device": device, "date": date, "timestamp": tb.utc_timestamp(),
        "torch_version": torch.__version__, "torch_cuda_version": torch.version.cuda,
        "python_version": platform.python_version(),
        "options": {"runs": args.runs, "warmup": args.warmup, "flush_l2": not args.no_flush_l2,
                    "flush_bytes": timer.flush_bytes, "scale": args.scale, "feats": feats, "ops": ops,
                    "graphs": args.graph, "seed": args.seed, "sample_edges": args.sample_edges},
        "timing": "CUDA events around each call on the current stream; warm-up calls first; median of the timed "
                  "runs; with flush_l2 a 2 x L2 scratch buffer is zeroed before every call, outside the timed "
                  "interval",
        "skipped": [],
    }
    records = []

    def write():
        doc = tb.dumps({"metadata": meta, "records": records})
        if args.json:
            tmp = args.json + ".tmp"
            with open(tmp, "w") as f:
                f.write(doc + "\n")
            os.replace(tmp, args.json)

    gen = torch.Generator(device="cuda")
    for spec in args.graph:
        name, order, path = tb.parse_graph_arg(spec)
        twin = order in ("shuffled", "community")
        try:
            g = tb.read_graph(path)
        except (OSError, ValueError) as e:
            print(f"[{name}] skipped: {e}", flush=True)
            meta["skipped"].append({"graph": name, "reason": str(e)})
            write()
            continue
        avg, max_deg, cov = g.degree_stats()
        print(f"[{name}/{order}] {g.num_rows} nodes, {g.nnz} edges (avg {avg:.1f}, max {max_deg}, cov {cov:.2f})",
              flush=True)
        ctx = {"n_dst": g.num_rows, "n_src": g.num_cols, "nnz": g.nnz,
               "row_ptr": torch.from_numpy(g.row_ptr).cuda(), "col_idx": torch.from_numpy(g.col_idx).cuda()}
        deg = (ctx["row_ptr"][1:] - ctx["row_ptr"][:-1]).long()
        ctx["src_pos"] = ctx["col_idx"].long()
        ctx["dst_pos"] = torch.repeat_interleave(torch.arange(g.num_rows, device="cuda"), deg)
        eid = (torch.arange(g.nnz, device="cuda") if g.edge_ids is None
               else torch.from_numpy(g.edge_ids).cuda().long())
        ctx["src_eid"] = torch.empty_like(ctx["src_pos"]).index_copy_(0, eid, ctx["src_pos"])
        ctx["dst_eid"] = torch.empty_like(ctx["dst_pos"]).index_copy_(0, eid, ctx["dst_pos"])
        pos = sample_positions(g.nnz, args.sample_edges, args.seed + 7)
        sample = {"pos": pos, "eid": pos if g.edge_ids is None else g.edge_ids[pos].astype(np.int64)}
        for feat in feats:
            ctx["feat"] = feat
            try:
                gen.manual_seed(args.seed)
                ctx["x"] = torch.rand(g.num_cols, feat, device="cuda", generator=gen)
                gen.manual_seed(args.seed + 1)
                ctx["y"] = torch.rand(g.num_rows, feat, device="cuda", generator=gen)
            except torch.cuda.OutOfMemoryError as e:
                ctx.pop("x", None)
                ctx.pop("y", None)
                torch.cuda.empty_cache()
                print(f"[{name}/{order}] F={feat}: out of memory for X, Y: {e}", flush=True)
                continue
            for op in ops:
                rec = {"graph": name, "source": "twin" if twin else "real", "order": order,
                       "scale": args.scale if twin else 1.0, "nodes": g.num_rows, "num_src": g.num_cols,
                       "nnz": g.nnz, "avg_degree": avg, "max_degree": max_deg, "degree_cov": cov,
                       "F": feat, "op": op, "op_dgl": OPS[op], "kind": "sddmm", "device": device, "date": date,
                       "bytes": sddmm_bytes(g.num_rows, g.num_cols, g.nnz, feat, op), "results": [],
                       "check_sample": {"edges": int(len(pos)), "all_edges": bool(len(pos) == g.nnz)}}
                tol = 1e-4 if op == "dot" else 1e-6
                ref = reference(torch, ctx, op, sample)
                for cname, build, factor, out_order in competitors(torch, op):
                    entry = {"competitor": cname}
                    out_cols = 1 if op == "dot" else feat
                    need = 4.0 * g.nnz * (factor * feat + out_cols)
                    free = torch.cuda.mem_get_info()[0]
                    if need > args.memory_fraction * free:
                        entry.update(ok=False, error=f"skipped: needs about {need / 2**30:.1f} GiB "
                                                     f"(nnz x F temporaries and output), {free / 2**30:.1f} GiB free")
                        rec["results"].append(entry)
                        continue
                    try:
                        fn = build(ctx)
                        z = fn()
                        torch.cuda.synchronize()
                        entry["check"] = dict(tb.compare(torch, sampled_output(torch, z, out_order, sample), ref, tol),
                                              reference="cpu_sample_fp64")
                        del z
                        if entry["check"]["ok"]:
                            t = timer.time(fn)
                            entry.update(t)
                            s = t["median_ms"] * 1e-3
                            if s > 0:
                                entry["compulsory_bytes_per_s"] = rec["bytes"]["compulsory"] / s
                                entry["gathered_bytes_per_s"] = rec["bytes"]["gathered"] / s
                            entry["ok"] = True
                        else:
                            entry.update(ok=False, error="output check against the CPU reference failed "
                                                         f"(max_rel_err {entry['check']['max_rel_err']:.3g})")
                    except torch.cuda.OutOfMemoryError as e:
                        entry.update(ok=False, error=f"out of memory: {str(e).splitlines()[0]}")
                    except RuntimeError as e:
                        entry.update(ok=False, error=str(e).splitlines()[0] if str(e) else repr(e))
                    finally:
                        torch.cuda.empty_cache()
                    rec["results"].append(entry)
                summary = ", ".join(
                    f"{e['competitor']} {e['median_ms']:.3f} ms" if e.get("ok") else f"{e['competitor']} —"
                    for e in rec["results"])
                print(f"[{name}/{order}] F={feat} {op}: {summary}", flush=True)
                records.append(rec)
                write()
            ctx.pop("x", None)
            ctx.pop("y", None)
            torch.cuda.empty_cache()
        del ctx
        torch.cuda.empty_cache()
    write()
    if not args.json:
        print(tb.dumps({"metadata": meta, "records": records}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
