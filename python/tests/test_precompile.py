"""gsparse.precompile: one process compiles the layers' kernels into an empty persistent kernel
cache; a later process running those layers on other graphs of the same widths loads every kernel
and compiles none. Also the command line's errors."""

import os
import subprocess
import sys

import pytest

STEP = """
import torch, gsparse
gen = torch.Generator().manual_seed(3)
ei = torch.stack([torch.randint(0, 50, (400,), generator=gen), torch.randint(0, 30, (400,), generator=gen)])
g = gsparse.Graph(ei, num_src=50, num_dst=30, dynamic=True)
conv = gsparse.nn.SAGEConv(8, 12)
x = torch.rand(50, 8, requires_grad=True)
conv((x, x[:30]), g, size=(50, 30)).sum().backward()
sq = gsparse.Graph(torch.randint(0, 40, (2, 300), generator=gen), num_nodes=40, dynamic=True)
gin = gsparse.nn.GINConv(torch.nn.Linear(12, 8))
y = torch.rand(40, 12, requires_grad=True)
gin(y, sq).sum().backward()
s = gsparse.kernel_cache_stats()
print(s["compiled"], s["loaded"])
"""


def _run(args, cache, code=None):
    env = dict(os.environ, GSPARSE_KERNEL_CACHE=str(cache))
    cmd = [sys.executable, "-c", code] if code else [sys.executable, "-m", "gsparse.precompile"] + args
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)


def test_precompiled_kernels_are_loaded_by_a_later_process(tmp_path):
    r = _run(["--device", "cpu", "--models", "sage,gin", "--widths", "8,12"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "kernels compiled" in r.stdout, r.stdout
    compiled = int(r.stdout.split("kernels compiled ")[1].split(",")[0])
    assert compiled > 0, r.stdout
    r = _run([], tmp_path, STEP)
    assert r.returncode == 0, r.stdout + r.stderr
    compiled, loaded = (int(v) for v in r.stdout.split())
    assert compiled == 0 and loaded > 0, r.stdout


@pytest.mark.parametrize("args, message", [
    (["--models", "sage,unet", "--device", "cpu"], "unknown model 'unet'"),
    (["--widths", "8,x", "--device", "cpu"], "comma-separated integers"),
    (["--widths", "0", "--device", "cpu"], "positive width"),
    (["--frobnicate"], "unrecognized arguments"),
])
def test_command_line_errors(tmp_path, args, message):
    r = _run(args, tmp_path)
    assert r.returncode == 2 and message in r.stderr, r.stderr


def test_cache_off_is_reported(tmp_path):
    r = _run(["--device", "cpu"], "off")
    assert r.returncode == 2 and "cache is off" in r.stderr, r.stderr


NATIVE = "from gsparse import _tensor_graph as TG\nTG.NATIVE_BUILD_DEVICES.add('cpu')\n"
BUILDS = NATIVE + """
import torch, gsparse
gen = torch.Generator().manual_seed(5)
for e, n in ((300, 40), (70000, 900)):
    for ids in (torch.int32, torch.int64):
        src = torch.randint(0, n, (e,), generator=gen)
        dst = torch.randint(0, n, (e,), generator=gen).sort().values
        for csr in ("lazy", "now"):
            g = gsparse.Graph(torch.stack([src, dst]).to(ids), num_nodes=n, dynamic=True, csr=csr)
            gsparse.nn.GCNConv.loop_weights(g, 1.0, True, torch.float32)
s = gsparse.kernel_cache_stats()
print(s["compiled"], s["loaded"])
"""


def test_graph_build_kernels_are_all_precompiled(tmp_path):
    """The graph-build kernels compile one by one on first use; graph_build_kernels compiles every
    one a later process's graphs from a COO need (CPU graphs built by them, as CUDA graphs are)."""
    r = _run([], tmp_path, NATIVE + "from gsparse import precompile\nprecompile.graph_build_kernels('cpu')\n"
             "import gsparse\nprint(gsparse.kernel_cache_stats()['compiled'])")
    assert r.returncode == 0, r.stdout + r.stderr
    assert int(r.stdout.split()[-1]) > 0, r.stdout
    r = _run([], tmp_path, BUILDS)
    assert r.returncode == 0, r.stdout + r.stderr
    compiled, loaded = (int(v) for v in r.stdout.split()[-2:])
    assert compiled == 0 and loaded > 0, r.stdout

