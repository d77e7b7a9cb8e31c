"""The graph argument of the layers: a gsparse.Graph, or an edge index [2, E] converted once and
cached for that tensor object (while it lives and is not modified in place: its version, address and
shape unchanged, and the same node counts)."""

import weakref

import torch

from .._native import ShapeError
from ..graph import Graph


class GraphInput:
    """Remembers the Graph built for the last edge index passed to a layer.

    The cache is keyed by the edge-index tensor object itself (a weak reference), not by its
    address alone: a new tensor that the allocator places where a freed one was, with the same shape
    (a new batch of the same size), is a different graph and gets its own build."""

    def __init__(self):
        self._source = None  # weakref to the tensor the graph was built from
        self._key = None
        self._graph = None

    def __call__(self, edge_index, num_src, num_dst):
        if isinstance(edge_index, Graph):
            if edge_index.num_src != num_src or edge_index.num_dst != num_dst:
                raise ShapeError(f"the graph has {edge_index.num_src} source and {edge_index.num_dst} destination "
                                 f"nodes but the features have {num_src} and {num_dst} rows")
            return edge_index
        if not isinstance(edge_index, torch.Tensor):
            raise ShapeError(f"edge_index must be a gsparse.Graph or a [2, E] tensor, got {type(edge_index).__name__}")
        key = (edge_index.data_ptr(), tuple(edge_index.shape), edge_index._version, str(edge_index.device),
               num_src, num_dst)
        source = self._source() if self._source is not None else None
        if source is not edge_index or key != self._key:
            self._graph = None  # drop the old graph (and the arrays it holds) before building
            self._graph = Graph(edge_index, num_src=num_src, num_dst=num_dst)
            self._source = weakref.ref(edge_index)
            self._key = key
        return self._graph
