"""Graph.use_tuned: schedules from gsparse-tune's cache reach the kernels of the matching calls (and
only those); a real gsparse-tune run's entry is found under the key the package computes."""

import json
import os
import subprocess

import pytest
import torch

import gsparse
from conftest import N, real_graph


def write_cache(path, entries):
    with open(path, "w") as f:
        json.dump({"entries": entries}, f)


def spmm_key(g, feat, reduce="sum"):
    return gsparse._C.tuning_key(g._g, "spmm", "copy_lhs", reduce, "", [feat], [feat], False)


def test_the_tuned_schedule_runs_and_only_for_its_problem(tmp_path, edge_index):
    g = gsparse.Graph(edge_index, num_nodes=N)
    x = torch.rand(N, 8)
    ref = gsparse.gspmm(g, "copy_lhs", "sum", x)
    good = {"schedule": {"schedule": "cpu_spmm", "params": {"rows_per_task": 1, "vector_width": 1}}, "time_ms": 1.0}
    bad = {"schedule": {"schedule": "cpu_spmm", "params": {"rows_per_task": 1, "vector_width": 3}}, "time_ms": 1.0}
    cache = tmp_path / "tuning.json"

    write_cache(cache, {spmm_key(g, 8): good})
    g.use_tuned(str(cache))
    assert g.tuned_schedule("spmm", "copy_lhs", "sum", "", [8], [8], "cpu") == "cpu_spmm{rows_per_task=1, vector_width=1}"
    assert g.tuned_schedule("spmm", "copy_lhs", "sum", "", [4], [4], "cpu") is None  # another feature length
    torch.testing.assert_close(gsparse.gspmm(g, "copy_lhs", "sum", x), ref)

    # An entry that the kernels refuse proves that the tuned schedule is the one they are given:
    # the matching call fails, other calls (float64, other F, the reverse graph's own key) do not.
    write_cache(cache, {spmm_key(g, 8): bad})
    g.use_tuned(str(cache))
    with pytest.raises(gsparse.ScheduleError, match="vector_width"):
        gsparse.gspmm(g, "copy_lhs", "sum", x)
    gsparse.gspmm(g, "copy_lhs", "sum", x.double())
    gsparse.gspmm(g, "copy_lhs", "sum", torch.rand(N, 4))
    assert g.reverse()._tuned is not None
    gsparse.gspmm(g.reverse(), "copy_lhs", "sum", x)


def test_missing_and_malformed_caches(tmp_path, edge_index):
    g = gsparse.Graph(edge_index, num_nodes=N)
    g.use_tuned(str(tmp_path / "absent.json"))  # no cache yet: every call keeps the default
    assert g.tuned_schedule("spmm", "copy_lhs", "sum", "", [8], [8], "cpu") is None
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(gsparse.GraphError, match="tuning cache"):
        g.use_tuned(str(bad))


@pytest.mark.skipif(not os.environ.get("GSPARSE_TUNE"), reason="GSPARSE_TUNE (the gsparse-tune binary) not set")
def test_an_entry_written_by_gsparse_tune_is_found(tmp_path):
    cora = real_graph("cora")
    assert os.path.exists(cora), f"{cora} is missing"
    cache = tmp_path / "tuning.json"
    subprocess.run([os.environ["GSPARSE_TUNE"], "--graph", cora, "--feat", "8", "--mode", "random", "--budget", "2",
                    "--runs", "1", "--quiet", "--cache", str(cache)], check=True, capture_output=True)
    (entry,) = json.loads(cache.read_text())["entries"].values()
    g = gsparse.Graph.load(cora).use_tuned(str(cache))
    params = ", ".join(f"{k}={v}" for k, v in sorted(entry["schedule"]["params"].items()))
    assert g.tuned_schedule("spmm", "copy_lhs", "sum", "", [8], [8], "cpu") == f"{entry['schedule']['schedule']}{{{params}}}"
    x = torch.rand(g.num_src, 8)
    ref = gsparse.gspmm(gsparse.Graph.load(cora), "copy_lhs", "sum", x)
    torch.testing.assert_close(gsparse.gspmm(g, "copy_lhs", "sum", x), ref)


def test_default_schedule_names_the_point_the_kernels_run(edge_index):
    # The default point of a static graph, as gsparse-tune --show-default gives it: on the CPU a
    # cpu_spmm point, which the kernels accept as an explicit schedule with the same result; on CUDA
    # (answered without a GPU) a point of a GPU schedule.
    g = gsparse.Graph(edge_index, num_nodes=N)
    x = torch.rand(N, 8)
    cpu = g.default_schedule("spmm", "copy_lhs", "sum", lhs_feat=[8], rhs_feat=[8])
    assert cpu.startswith("cpu_spmm{"), cpu
    torch.testing.assert_close(gsparse.gspmm(g, "copy_lhs", "sum", x, schedule=cpu), gsparse.gspmm(g, "copy_lhs", "sum", x))
    cuda = g.default_schedule("spmm", "mul", "mean", lhs_feat=[8], rhs_feat=[1], device="cuda")
    assert cuda.startswith(("gpu_spmm{", "spmm_segments{")), cuda
    assert g.default_schedule("sddmm", "dot", "u", "v", [16], [16], "cuda").startswith("gpu_sddmm{")
    with pytest.raises(gsparse.ShapeError, match="both operand targets"):
        g.default_schedule("sddmm", "dot", "u")
    with pytest.raises(gsparse.ShapeError, match="broadcast"):
        g.default_schedule("spmm", "add", "sum", lhs_feat=[8], rhs_feat=[3])
    dynamic = gsparse.Graph(edge_index, num_nodes=N, dynamic=True)
    with pytest.raises(gsparse.GraphError, match="static graph"):
        dynamic.default_schedule("spmm", "copy_lhs", "sum", lhs_feat=[8])
