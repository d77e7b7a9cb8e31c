#!/usr/bin/env python3
"""PyTorch baselines of g-SpMM on the graphs of gsparse-bench-spmm.

What PyTorch (and PyG) users get today for Z[v] = reduce_{(u -> v, e)} (X[u] op w[e]):

  torch.sparse.mm        CSR sparse tensor (torch.sparse_csr_tensor, int32 indices, values 1 for
                         copy_lhs or the edge weights for mul) times dense X; sum only.
  torch.index_add        Z = zeros(N, F).index_add_(0, dst, messages)          (sum)
  torch.scatter_reduce   Z = zeros(N, F).scatter_reduce_(0, dst[:, None].expand(-1, F), messages,
                         reduce, include_self=False)                          (sum, mean, amax, amin)
  torch.index_reduce     Z = zeros(N, F).index_reduce_(0, dst, messages, reduce, include_self=False)
                                                                               (mean, amax, amin)
  pyg.scatter            torch_geometric.utils.scatter(messages, dst, 0, N, reduce) when PyG imports
where messages = X.index_select(0, src) (times w[:, None] for mul): an nnz x F tensor that is
materialized, so large graphs with large F run out of memory; such cases are recorded as errors
(estimated before trying, and caught when the estimate is wrong). Nodes without in-edges get 0 in
every formulation (include_self=False keeps the zeros), as in DGL and gsparse. None of these give the
arg outputs of max/min that gsparse computes.

Timing matches the C++ harness: one CUDA stream, `warmup` untimed calls, then `runs` calls each
between two CUDA events, median reported; by default a scratch buffer of twice the L2 size is
written before every call, outside the timed interval. Every competitor's output is compared with the
first competitor's of the same case (relative error, recorded under "check").

Graphs are read from .gcsr (gsparse's binary CSR, see docs/graph-formats.md) or .mtx files:

  torch_baselines.py --graph reddit:shuffled=graphs/reddit.shuffled.gcsr \
                     --graph cora=datasets/real/cora.mtx --json torch.json

A graph argument is NAME[:ORDER]=PATH (or just PATH: NAME is the file's stem). ORDER shuffled or
community marks a twin (recorded with --scale); anything else, or none, a real graph (order "file").
The JSON has the schema of gsparse-bench-spmm's ({"metadata": {...}, "records": [...]}, one record
per graph x order x F x op, competitors in "results"), so report.py merges both.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import io
import json
import math
import os
import platform
import struct
import sys
from pathlib import Path

try:
    import numpy as np
except ImportError:  # reported by main() with a clear message
    np = None

# --- Graph files ------------------------------------------------------------------------------------

GCSR_MAGIC = b"GSPCSR\x00\x01"
GCSR_HEADER = struct.Struct("<8sIIqqq")  # magic, version, flags, num_rows, num_cols, nnz: 40 bytes
INT32_MAX = 2**31 - 1


class GraphData:
    """CSR by destination: row v lists the sources of v's in-edges. values[e] is indexed by edge id."""

    def __init__(self, num_rows, num_cols, row_ptr, col_idx, edge_ids=None, values=None):
        self.num_rows = int(num_rows)
        self.num_cols = int(num_cols)
        self.row_ptr = np.ascontiguousarray(row_ptr, dtype=np.int32)
        self.col_idx = np.ascontiguousarray(col_idx, dtype=np.int32)
        self.edge_ids = None if edge_ids is None else np.ascontiguousarray(edge_ids, dtype=np.int32)
        self.values = None if values is None else np.ascontiguousarray(values, dtype=np.float32)

    @property
    def nnz(self) -> int:
        return int(self.col_idx.shape[0])

    def values_by_position(self, by_edge_id: np.ndarray) -> np.ndarray:
        return by_edge_id if self.edge_ids is None else by_edge_id[self.edge_ids]

    def degree_stats(self):
        deg = np.diff(self.row_ptr.astype(np.int64))
        mean = float(deg.mean()) if deg.size else 0.0
        cov = float(deg.std() / mean) if mean > 0 else 0.0
        return mean, int(deg.max()) if deg.size else 0, cov


def read_gcsr(path: str) -> GraphData:
    """Reads gsparse's binary CSR: a 40-byte little-endian header, then row_ptr[num_rows+1],
    col_idx[nnz], edge_ids[nnz] (only when flag bit 0 is clear) and float32 values[nnz] by edge id
    (only when flag bit 1 is set), all int32/float32 little-endian, no padding."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        header = f.read(GCSR_HEADER.size)
        if len(header) != GCSR_HEADER.size:
            raise ValueError(f"{path}: {len(header)} bytes, shorter than the 40-byte .gcsr header")
        magic, version, flags, rows, cols, nnz = GCSR_HEADER.unpack(header)
        if magic != GCSR_MAGIC:
            raise ValueError(f"{path}: not a .gcsr file (magic {magic!r})")
        if version != 1:
            raise ValueError(f"{path}: unsupported .gcsr version {version}")
        if flags & ~0x3:
            raise ValueError(f"{path}: unknown flag bits {flags:#x}")
        for name, v in (("num_rows", rows), ("num_cols", cols), ("nnz", nnz)):
            if not 0 <= v <= INT32_MAX:
                raise ValueError(f"{path}: {name} = {v} is outside [0, INT32_MAX]")
        identity = bool(flags & 1)
        has_values = bool(flags & 2)
        expected = 40 + 4 * (rows + 1) + 4 * nnz * (1 + (0 if identity else 1) + (1 if has_values else 0))
        if size != expected:
            raise ValueError(f"{path}: the header (num_rows = {rows}, nnz = {nnz}, flags = {flags}) implies "
                             f"{expected} bytes but the file has {size} bytes")
        row_ptr = np.fromfile(f, dtype="<i4", count=rows + 1)
        col_idx = np.fromfile(f, dtype="<i4", count=nnz)
        edge_ids = None if identity else np.fromfile(f, dtype="<i4", count=nnz)
        values = np.fromfile(f, dtype="<f4", count=nnz) if has_values else None
    if row_ptr[0] != 0 or row_ptr[-1] != nnz or np.any(np.diff(row_ptr) < 0):
        raise ValueError(f"{path}: row_ptr is not a valid offset array")
    if nnz and (col_idx.min() < 0 or col_idx.max() >= cols):
        raise ValueError(f"{path}: col_idx out of range [0, {cols})")
    return GraphData(rows, cols, row_ptr, col_idx, edge_ids, values)


def read_mtx(path: str) -> GraphData:
    """Matrix Market coordinate files (pattern/real/integer, general/symmetric). Entry (r, c) is the edge
    c-1 -> r-1; symmetric off-diagonal entries are expanded to both directions (two consecutive edge
    ids, the stored direction first); edge ids follow the file; rows are sorted by column."""
    with open(path, "r") as f:
        banner = f.readline().split()
        if len(banner) < 5 or banner[0].lower() != "%%matrixmarket" or banner[1].lower() != "matrix" \
                or banner[2].lower() != "coordinate":
            raise ValueError(f"{path}: not a Matrix Market coordinate file")
        field, symmetry = banner[3].lower(), banner[4].lower()
        if field not in ("pattern", "real", "integer") or symmetry not in ("general", "symmetric"):
            raise ValueError(f"{path}: unsupported Matrix Market kind {field} {symmetry}")
        line = f.readline()
        while line and (line.startswith("%") or not line.strip()):
            line = f.readline()
        rows, cols, entries = (int(t) for t in line.split())
        ncol = 2 if field == "pattern" else 3
        data = np.loadtxt(io.StringIO(f.read()), comments="%", ndmin=2,
                          dtype=np.float64).reshape(-1, ncol) if entries else np.zeros((0, ncol))
    if data.shape[0] != entries:
        raise ValueError(f"{path}: {data.shape[0]} entries, the size line declares {entries}")
    r = data[:, 0].astype(np.int64) - 1
    c = data[:, 1].astype(np.int64) - 1
    v = data[:, 2].astype(np.float32) if ncol == 3 else None
    if symmetry == "symmetric":
        off = r != c
        n = r.shape[0]
        # Interleave: entry i gives (c -> r), then (r -> c) when off-diagonal.
        reps = np.where(off, 2, 1)
        first = np.repeat(np.arange(n), reps)
        second = np.zeros(first.shape[0], dtype=bool)
        starts = np.cumsum(reps) - reps
        second[starts[off] + 1] = True
        rr = np.where(second, c[first], r[first])
        cc = np.where(second, r[first], c[first])
        r, c = rr, cc
        v = None if v is None else v[first]
    dst, src = r, c
    if dst.size and (dst.min() < 0 or dst.max() >= rows or src.min() < 0 or src.max() >= cols):
        raise ValueError(f"{path}: an index is out of range")
    order = np.lexsort((src, dst))  # by destination, then source; stable in edge id
    row_ptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(dst, minlength=rows), out=row_ptr[1:])
    return GraphData(rows, cols, row_ptr, src[order], edge_ids=order, values=v)


def read_graph(path: str) -> GraphData:
    suffix = Path(path).suffix.lower()
    if suffix == ".gcsr":
        return read_gcsr(path)
    if suffix == ".mtx":
        return read_mtx(path)
    raise ValueError(f"{path}: only .gcsr and .mtx files are read (convert with gsparse-data)")


# --- Benchmark ------------------------------------------------------------------------------------------


def utc_date() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d")


def utc_timestamp() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def op_dgl_name(binary: str, reduce: str) -> str:
    if binary == "copy_lhs":
        return f"copy_u_{reduce}"
    return f"u_{binary}_e_{reduce}"


def spmm_bytes(num_dst, num_src, nnz, feat, binary, reduce):
    """The byte model of gsparse-bench-spmm (bench_util.cpp: spmm_bytes)."""
    index = 4.0 * (num_dst + 1) + 4.0 * nnz + (4.0 * nnz if binary != "copy_lhs" else 0.0)
    outputs = 3.0 if reduce in ("max", "min") else 1.0
    return {"index": index,
            "compulsory": index + 4.0 * num_src * feat + outputs * 4.0 * num_dst * feat,
            "gathered": index + 4.0 * nnz * feat}


def finite_or_none(obj):
    """JSON has no NaN or Infinity: non-finite floats become null."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite_or_none(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite_or_none(v) for v in obj]
    return obj


def dumps(doc) -> str:
    return json.dumps(finite_or_none(doc), indent=1, allow_nan=False, default=lambda o: None)


def parse_graph_arg(text: str):
    if "=" in text:
        key, path = text.split("=", 1)
    else:
        key, path = Path(text).stem, text
    name, _, order = key.partition(":")
    return name, (order or "file"), path


class Timer:
    def __init__(self, torch, warmup: int, runs: int, flush_l2: bool):
        self.torch = torch
        self.warmup = warmup
        self.runs = runs
        self.scratch = None
        if flush_l2:
            props = torch.cuda.get_device_properties(torch.cuda.current_device())
            l2 = int(getattr(props, "L2_cache_size", 0) or 0) or 50 * 2**20
            self.scratch = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
        self.flush_bytes = 0 if self.scratch is None else self.scratch.numel()

    def flush(self):
        if self.scratch is not None:
            self.scratch.zero_()

    def time(self, fn):
        torch = self.torch
        for _ in range(self.warmup):
            self.flush()
            fn()
        torch.cuda.synchronize()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(self.runs)]
        stops = [torch.cuda.Event(enable_timing=True) for _ in range(self.runs)]
        for i in range(self.runs):
            self.flush()
            starts[i].record()
            fn()
            stops[i].record()
        torch.cuda.synchronize()
        times = [s.elapsed_time(e) for s, e in zip(starts, stops)]
        ordered = sorted(times)
        n = len(ordered)
        median = ordered[n // 2] if n % 2 else 0.5 * (ordered[n // 2 - 1] + ordered[n // 2])
        return {"median_ms": median, "min_ms": ordered[0], "mean_ms": sum(times) / n, "max_ms": ordered[-1],
                "times_ms": times}


def compare(torch, a, b, tol):
    """max |a - b| / max(|b|, 1e-6 max|b|), as in bench_util.cpp."""
    a = a.double()
    b = b.double()
    finite_a, finite_b = torch.isfinite(a), torch.isfinite(b)
    mismatched = int((finite_a != finite_b).sum().item())
    both = finite_a & finite_b
    max_ref = float(b[both].abs().max().item()) if bool(both.any()) else 0.0
    floor = max(1e-6 * max_ref, sys.float_info.min)
    diff = (a - b).abs()
    rel = torch.where(both, diff / torch.clamp(b.abs(), min=floor), torch.zeros_like(diff))
    max_rel = float(rel.max().item()) if rel.numel() else 0.0
    max_abs = float(torch.where(both, diff, torch.zeros_like(diff)).max().item()) if diff.numel() else 0.0
    return {"max_rel_err": max_rel, "max_abs_err": max_abs, "mismatched_nonfinite": mismatched,
            "tolerance": tol, "ok": mismatched == 0 and max_rel <= tol}


def competitors(torch, binary, reduce, pyg_scatter):
    """(name, builder) pairs; builder(ctx) returns a zero-argument callable computing Z, or raises."""
    red = {"sum": "sum", "mean": "mean", "max": "amax", "min": "amin"}[reduce]

    def messages(c):
        m = c["x"].index_select(0, c["src"])
        if binary == "mul":
            m = m * c["w_pos"][:, None]
        elif binary == "add":
            m = m + c["w_pos"][:, None]
        elif binary == "sub":
            m = m - c["w_pos"][:, None]
        elif binary == "div":
            m = m / c["w_pos"][:, None]
        return m

    out = []
    if reduce == "sum" and binary in ("copy_lhs", "mul"):
        def sparse_mm(c):
            vals = c["w_pos"] if binary == "mul" else c["ones"]
            x = c["x"]
            try:  # int32 indices, as gsparse and cuSPARSE use; int64 when this build rejects them
                a = torch.sparse_csr_tensor(c["row_ptr"], c["col_idx"], vals, size=(c["n_dst"], c["n_src"]))
                torch.sparse.mm(a, x)
            except RuntimeError:
                a = torch.sparse_csr_tensor(c["row_ptr"].long(), c["col_idx"].long(), vals,
                                            size=(c["n_dst"], c["n_src"]))
            return lambda: torch.sparse.mm(a, x)
        out.append(("torch.sparse.mm", sparse_mm, False))
    if reduce == "sum":
        def index_add(c):
            n, f = c["n_dst"], c["feat"]
            return lambda: torch.zeros(n, f, device="cuda").index_add_(0, c["dst"], messages(c))
        out.append(("torch.index_add", index_add, True))

    def scatter_reduce(c):
        n, f = c["n_dst"], c["feat"]
        idx = c["dst"].view(-1, 1).expand(-1, f)
        return lambda: torch.zeros(n, f, device="cuda").scatter_reduce_(0, idx, messages(c), red,
                                                                         include_self=False)
    out.append(("torch.scatter_reduce", scatter_reduce, True))
    if reduce != "sum":
        def index_reduce(c):
            n, f = c["n_dst"], c["feat"]
            return lambda: torch.zeros(n, f, device="cuda").index_reduce_(0, c["dst"], messages(c), red,
                                                                           include_self=False)
        out.append(("torch.index_reduce", index_reduce, True))
    if pyg_scatter is not None:
        def pyg(c):
            n = c["n_dst"]
            return lambda: pyg_scatter(messages(c), c["dst"], 0, n, reduce)
        out.append(("pyg.scatter", pyg, True))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graph", action="append", default=[], metavar="NAME[:ORDER]=PATH",
                    help="a graph file (.gcsr or .mtx); repeat for more graphs")
    ap.add_argument("--scale", type=float, default=1.0, help="scale the twins were generated at (recorded only)")
    ap.add_argument("--feats", default="1,2,4,8,16,32,64,128,256,512")
    ap.add_argument("--ops", default="copy_lhs:sum,mul:sum,copy_lhs:max")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--no-flush-l2", action="store_true")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--memory-fraction", type=float, default=0.9,
                    help="skip a formulation whose estimated memory exceeds this fraction of free memory")
    ap.add_argument("--no-pyg", action="store_true", help="do not time torch_geometric.utils.scatter")
    ap.add_argument("--json", help="output JSON file (default: stdout)")
    args = ap.parse_args(argv)

    if not args.graph:
        ap.error("no graph given (--graph NAME[:ORDER]=PATH)")
    if args.runs < 1 or args.warmup < 0:
        ap.error("--runs must be >= 1 and --warmup >= 0")
    feats = [int(t) for t in args.feats.split(",") if t.strip()]
    if any(f <= 0 for f in feats):
        ap.error("--feats must be positive")
    ops = []
    for t in args.ops.split(","):
        t = t.strip()
        if not t:
            continue
        binary, _, reduce = t.partition(":")
        if binary not in ("copy_lhs", "add", "sub", "mul", "div") or reduce not in ("sum", "mean", "max", "min"):
            ap.error(f"unsupported op '{t}' (BINARY:REDUCE with BINARY in copy_lhs, add, sub, mul, div and "
                     f"REDUCE in sum, mean, max, min)")
        ops.append((t, binary, reduce))

    if np is None:
        print("torch_baselines.py: error: numpy is not installed; run this on the GPU host", file=sys.stderr)
        return 1
    try:
        import torch
    except ImportError as e:
        print(f"torch_baselines.py: error: PyTorch is not installed ({e}); run this on the GPU host",
              file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        print("torch_baselines.py: error: PyTorch sees no CUDA device (torch.cuda.is_available() is False); "
              f"torch {torch.__version__}, built for CUDA {torch.version.cuda}", file=sys.stderr)
        return 1
    pyg_scatter, pyg_version = None, None
    if not args.no_pyg:
        try:
            import torch_geometric
            from torch_geometric.utils import scatter as pyg_scatter
            pyg_version = torch_geometric.__version__
        except Exception:  # PyG is optional
            pyg_scatter = None

    device = torch.cuda.get_device_name()
    date = utc_date()
    timer = Timer(torch, args.warmup, args.runs, not args.no_flush_l2)
    meta = {
        "benchmark": "torch_baselines.py",
        "device": device,
        "date": date,
        "timestamp": utc_timestamp(),
        "torch_version": torch.__version__,
        "torch_cuda_version": torch.version.cuda,
        "torch_geometric_version": pyg_version,
        "python_version": platform.python_version(),
        "options": {"runs": args.runs, "warmup": args.warmup, "flush_l2": not args.no_flush_l2,
                    "flush_bytes": timer.flush_bytes, "scale": args.scale, "feats": feats,
                    "ops": [o[0] for o in ops], "graphs": args.graph, "seed": args.seed},
        "timing": "CUDA events around each call on the current stream; warm-up calls first; median of the timed "
                  "runs; with flush_l2 a 2 x L2 scratch buffer is zeroed before every call, outside the timed "
                  "interval",
        "skipped": [],
    }
    records = []

    def write():
        doc = dumps({"metadata": meta, "records": records})
        if args.json:
            tmp = args.json + ".tmp"
            with open(tmp, "w") as f:
                f.write(doc + "\n")
            os.replace(tmp, args.json)

    gen = torch.Generator(device="cuda")
    for spec in args.graph:
        name, order, path = parse_graph_arg(spec)
        twin = order in ("shuffled", "community")
        try:
            g = read_graph(path)
        except (OSError, ValueError) as e:
            print(f"[{name}] skipped: {e}", flush=True)
            meta["skipped"].append({"graph": name, "reason": str(e)})
            write()
            continue
        avg, max_deg, cov = g.degree_stats()
        print(f"[{name}/{order}] {g.num_rows} nodes, {g.nnz} edges (avg {avg:.1f}, max {max_deg}, cov {cov:.2f})",
              flush=True)
        ctx = {
            "n_dst": g.num_rows, "n_src": g.num_cols,
            "row_ptr": torch.from_numpy(g.row_ptr).cuda(),
            "col_idx": torch.from_numpy(g.col_idx).cuda(),
        }
        ctx["src"] = ctx["col_idx"].long()
        deg = ctx["row_ptr"][1:] - ctx["row_ptr"][:-1]
        ctx["dst"] = torch.repeat_interleave(torch.arange(g.num_rows, device="cuda"), deg.long())
        ctx["ones"] = torch.ones(g.nnz, device="cuda")
        if g.values is not None:
            w_pos = torch.from_numpy(g.values_by_position(g.values)).cuda()
        else:
            gen.manual_seed(args.seed + 1)
            w_pos = 0.5 + torch.rand(g.nnz, device="cuda", generator=gen)
        ctx["w_pos"] = w_pos
        for feat in feats:
            ctx["feat"] = feat
            try:
                gen.manual_seed(args.seed)
                ctx["x"] = torch.rand(g.num_cols, feat, device="cuda", generator=gen)
            except torch.cuda.OutOfMemoryError as e:
                ctx.pop("x", None)
                torch.cuda.empty_cache()
                print(f"[{name}/{order}] F={feat}: out of memory for X: {e}", flush=True)
                continue
            for op_text, binary, reduce in ops:
                rec = {"graph": name, "source": "twin" if twin else "real", "order": order,
                       "scale": args.scale if twin else 1.0, "nodes": g.num_rows, "num_src": g.num_cols,
                       "nnz": g.nnz, "avg_degree": avg, "max_degree": max_deg, "degree_cov": cov,
                       "F": feat, "op": op_text, "op_dgl": op_dgl_name(binary, reduce), "device": device,
                       "date": date, "bytes": spmm_bytes(g.num_rows, g.num_cols, g.nnz, feat, binary, reduce),
                       "results": []}
                tol = 1e-4 if reduce in ("sum", "mean") else 1e-6
                reference = None
                for cname, build, materializes in competitors(torch, binary, reduce, pyg_scatter):
                    entry = {"competitor": cname}
                    need = 4.0 * g.nnz * feat * (2 if binary != "copy_lhs" else 1) + 4.0 * g.num_rows * feat \
                        if materializes else 4.0 * g.num_rows * feat
                    free = torch.cuda.mem_get_info()[0]
                    if need > args.memory_fraction * free:
                        entry.update(ok=False, error=f"skipped: needs about {need / 2**30:.1f} GiB "
                                                     f"({'nnz x F messages' if materializes else 'output'}), "
                                                     f"{free / 2**30:.1f} GiB free")
                        rec["results"].append(entry)
                        continue
                    try:
                        fn = build(ctx)
                        z = fn()
                        torch.cuda.synchronize()
                        if reference is None:
                            reference = (cname, z)
                            entry["check"] = {"reference": cname, "ok": True}
                        else:
                            entry["check"] = dict(compare(torch, z, reference[1], tol), reference=reference[0])
                        del z
                        t = timer.time(fn)
                        entry.update(t)
                        s = t["median_ms"] * 1e-3
                        if s > 0:
                            entry["compulsory_bytes_per_s"] = rec["bytes"]["compulsory"] / s
                            entry["gathered_bytes_per_s"] = rec["bytes"]["gathered"] / s
                        entry["ok"] = True
                    except torch.cuda.OutOfMemoryError as e:
                        entry.update(ok=False, error=f"out of memory: {str(e).splitlines()[0]}")
                    except RuntimeError as e:
                        entry.update(ok=False, error=str(e).splitlines()[0] if str(e) else repr(e))
                    finally:
                        torch.cuda.empty_cache()
                    rec["results"].append(entry)
                reference = None
                summary = ", ".join(
                    f"{e['competitor']} {e['median_ms']:.3f} ms" if e.get("ok") else f"{e['competitor']} —"
                    for e in rec["results"])
                print(f"[{name}/{order}] F={feat} {op_text}: {summary}", flush=True)
                records.append(rec)
                write()
            ctx.pop("x", None)
            torch.cuda.empty_cache()
        del ctx
        torch.cuda.empty_cache()
    write()
    if not args.json:
        print(dumps({"metadata": meta, "records": records}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
