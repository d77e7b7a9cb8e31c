"""Readout of batched graphs: global_add_pool / global_mean_pool / global_max_pool with PyG's
signatures. `batch` [num_nodes] gives each node's graph, sorted (as PyG's DataLoader and
gsparse.batch_graphs produce it); the pooling is one g-SpMM over the readout graph whose rows are
the graphs and whose row g lists the nodes of graph g (a CSR built on the device: one searchsorted,
no sort), so it has autograd like every g-SpMM."""

import torch

from .. import spmm
from .._native import ShapeError
from .. import _tensor_graph as TG
from ..graph import Graph


def readout_graph(batch, size=None):
    """The dynamic graph from num_nodes sources to `size` graphs with an edge from every node to its
    graph. size defaults to batch.max() + 1 (one synchronisation, as in PyG)."""
    if not isinstance(batch, torch.Tensor) or batch.dim() != 1 or batch.dtype.is_floating_point:
        raise ShapeError("batch must be a 1-d integer tensor of graph ids")
    n = batch.numel()
    if size is None:
        size = int(batch.max()) + 1 if n else 0
    if n > TG.INT32_MAX:
        raise ShapeError(f"{n} nodes exceed int32 indices (gsparse uses int32)")
    # The padded row_ptr of the graph view layout in one searchsorted: rows past size get n.
    row_ptr = TG.row_ptr_of_sorted(batch, size)
    col_idx = torch.arange(max(n, 1), dtype=torch.int32, device=batch.device)
    return Graph(_tensor_graph=TG.TensorGraph(n, size, n, row_ptr, col_idx))


def _pool(x, batch, size, reduce):
    if batch is None:
        batch = torch.zeros(x.shape[0], dtype=torch.int64, device=x.device)
        size = 1
    if batch.numel() != x.shape[0]:
        raise ShapeError(f"batch has {batch.numel()} entries but x {x.shape[0]} rows")
    return spmm.gspmm(readout_graph(batch, size), "copy_lhs", reduce, x)


def global_add_pool(x, batch, size=None):
    """Per graph, the sum of its nodes' rows of x: [size, *x.shape[1:]]."""
    return _pool(x, batch, size, "sum")


def global_mean_pool(x, batch, size=None):
    """Per graph, the mean of its nodes' rows of x (0 for a graph without nodes)."""
    return _pool(x, batch, size, "mean")


def global_max_pool(x, batch, size=None):
    """Per graph, the elementwise max of its nodes' rows of x (0 for a graph without nodes)."""
    return _pool(x, batch, size, "max")
