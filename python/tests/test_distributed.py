"""gsparse.distributed: partitioning, seed sharding and relabeling in one process, and
partitioned / data-parallel training in 2 and 3 gloo ranks on the CPU (torch.multiprocessing),
checked against single-process training on the whole graph or union batch
(python/tests/distributed_cases.py runs in the ranks)."""

import json
import os

import pytest
import torch

import gsparse
from conftest import ref_gspmm

dist = pytest.importorskip("torch.distributed", reason="this torch has no torch.distributed")
if not dist.is_available():
    pytest.skip("torch.distributed is not available in this torch build", allow_module_level=True)

import gsparse.distributed as gd  # noqa: E402


# --- One process -----------------------------------------------------------------------------

def test_balanced_bounds_balance_cost():
    deg = torch.tensor([5, 0, 0, 1, 9, 2, 2, 2, 7, 0])
    row_ptr = torch.cat([torch.zeros(1, dtype=torch.int64), deg.cumsum(0)])
    for parts in (1, 2, 3, 4):
        b = gd.balanced_bounds(row_ptr, parts, node_weight=1.0)
        assert b[0] == 0 and b[-1] == 10 and b.numel() == parts + 1 and bool((b.diff() >= 0).all())
        cost = torch.tensor([int(row_ptr[b[k + 1]] - row_ptr[b[k]]) + int(b[k + 1] - b[k]) for k in range(parts)])
        assert int(cost.max()) <= int(cost.sum()) / parts + 10  # within the largest single row's cost
    assert gd.balanced_bounds(torch.zeros(1, dtype=torch.int64), 3).tolist() == [0, 0, 0, 0]
    assert gd.balanced_bounds(row_ptr, 20).tolist()[-1] == 10


def test_local_part_halo_and_aggregate():
    ei = torch.tensor([[0, 5, 6, 1, 7, 2, 3, 7, 0], [1, 1, 1, 2, 2, 5, 6, 6, 7]])
    g = gsparse.Graph(ei, num_nodes=8)
    x = torch.randn(8, 3, dtype=torch.float64)
    ref = gsparse.gspmm(g, "copy_lhs", "sum", x)
    bounds = torch.tensor([0, 3, 6, 8])
    for r in range(3):
        p = gd.LocalPart.from_global(g, bounds, r)
        assert p.halo_nodes.tolist() == sorted(set(p.halo_nodes.tolist()))
        assert all(not (p.start <= h < p.stop) for h in p.halo_nodes.tolist())
        assert sum(p.halo_counts) == p.num_halo and p.halo_counts[r] == 0
        x_src = torch.cat([x[p.start:p.stop], x[p.halo_nodes]])
        local = gsparse.Graph.from_csr(p.row_ptr, p.col_idx, num_src=p.num_local + p.num_halo)
        torch.testing.assert_close(gsparse.gspmm(local, "copy_lhs", "sum", x_src), ref[p.start:p.stop])
        # Local edges carry their global edge ids.
        src, dst = ei
        rows = torch.repeat_interleave(torch.arange(p.num_local), p.row_ptr.diff()) + p.start
        assert dst[p.edge_ids].tolist() == rows.tolist()


def test_relabel_csr_and_locality_order():
    pytest.importorskip("scipy")
    gen = torch.Generator().manual_seed(1)
    ei = torch.randint(0, 30, (2, 120), generator=gen)
    g = gsparse.Graph(ei, num_nodes=30)
    row_ptr, col_idx, eids = g.csr()
    order = gd.locality_order(row_ptr, col_idx)
    assert sorted(order.tolist()) == list(range(30))
    rp, ci, perm = gd.relabel_csr(row_ptr, col_idx, order)
    x = torch.randn(30, 4, dtype=torch.float64)
    w = torch.rand(120, 1, dtype=torch.float64)
    relabeled = gsparse.Graph.from_csr(rp, ci)
    out = gsparse.gspmm(relabeled, "mul", "sum", x[order], w[eids.long()][perm])
    torch.testing.assert_close(out, gsparse.gspmm(g, "mul", "sum", x, w)[order])


def test_shard_seeds_disjoint_equal_and_per_epoch():
    nodes = torch.arange(100, 123)
    for world in (2, 3, 4):
        for drop_last in (False, True):
            shards = [gd.shard_seeds(nodes, r, world, epoch=1, seed=5, drop_last=drop_last) for r in range(world)]
            sizes = {s.numel() for s in shards}
            assert len(sizes) == 1
            union = torch.cat(shards)
            if drop_last:
                assert union.unique().numel() == union.numel() == 23 // world * world
            else:
                assert set(union.tolist()) == set(nodes.tolist())
    e0 = gd.shard_seeds(nodes, 0, 2, epoch=0, seed=5)
    assert not torch.equal(e0, gd.shard_seeds(nodes, 0, 2, epoch=1, seed=5))
    assert torch.equal(e0, gd.shard_seeds(nodes, 0, 2, epoch=0, seed=5))
    assert gd.rank_seed(0, 0) != gd.rank_seed(0, 1) != gd.rank_seed(0, 1, epoch=1)


def test_distributed_loader_lengths():
    ei = torch.randint(0, 20, (2, 80))
    g = gsparse.Graph(ei, num_nodes=20)
    loaders = [gd.DistributedNeighborLoader(g, [2], batch_size=3, rank=r, world_size=3, device="cpu") for r in range(3)]
    assert {len(ld) for ld in loaders} == {3}  # ceil(20 / 3) = 7 seeds a rank, 3 batches of <= 3
    seen = torch.cat([b.seeds for ld in loaders for b in ld])
    assert set(seen.tolist()) == set(range(20))


# --- Several processes (gloo) ------------------------------------------------------------------

def _spawn(world, names, tmp_path):
    """Runs the named checks of distributed_cases in `world` gloo ranks; {check: {rank: outcome}}."""
    import torch.multiprocessing as mp
    if not dist.is_gloo_available():
        pytest.skip("this torch has no gloo backend: the multi-process checks cannot run")
    import distributed_cases
    folder = str(tmp_path)
    error = None
    try:
        mp.spawn(distributed_cases.worker, args=(world, folder, names), nprocs=world, join=True)
    except Exception as e:  # noqa: BLE001 - the ranks' reports say more
        error = e
    results = {}
    for r in range(world):
        path = os.path.join(folder, f"rank{r}.json")
        outcome = json.load(open(path)) if os.path.exists(path) else {}
        for name in names:
            results.setdefault(name, {})[r] = outcome.get(name, f"not run (rank {r} stopped earlier: {error})")
    return results


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    return _spawn(2, ["partitioned_gcn", "partitioned_gcn_weighted", "partitioned_sage", "partitioned_gin_gat",
                      "exchange_p2p", "data_parallel_exact", "data_parallel_sampled", "kernel_cache"],
                  tmp_path_factory.mktemp("dist2"))


@pytest.fixture(scope="module")
def three_ranks(tmp_path_factory):
    return _spawn(3, ["partitioned_gcn", "partitioned_sage"], tmp_path_factory.mktemp("dist3"))


def _assert_ok(results, name):
    bad = {r: o for r, o in results[name].items() if o != "ok"}
    assert not bad, "\n".join(f"rank {r}: {o}" for r, o in bad.items())


@pytest.mark.parametrize("name", ["partitioned_gcn", "partitioned_gcn_weighted", "partitioned_sage",
                                  "partitioned_gin_gat", "exchange_p2p"])
def test_partitioned_two_ranks(two_ranks, name):
    _assert_ok(two_ranks, name)


@pytest.mark.parametrize("name", ["partitioned_gcn", "partitioned_sage"])
def test_partitioned_three_ranks(three_ranks, name):
    _assert_ok(three_ranks, name)


@pytest.mark.parametrize("name", ["data_parallel_exact", "data_parallel_sampled"])
def test_data_parallel_two_ranks(two_ranks, name):
    _assert_ok(two_ranks, name)


def test_shared_kernel_cache_two_processes(two_ranks):
    _assert_ok(two_ranks, "kernel_cache")


@pytest.mark.parametrize("example, args", [("partitioned.py", ["--nproc", "2", "--check", "--epochs", "2"]),
                                           ("data_parallel.py", ["--nproc", "2", "--epochs", "1"])])
def test_examples_run_on_two_cpu_processes(example, args):
    import subprocess
    import sys
    if not dist.is_gloo_available():
        pytest.skip("this torch has no gloo backend: the examples cannot run on the CPU")
    from conftest import real_graph
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "examples", "distributed")
    r = subprocess.run([sys.executable, os.path.join(folder, example), "--cpu", "--graph", real_graph("cora")] + args,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    assert "loss" in r.stdout
