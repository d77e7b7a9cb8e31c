"""Property test of graph construction from arrays (the Python Graph constructors, static and
dynamic): random inputs, a quarter of them broken in one way (a negative or out-of-range id, a
decreasing or short row_ptr, edge ids that are not a permutation). A broken input must raise
GraphError naming the problem; a valid one must give exactly the CSR a plain sort of the edges
gives, and g-SpMM on it must match a plain loop. Seeded: every run sees the same cases."""

import random

import pytest
import torch

import gsparse


def reference_csr(src, dst, num_dst):
    """(row_ptr, col_idx, edge_ids) of edges src[i] -> dst[i]: a stable sort by destination."""
    order = sorted(range(len(src)), key=lambda i: dst[i])
    row_ptr = [0] * (num_dst + 1)
    for d in dst:
        row_ptr[d + 1] += 1
    for v in range(num_dst):
        row_ptr[v + 1] += row_ptr[v]
    return row_ptr, [src[i] for i in order], order


def random_case(rng):
    num_src, num_dst = rng.randint(1, 40), rng.randint(1, 40)
    e = rng.randint(0, 120)
    src = [rng.randrange(num_src) for _ in range(e)]
    dst = [rng.randrange(num_dst) for _ in range(e)]
    if e and rng.random() < 0.3:
        dst.sort()  # the already-sorted path
    broken = None
    if e and rng.random() < 0.25:
        i = rng.randrange(e)
        kind = rng.choice(["negative_src", "negative_dst", "src_range", "dst_range"])
        if kind == "negative_src":
            src[i] = -rng.randint(1, 5)
        elif kind == "negative_dst":
            dst[i] = -rng.randint(1, 5)
        elif kind == "src_range":
            src[i] = num_src + rng.randint(0, 5)
        else:
            dst[i] = num_dst + rng.randint(0, 5)
        broken = kind
    return num_src, num_dst, src, dst, broken


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_edge_index_construction(dynamic):
    rng = random.Random(1234)
    for case in range(150):
        num_src, num_dst, src, dst, broken = random_case(rng)
        ei = torch.tensor([src, dst], dtype=torch.int64).reshape(2, -1)
        if broken:
            with pytest.raises(gsparse.GraphError, match="negative|out of range"):
                gsparse.Graph(ei, num_src=num_src, num_dst=num_dst, dynamic=dynamic)
            continue
        g = gsparse.Graph(ei, num_src=num_src, num_dst=num_dst, dynamic=dynamic)
        assert (g.num_src, g.num_dst, g.num_edges) == (num_src, num_dst, len(src)), case
        row_ptr, col_idx, edge_ids = (t.tolist() for t in g.csr())
        ref_ptr, ref_col, ref_eid = reference_csr(src, dst, num_dst)
        assert row_ptr == ref_ptr, case
        # Within a row the edges may come in any order: compare (source, edge id) pairs per row.
        for v in range(num_dst):
            got = sorted(zip(col_idx[row_ptr[v]:row_ptr[v + 1]], edge_ids[row_ptr[v]:row_ptr[v + 1]]))
            want = sorted(zip(ref_col[ref_ptr[v]:ref_ptr[v + 1]], ref_eid[ref_ptr[v]:ref_ptr[v + 1]]))
            assert got == want, (case, v)
        x = torch.rand(num_src, 3, dtype=torch.float64)
        out = gsparse.gspmm(g, "copy_lhs", "sum", x)
        ref = torch.zeros(num_dst, 3, dtype=torch.float64)
        for s, d in zip(src, dst):
            ref[d] += x[s]
        torch.testing.assert_close(out, ref, msg=f"case {case}")


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_csr_construction(dynamic):
    rng = random.Random(99)
    for case in range(120):
        num_src, num_dst, src, dst, _ = random_case(rng)
        src = [min(max(s, 0), num_src - 1) for s in src]
        dst = sorted(min(max(d, 0), num_dst - 1) for d in dst)
        row_ptr, col_idx, _ = reference_csr(src, dst, num_dst)
        eids = list(range(len(src)))
        rng.shuffle(eids)
        broken = rng.choice([None, None, None, "decreasing", "end", "col_range", "eids"])
        if broken == "decreasing" and num_dst >= 2 and row_ptr[-1] > 0:
            v = rng.randrange(1, num_dst)
            row_ptr[v] = row_ptr[-1] + 1
        elif broken == "end":
            row_ptr[-1] += 1
        elif broken == "col_range" and col_idx:
            col_idx[rng.randrange(len(col_idx))] = num_src + 1
        elif broken == "eids" and len(eids) >= 2:
            eids[0] = eids[1]
        else:
            broken = None
        args = (torch.tensor(row_ptr), torch.tensor(col_idx, dtype=torch.int64))
        if broken:
            with pytest.raises(gsparse.GraphError):
                gsparse.Graph.from_csr(*args, num_src=num_src, edge_ids=torch.tensor(eids), dynamic=dynamic)
            continue
        g = gsparse.Graph.from_csr(*args, num_src=num_src, edge_ids=torch.tensor(eids), dynamic=dynamic)
        got_ptr, got_col, got_eid = (t.tolist() for t in g.csr())
        assert got_ptr == row_ptr and got_col == col_idx and got_eid == eids, case
