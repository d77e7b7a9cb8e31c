"""The persistent kernel cache from Python: kernels of dynamic graphs are stored in the cache
folder, a fresh process loads them instead of compiling, and results match the static path."""

import json
import os
import subprocess
import sys
import textwrap

import gsparse

_SCRIPT = textwrap.dedent("""
    import json, torch, gsparse
    torch.manual_seed(0)
    src = torch.tensor([0, 1, 2, 2, 3, 5, 5, 5])
    dst = torch.tensor([1, 2, 0, 3, 3, 0, 1, 4])
    g = gsparse.Graph(torch.stack([src, dst]), num_nodes=6, dynamic=True)
    x = torch.randn(6, 5, dtype=torch.float64)
    h = gsparse.gspmm(g, "copy_lhs", "mean", x, None)
    s = gsparse.gsddmm(g, "dot", x, x, "u", "v")
    ref_g = gsparse.Graph(torch.stack([src, dst]), num_nodes=6, dynamic=False)
    ok = torch.allclose(h, gsparse.gspmm(ref_g, "copy_lhs", "mean", x, None)) and \\
        torch.allclose(s, gsparse.gsddmm(ref_g, "dot", x, x, "u", "v"))
    print(json.dumps({"ok": bool(ok), "dir": gsparse.kernel_cache_dir(), **gsparse.kernel_cache_stats()}))
""")


def _run(env):
    out = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_second_process_loads_kernels(tmp_path):
    env = dict(os.environ, GSPARSE_KERNEL_CACHE=str(tmp_path / "kernels"))
    first = _run(env)
    assert first["ok"] and first["dir"] == str(tmp_path / "kernels")
    assert first["compiled"] >= 2 and first["loaded"] == 0 and first["failed"] == 0
    assert any(f.endswith(".so") for f in os.listdir(tmp_path / "kernels"))
    second = _run(env)
    assert second["ok"]
    assert second["compiled"] == 0 and second["loaded"] == first["compiled"]


def test_cache_off(tmp_path):
    env = dict(os.environ, GSPARSE_KERNEL_CACHE="off")
    r = _run(env)
    assert r["ok"] and r["dir"] == "" and r["compiled"] == 0 and r["loaded"] == 0


def test_set_kernel_cache_dir_round_trip(tmp_path):
    before = gsparse.kernel_cache_dir()
    try:
        gsparse.set_kernel_cache_dir(str(tmp_path))
        assert gsparse.kernel_cache_dir() == str(tmp_path)
        gsparse.set_kernel_cache_dir("")
        assert gsparse.kernel_cache_dir() == ""
    finally:
        gsparse.set_kernel_cache_dir(before)
