"""Bad input to the operators raises gsparse errors (ShapeError is a ValueError) whose message names
the problem; nothing crashes or returns a wrong result."""

import pytest
import torch

import gsparse
from conftest import N


def test_wrong_rows(graph):
    with pytest.raises(gsparse.ShapeError, match="rows"):
        gsparse.gspmm(graph, "copy_lhs", "sum", torch.rand(N + 1, 4))
    with pytest.raises(gsparse.ShapeError, match="edges"):
        gsparse.gspmm(graph, "mul", "sum", torch.rand(N, 4), torch.rand(3, 4))
    with pytest.raises(gsparse.ShapeError, match="rows"):
        gsparse.gsddmm(graph, "add", torch.rand(N, 4), torch.rand(N, 4), "u", "e")


def test_shapes_that_do_not_broadcast(graph):
    with pytest.raises(gsparse.ShapeError, match=r"\[3\].*\[4\]|\[4\].*\[3\]|broadcast"):
        gsparse.gspmm(graph, "add", "sum", torch.rand(N, 3), torch.rand(graph.num_edges, 4))
    with pytest.raises(gsparse.ShapeError):
        gsparse.gsddmm(graph, "dot", torch.rand(N, 3), torch.rand(N, 4))


def test_dtypes(graph):
    with pytest.raises(gsparse.ShapeError, match="float32 or float64"):
        gsparse.gspmm(graph, "copy_lhs", "sum", torch.ones(N, 2, dtype=torch.int64))
    with pytest.raises(gsparse.ShapeError, match="different dtypes"):
        gsparse.gspmm(graph, "mul", "sum", torch.rand(N, 2), torch.rand(graph.num_edges, 2, dtype=torch.float64))


def test_unknown_ops(graph):
    x = torch.rand(N, 2)
    with pytest.raises(gsparse.ShapeError, match="unknown g-SpMM op 'dot'"):
        gsparse.gspmm(graph, "dot", "sum", x, x)
    with pytest.raises(gsparse.ShapeError, match="unknown reduce 'prod'"):
        gsparse.gspmm(graph, "copy_lhs", "prod", x)
    with pytest.raises(gsparse.ShapeError, match="lhs_target"):
        gsparse.gsddmm(graph, "add", x, x, "w", "v")
    with pytest.raises(gsparse.ShapeError, match="needs rhs"):
        gsparse.gspmm(graph, "mul", "sum", x, None)


def test_not_a_graph():
    with pytest.raises(gsparse.ShapeError, match="gsparse.Graph"):
        gsparse.gspmm(torch.tensor([[0], [1]]), "copy_lhs", "sum", torch.rand(2, 2))


def test_unknown_device_kind(graph):
    from gsparse._native import _C
    out = torch.empty(N, 2)
    with pytest.raises(gsparse.ShapeError, match="device 'xla'"):
        _C.gspmm(graph._g, "copy_lhs", "sum", (out.data_ptr(), [N, 2], "float32", "xla"), None,
                 (out.data_ptr(), [N, 2], "float32", "cpu"), None, None, None)
