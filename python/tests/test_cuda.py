"""CUDA tensors: the GPU kernels against the CPU kernels (float32), run on PyTorch's current stream
(a side stream included) without copies, backward included, and the layers. Run with
python/tests/run_cuda_tests.py (ctest python.cuda); skipped without a CUDA device."""

import os
import subprocess
import sys

import pytest
import torch

import gsparse

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")]

SDDMM_PENDING = "g-SDDMM runs on CPU tensors only"


def random_graph(n=300, e=4000, seed=0):
    gen = torch.Generator().manual_seed(seed)
    ei = torch.randint(0, n, (2, e), generator=gen)
    ei[1, :50] = 7  # one long row
    return gsparse.Graph(ei, num_nodes=n), ei


def sddmm_or_skip(fn):
    try:
        return fn()
    except gsparse.ShapeError as err:
        if SDDMM_PENDING in str(err):
            pytest.skip("this build of gsparse has no CUDA g-SDDMM yet")
        raise


@pytest.mark.parametrize("op, reduce", [("copy_lhs", "sum"), ("mul", "sum"), ("copy_lhs", "mean"),
                                        ("copy_lhs", "max"), ("add", "min"), ("copy_rhs", "sum")])
def test_gspmm_matches_cpu(op, reduce):
    g, ei = random_graph()
    x = torch.rand(g.num_src, 33)
    w = torch.rand(g.num_edges, 1 if op == "mul" else 33) + 0.5
    ref = gsparse.gspmm(g, op, reduce, x, w)
    xc, wc = x.cuda().requires_grad_(), w.cuda()
    out = gsparse.gspmm(g, op, reduce, xc, wc)
    assert out.is_cuda
    torch.testing.assert_close(out.cpu(), ref, rtol=1e-4, atol=1e-4)
    if op != "copy_rhs":
        x_cpu = x.clone().requires_grad_()
        gsparse.gspmm(g, op, reduce, x_cpu, w).pow(2).sum().backward()
        out.pow(2).sum().backward()
        torch.testing.assert_close(xc.grad.cpu(), x_cpu.grad, rtol=1e-4, atol=1e-4)


def test_side_stream_and_no_copies():
    g, _ = random_graph(seed=1)
    x = torch.rand(g.num_src, 64, device="cuda")
    ref = gsparse.gspmm(g, "copy_lhs", "sum", x.cpu())
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        before = torch.cuda.memory_allocated()
        out = gsparse.gspmm(g, "copy_lhs", "sum", x)
        # Only the output was allocated by PyTorch: the kernel read x in place.
        assert torch.cuda.memory_allocated() - before <= out.numel() * 4 + 512
    torch.cuda.current_stream().wait_stream(s)
    torch.testing.assert_close(out.cpu(), ref, rtol=1e-4, atol=1e-4)


def test_gsddmm_and_softmax_match_cpu():
    g, _ = random_graph(seed=2)
    a, b = torch.rand(g.num_src, 2, 16), torch.rand(g.num_dst, 2, 16)
    ref = gsparse.gsddmm(g, "dot", a, b, "u", "v")
    out = sddmm_or_skip(lambda: gsparse.gsddmm(g, "dot", a.cuda(), b.cuda(), "u", "v"))
    torch.testing.assert_close(out.cpu(), ref, rtol=1e-4, atol=1e-4)
    s = torch.randn(g.num_edges, 4)
    torch.testing.assert_close(gsparse.edge_softmax(g, s.cuda()).cpu(), gsparse.edge_softmax(g, s),
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("make", [lambda: gsparse.nn.GCNConv(24, 16), lambda: gsparse.nn.SAGEConv(24, 16),
                                  lambda: gsparse.nn.SAGEConv(24, 16, aggr="max"),
                                  lambda: gsparse.nn.GATConv(24, 8, heads=2)])
def test_layers_match_cpu(make):
    g, _ = random_graph(seed=3)
    torch.manual_seed(0)
    layer = make()
    x = torch.rand(g.num_src, 24)
    x_cpu = x.clone().requires_grad_()
    ref = sddmm_or_skip(lambda: layer(x_cpu, g))
    ref.pow(2).sum().backward()
    ref_grads = [p.grad.clone() for p in layer.parameters()]
    layer.zero_grad()
    layer = layer.cuda()
    xc = x.cuda().requires_grad_()
    out = sddmm_or_skip(lambda: layer(xc, g))
    out.pow(2).sum().backward()
    torch.testing.assert_close(out.cpu(), ref.detach(), rtol=1e-3, atol=1e-4)
    torch.testing.assert_close(xc.grad.cpu(), x_cpu.grad, rtol=1e-3, atol=1e-4)
    for p, r in zip(layer.parameters(), ref_grads):
        torch.testing.assert_close(p.grad.cpu(), r, rtol=1e-3, atol=1e-3)


def test_mixed_devices_rejected():
    g, _ = random_graph()
    with pytest.raises(gsparse.ShapeError, match="device"):
        gsparse.gspmm(g, "mul", "sum", torch.rand(g.num_src, 4, device="cuda"), torch.rand(g.num_edges, 4))


def test_out_of_gpu_memory_is_an_error_and_the_process_recovers():
    """A static graph whose device copies do not fit in the GPU's free memory gives a KernelError,
    keeps no device memory and works once memory is free again (oom_case.py). It runs in a process of
    its own: it fills the device, and a crash must fail this test, not end the session."""
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, os.path.join(here, "oom_case.py")], capture_output=True, text=True,
                       timeout=600, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    assert "recovered" in r.stdout, r.stdout


@pytest.mark.parametrize("dynamic", [False, True])
def test_float64_matches_cpu(dynamic):
    """float64 features on the GPU (kernels without 32-bit warp shuffles) against the CPU."""
    g_cpu, ei = random_graph()
    g = gsparse.Graph(ei.cuda(), num_nodes=300, dynamic=dynamic) if dynamic else g_cpu
    gen = torch.Generator().manual_seed(4)
    for f in (1, 4, 33):
        x = torch.rand(300, f, generator=gen, dtype=torch.float64)
        for reduce in ("sum", "mean", "max"):
            torch.testing.assert_close(gsparse.gspmm(g, "copy_lhs", reduce, x.cuda()).cpu(),
                                       gsparse.gspmm(g_cpu, "copy_lhs", reduce, x))
        y = torch.rand(300, f, generator=gen, dtype=torch.float64)
        torch.testing.assert_close(gsparse.gsddmm(g, "dot", x.cuda(), y.cuda(), "u", "v").cpu(),
                                   gsparse.gsddmm(g_cpu, "dot", x, y, "u", "v"))
