"""Kernels called from several host threads at once (each on its own CUDA stream on a GPU): on one
shared static graph, on one shared dynamic graph and on a dynamic graph per thread, with a feature
width no other test uses, so the threads also race to compile and cache the same kernels. Every
result must equal the one computed alone, before the threads start."""

import threading

import torch

import gsparse

THREADS = 4
ROUNDS = 6
F = 13  # compiled first inside the threads


def _graphs(device):
    gen = torch.Generator().manual_seed(7)
    ei = torch.randint(0, 300, (2, 3000), generator=gen)
    static = gsparse.Graph(ei, num_nodes=300, dynamic=False)
    shared_dyn = gsparse.Graph(ei.to(device), num_nodes=300, dynamic=True)
    own = [gsparse.Graph(torch.randint(0, 200, (2, 1500), generator=gen).to(device), num_nodes=200, dynamic=True)
           for _ in range(THREADS)]
    return static, shared_dyn, own


def _work(g, x, w):
    """g-SpMM forward and backward and a g-SDDMM on g."""
    xv = x.detach().clone().requires_grad_()
    out = gsparse.gspmm(g, "mul", "mean", xv, w)
    out.square().sum().backward()
    s = gsparse.gsddmm(g, "dot", x, x, "u", "v")
    return out.detach(), xv.grad, s


def check_threads_and_streams(device):
    device = torch.device(device)
    static, shared_dyn, own = _graphs(device)
    gen = torch.Generator().manual_seed(8)
    x3 = torch.rand(300, F, generator=gen)
    x2 = torch.rand(200, F, generator=gen)
    w3 = torch.rand(static.num_edges, 1, generator=gen)
    w2 = [torch.rand(g.num_edges, 1, generator=gen) for g in own]
    jobs = []  # (graph, x, w) per thread: the shared graphs and each thread's own
    for i in range(THREADS):
        jobs.append([(static, x3.to(device), w3.to(device)),
                     (shared_dyn, x3.to(device), w3.to(device)),
                     (own[i], x2.to(device), w2[i].to(device))])
    # The same work in other threads first: every kernel compiles inside the race below.
    results = [[None] * 3 for _ in range(THREADS)]
    errors = []
    start = threading.Barrier(THREADS)

    def run(i):
        try:
            stream = torch.cuda.Stream(device) if device.type == "cuda" else None
            start.wait()
            for _ in range(ROUNDS):
                if stream is not None:
                    with torch.cuda.stream(stream):
                        got = [_work(*job) for job in jobs[i]]
                    stream.synchronize()
                else:
                    got = [_work(*job) for job in jobs[i]]
                results[i] = [tuple(t.cpu() for t in r) for r in got]
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(f"thread {i}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    # The reference: each job alone, on the default stream, after the threads.
    for i in range(THREADS):
        for j, job in enumerate(jobs[i]):
            want = [t.cpu() for t in _work(*job)]
            for got, ref in zip(results[i][j], want):
                torch.testing.assert_close(got, ref, rtol=1e-5, atol=1e-6, msg=f"thread {i}, graph {j}")
