"""Shared fixtures of the gsparse package tests: small graphs with the cases kernels get wrong
(a node without in-edges, a node without out-edges, duplicate edges, self-loops, edge ids not in
CSR order), and plain PyTorch reference implementations of the operators."""

import os

import pytest
import torch

import gsparse


def pytest_configure(config):
    config.addinivalue_line("markers", "cuda: needs a CUDA device (run by python/tests/run_cuda_tests.py)")


# 6 nodes. Node 5 has no in-edges, node 4 no out-edges; 1 -> 2 twice; 3 -> 3 is a self-loop.
EDGES = [[0, 1, 1, 2, 3, 0, 5, 2, 1, 3, 5],
         [1, 2, 2, 0, 3, 2, 0, 4, 4, 1, 1]]
N = 6


@pytest.fixture(scope="session")
def edge_index():
    return torch.tensor(EDGES, dtype=torch.int64)


@pytest.fixture(scope="session")
def graph(edge_index):
    return gsparse.Graph(edge_index, num_nodes=N)


def real_graph(name):
    """Path of a small real graph committed in datasets/real (GSPARSE_REAL_GRAPHS_DIR overrides the folder)."""
    folder = os.environ.get("GSPARSE_REAL_GRAPHS_DIR",
                            os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "datasets", "real"))
    return os.path.join(folder, name + ".mtx")


# --- Reference implementations (loops over edges in PyTorch, no gsparse) ------------------------

def binary(op, a, b):
    return {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "div": lambda: a / b,
            "copy_lhs": lambda: a, "copy_rhs": lambda: b,
            "dot": lambda: (a * b).sum(-1, keepdim=True)}[op]()


def ref_gspmm(edge_index, num_dst, op, reduce, lhs, rhs):
    src, dst = edge_index
    rows = []
    E = src.shape[0]
    for v in range(num_dst):
        msgs = [binary(op, lhs[src[e]] if lhs is not None else None, rhs[e] if rhs is not None else None)
                for e in range(E) if dst[e] == v]
        if not msgs:
            rows.append(None)
            continue
        m = torch.stack(torch.broadcast_tensors(*msgs)) if len(msgs) > 1 else msgs[0].unsqueeze(0)
        rows.append({"sum": lambda: m.sum(0), "mean": lambda: m.mean(0), "max": lambda: m.max(0).values,
                     "min": lambda: m.min(0).values}[reduce]())
    shape = next(r.shape for r in rows if r is not None)
    zero = torch.zeros(shape, dtype=(lhs if lhs is not None else rhs).dtype)
    return torch.stack([r if r is not None else zero for r in rows])


def ref_gsddmm(edge_index, op, lhs, rhs, lt, rt):
    src, dst = edge_index
    pick = {"u": lambda x, e: x[src[e]], "v": lambda x, e: x[dst[e]], "e": lambda x, e: x[e]}
    out = []
    for e in range(src.shape[0]):
        a = pick[lt](lhs, e) if lhs is not None else None
        b = pick[rt](rhs, e) if rhs is not None else None
        out.append(binary(op, a, b))
    return torch.stack(out)
