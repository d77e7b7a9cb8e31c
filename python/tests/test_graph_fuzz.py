"""Seeded fuzz test of the validation of the Python Graph constructors (Graph / from_edge_index,
from_csr, from_scipy), static (native C++) and dynamic (PyTorch ops) paths. Random graphs (duplicate
edges, self-loops, empty rows, bipartite, sorted or not), most of them mutated (negative, too large
or beyond-int32 ids, float / bool / narrow dtypes, wrong shapes, bad or conflicting node counts,
broken row_ptr or edge_ids, max_degree below the longest row), go to a constructor and to a plain
Python reference of validity. The constructor must raise GraphError exactly for invalid inputs (any
other exception fails); an accepted graph must have the reference's sizes, edges in edge-id order,
CSR, and g-SpMM (copy_lhs, sum). validate=False (trusting) is used on valid inputs only.
GSPARSE_FUZZ_CASES sets the cases per path (2000); case "<path>-<i>" is reproducible on its own."""

import os
import random

import numpy as np
import pytest
import torch

import gsparse

try:
    import scipy.sparse as sp  # python3-scipy (scripts/install-deps.sh)
except ImportError:  # pragma: no cover
    sp = None

CASES = int(os.environ.get("GSPARSE_FUZZ_CASES", "2000"))
I32 = 2**31 - 1
KERNEL_CHECK_MAX_NODES = 1 << 20  # accepted graphs up to this many nodes also run a g-SpMM
INT_DTYPES = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)


def is_count(c):
    return isinstance(c, (int, np.integer)) and not isinstance(c, bool) and 0 <= c <= I32


# --- Reference validity: None for an invalid input, else (num_src, num_dst, edges by edge id) ---

def ref_edge_index(ei, num_nodes, num_src, num_dst):
    ei = torch.as_tensor(ei)
    counts = [c for c in (num_nodes, num_src, num_dst) if c is not None]
    if (ei.dtype not in INT_DTYPES or ei.dim() != 2 or ei.shape[0] != 2 or not all(map(is_count, counts))
            or (num_nodes is not None and len(counts) > 1)):
        return None
    src, dst = ei.tolist()
    if num_nodes is None and num_src is None and num_dst is None:
        num_nodes = max(src + dst, default=-1) + 1
    if num_nodes is not None:
        num_src = num_dst = num_nodes
    num_src = max(src, default=-1) + 1 if num_src is None else num_src
    num_dst = max(dst, default=-1) + 1 if num_dst is None else num_dst
    ok = num_src <= I32 and num_dst <= I32 and all(0 <= s < num_src for s in src) and all(0 <= d < num_dst for d in dst)
    return (int(num_src), int(num_dst), list(zip(src, dst))) if ok else None


def ref_csr(rp, ci, num_src, edge_ids, max_degree):
    rp, ci = torch.as_tensor(rp), torch.as_tensor(ci)
    eid = torch.as_tensor(edge_ids) if edge_ids is not None else None
    if any(t.dtype not in INT_DTYPES for t in (rp, ci, eid) if t is not None):
        return None
    if rp.dim() != 1 or rp.numel() < 1 or ci.dim() != 1 or (eid is not None and eid.shape != ci.shape):
        return None
    rp, ci, E = rp.tolist(), ci.tolist(), ci.numel()
    num_dst = len(rp) - 1
    num_src = num_dst if num_src is None else num_src
    if not is_count(num_src) or (max_degree is not None and not is_count(max_degree)):
        return None
    eid = list(range(E)) if eid is None else eid.tolist()
    if rp[0] != 0 or rp[-1] != E or any(a > b for a, b in zip(rp, rp[1:])) or any(not 0 <= c < num_src for c in ci):
        return None
    longest = max((b - a for a, b in zip(rp, rp[1:])), default=0)
    if sorted(eid) != list(range(E)) or (max_degree is not None and max_degree < longest):
        return None
    edges = [None] * E
    for v in range(num_dst):
        for p in range(rp[v], rp[v + 1]):
            edges[eid[p]] = (ci[p], v)
    return int(num_src), num_dst, edges


# --- Random inputs ---------------------------------------------------------------------------------

def random_edges(rng, ns, nd, E):
    src, dst = [rng.randrange(ns) for _ in range(E)], [rng.randrange(nd) for _ in range(E)]
    if E and rng.random() < 0.3:  # a duplicate edge
        src.append(src[0]), dst.append(dst[0])
    if min(ns, nd) and rng.random() < 0.3:  # a self-loop
        u = rng.randrange(min(ns, nd))
        src.append(u), dst.append(u)
    if rng.random() < 0.3:  # sorted by destination (the dynamic path's no-sort branch)
        dst.sort()
    return src, dst


def bad_id(rng, n, huge=False):
    """An id out of [0, n): negative, at or beyond n, or (huge) beyond int32 (or its last value)."""
    if huge:
        return rng.choice([I32, 2**31, 2**32 + 1, 2**40])
    return rng.choice([-1, -rng.randint(2, 9), -2**31, n, n + 1, n + rng.randint(2, 999)])


def bad_count(rng, n):
    return rng.choice([-1, -rng.randint(2, 50), 2**31, 2**40, max(n - 1, 0), n + 0.5, float(n), "7"])


def as_form(rng, t, dtype):
    """t (int64) as dtype (narrow ints wrap), sometimes a NumPy array or a list."""
    if dtype is torch.int64 and rng.random() < 0.2:
        return t.numpy() if rng.random() < 0.5 else t.tolist()
    return t.to(dtype)


def pick_dtype(rng, muts):
    u = rng.random()
    if u < 0.08:
        muts.append("dtype")
        return rng.choice([torch.float32, torch.float64, torch.bool])
    if u < 0.3:  # valid, unless an id does not fit (it wraps)
        muts.append("narrow")
        return rng.choice([torch.int16, torch.int8, torch.uint8])
    return rng.choice([torch.int64, torch.int64, torch.int32])


def edge_index_case(rng, muts):
    bip = rng.random() < 0.3
    ns = rng.choice([0, 1, rng.randint(1, 12), rng.randint(1, 40)])
    nd = rng.randint(1, 40) if bip else ns
    src, dst = random_edges(rng, ns, nd, rng.randint(0, 80) if ns and nd else 0)
    if not bip and rng.random() < 0.1:  # many empty rows (node counts beyond a narrow dtype's range)
        ns = nd = rng.choice([200, 300, 40000])
    mode = rng.choice(["nodes", "src_dst", "src", "dst", "none"] if bip else ["nodes", "nodes", "none", "src_dst"])
    kw = {"nodes": {"num_nodes": ns}, "src_dst": {"num_src": ns, "num_dst": nd}, "src": {"num_src": ns},
          "dst": {"num_dst": nd}, "none": {}}[mode]
    for _ in range(rng.choice([0, 0, 1, 1, 2])):
        m = rng.choice(["id", "id", "huge", "count", "both", "shape", "empty"])
        muts.append(m)
        if m in ("id", "huge") and src:
            (src if rng.random() < 0.5 else dst)[rng.randrange(len(src))] = bad_id(rng, max(ns, nd), m == "huge")
        elif m == "count":
            key = rng.choice(["num_nodes", "num_src", "num_dst"])
            kw[key] = bad_count(rng, {"num_src": ns, "num_dst": nd}.get(key, max(ns, nd)))
        elif m == "both":
            kw.update(num_nodes=max(ns, nd), num_src=ns)
        elif m == "empty":
            src, dst = [], []
    ei = torch.tensor([src, dst], dtype=torch.int64).reshape(2, -1)
    if "shape" in muts:
        ei = rng.choice([torch.cat([ei, ei[:1]]), ei.flatten(), ei.t(), ei.unsqueeze(0), ei[:1]])
    ei = as_form(rng, ei, pick_dtype(rng, muts))
    ref = ref_edge_index(ei, kw.get("num_nodes"), kw.get("num_src"), kw.get("num_dst"))
    ctor = gsparse.Graph if rng.random() < 0.7 else gsparse.Graph.from_edge_index
    return ref, (lambda **extra: ctor(ei, **kw, **extra)), f"edge_index {ei!r} {kw}"


def csr_case(rng, muts):
    nd = rng.choice([0, 1, rng.randint(1, 12), rng.randint(1, 40)])
    ns = rng.choice([nd, rng.randint(1, 40)])
    deg = [rng.choice([0, 0, 1, 2, 3, rng.randint(0, 12)]) if ns else 0 for _ in range(nd)]
    rp = np.concatenate([[0], np.cumsum(deg, dtype=np.int64)]).tolist()
    ci = [rng.randrange(ns) for _ in range(rp[-1])]
    kw = {"num_src": ns} if ns != nd or rng.random() < 0.5 else {}
    if rng.random() < 0.15:  # sources without out-edges (counts beyond a narrow dtype's range)
        kw["num_src"] = rng.choice([130, 256, 261, 300, 40000, 65539])
    eid = None
    if rng.random() < 0.3:
        eid = list(range(len(ci)))
        rng.shuffle(eid)
    if rng.random() < 0.5:
        kw["max_degree"] = max(deg, default=0) + rng.choice([0, 1, 5, 255, 65535])
    n_src = kw.get("num_src", nd)
    for _ in range(rng.choice([0, 0, 1, 1, 2])):
        m = rng.choice(["row_ptr", "row_ptr", "col", "count", "edge_ids", "max_degree", "shape"])
        muts.append(m)
        if m == "row_ptr":
            k = rng.randrange(len(rp))
            how = rng.choice(["first", "decrease", "last", "pop", "append", "beyond"])
            if how == "first":
                rp[0] = rng.choice([1, -1])
            elif how == "decrease" and len(rp) > 2:
                rp[rng.randrange(1, len(rp) - 1)] = rp[-1] + rng.randint(1, 3)
            elif how == "last":
                rp[-1] += rng.choice([-1, 1, 2])
            elif how == "pop" and len(rp) > 1:
                rp.pop()
            elif how == "append":
                rp.append(rp[-1] + rng.choice([0, 0, 1]))
            else:
                rp[k] += rng.choice([2**31, 2**32, -2**32])
        elif m == "col" and ci:
            ci[rng.randrange(len(ci))] = bad_id(rng, n_src, rng.random() < 0.3)
        elif m == "count":
            kw["num_src"] = bad_count(rng, max(ci, default=0) + 1)
        elif m == "edge_ids":
            eid = list(range(len(ci) + rng.choice([-1, 0, 1])))
            if eid and rng.random() < 0.7:
                eid[rng.randrange(len(eid))] = rng.choice([eid[0], -1, len(eid), 2**33])
        elif m == "max_degree":
            kw["max_degree"] = rng.choice([max(deg, default=0) - 1, -1, 2**31, 1.5])
    rp, ci = torch.tensor(rp, dtype=torch.int64), torch.tensor(ci, dtype=torch.int64)
    if "shape" in muts:
        which = rng.choice(["rp2", "ci2", "rp0"])
        rp = rp.unsqueeze(0) if which == "rp2" else rp[:0] if which == "rp0" else rp
        ci = ci.unsqueeze(1) if which == "ci2" else ci
    rp, ci = as_form(rng, rp, pick_dtype(rng, muts)), as_form(rng, ci, pick_dtype(rng, muts))
    eid = None if eid is None else as_form(rng, torch.tensor(eid, dtype=torch.int64), torch.int64)
    ref = ref_csr(rp, ci, kw.get("num_src"), eid, kw.get("max_degree"))
    build = lambda **extra: gsparse.Graph.from_csr(rp, ci, edge_ids=eid, **kw, **extra)  # noqa: E731
    return ref, build, f"from_csr {rp!r} {ci!r} edge_ids={eid!r} {kw}"


def scipy_case(rng, muts):
    ns, nd = rng.randint(0, 30), rng.randint(0, 30)
    src, dst = random_edges(rng, ns, nd, rng.randint(0, 60) if ns and nd else 0)
    m = sp.coo_matrix((np.ones(len(src)), (src, dst)), shape=(ns, nd))
    return (ns, nd, list(zip(src, dst))), (lambda **extra: gsparse.Graph.from_scipy(m)), f"from_scipy {m!r}"


# --- The test ----------------------------------------------------------------------------------------

def check_graph(g, num_src, num_dst, edges, gen, where):
    E = len(edges)
    assert (g.num_src, g.num_dst, g.num_edges) == (num_src, num_dst, E), where
    assert [tuple(e) for e in g.edge_index().t().tolist()] == edges, where  # edge i is input edge i
    src, dst = np.array(edges, dtype=np.int64).reshape(E, 2).T
    rp, ci, eid = (t.numpy().astype(np.int64) for t in g.csr())
    deg = np.bincount(dst, minlength=num_dst)
    assert np.array_equal(rp, np.concatenate([[0], np.cumsum(deg)])), f"row_ptr; {where}"
    assert np.array_equal(np.sort(eid), np.arange(E)), f"edge_ids; {where}"
    rows = np.repeat(np.arange(num_dst), deg)
    assert np.array_equal(src[eid], ci) and np.array_equal(dst[eid], rows), f"CSR; {where}"
    if max(num_src, num_dst) > KERNEL_CHECK_MAX_NODES:
        return  # a valid graph of 2^31 - 1 nodes: its structure is checked, its features would not fit
    x = torch.rand(num_src, 3, dtype=torch.float64, generator=gen)
    want = np.zeros((num_dst, 3))
    np.add.at(want, dst, x.numpy()[src])
    got = gsparse.gspmm(g, "copy_lhs", "sum", x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=f"g-SpMM; {where}")


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_graph_constructors_fuzz(dynamic):
    path = "dynamic" if dynamic else "static"
    gen = torch.Generator().manual_seed(7)
    accepted = rejected = 0
    for i in range(CASES):
        name = f"{path}-{i}"
        rng, muts = random.Random(name), []
        u = rng.random()
        make = edge_index_case if u < 0.5 else csr_case if dynamic or u < 0.9 or sp is None else scipy_case
        ref, build, desc = make(rng, muts)
        # validate=False trusts the input (dynamic graphs skip their checks): only for valid inputs.
        validate = not (ref is not None and rng.random() < 0.2) if dynamic else rng.random() < 0.8
        where = f"case {name} ({', '.join(muts) or 'unmutated'}, validate={validate}): {desc}"
        extra = {} if make is scipy_case else {"dynamic": dynamic, "validate": validate}
        try:
            g = build(**extra)
        except gsparse.GraphError as e:
            assert ref is None, f"valid input rejected ({e}); {where}"
            rejected += 1
            continue
        except Exception as e:  # noqa: BLE001 - anything but GraphError is a finding
            pytest.fail(f"{type(e).__name__} instead of GraphError: {e}; {where}")
        assert ref is not None, f"invalid input accepted; {where}"
        assert g.is_dynamic == (dynamic and make is not scipy_case), where
        check_graph(g, *ref, gen, where)
        accepted += 1
    # The generator must keep producing both outcomes in fair measure.
    assert accepted >= CASES // 4 and rejected >= CASES // 4, (accepted, rejected)
