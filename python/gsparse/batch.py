"""Batches of small graphs as one block-diagonal graph, built on the device.

    g, batch = gsparse.batch_graphs(edge_indices, num_nodes)   # lists, one entry per graph
    h = conv(x, g)                                              # x: the graphs' node rows, stacked
    y = gsparse.nn.global_mean_pool(h, batch, size=len(num_nodes))

Graph i's nodes become nodes offset_i .. offset_i + num_nodes[i] - 1 (offset_i = the node counts of
the graphs before it) and its edges follow those of the graphs before it, so edge-feature rows
stack the same way. A PyG Batch already holds this edge_index and batch vector: pass them to
Graph(batch.edge_index, num_nodes=batch.num_nodes) and the pooling functions directly.
"""

import torch

from ._native import GraphError
from .graph import Graph


def batch_graphs(edge_indices, num_nodes, device=None, validate=True):
    """(block-diagonal dynamic gsparse.Graph, batch vector [total nodes] of graph ids).
    edge_indices: [2, E_i] integer tensors (graph-local ids); num_nodes: the node count of each."""
    if len(edge_indices) != len(num_nodes):
        raise GraphError(f"{len(edge_indices)} edge indices but {len(num_nodes)} node counts")
    if device is None:
        device = edge_indices[0].device if edge_indices else torch.device("cpu")
    counts = torch.as_tensor([int(n) for n in num_nodes], dtype=torch.int64)
    if (counts < 0).any():
        raise GraphError("node counts must be >= 0")
    edges = torch.as_tensor([int(e.shape[-1]) for e in edge_indices], dtype=torch.int64)
    for i, e in enumerate(edge_indices):
        if e.dim() != 2 or e.shape[0] != 2:
            raise GraphError(f"edge index {i} must have shape [2, E], got {list(e.shape)}")
    total = int(counts.sum())
    offsets = torch.zeros(len(num_nodes), dtype=torch.int64)
    if len(num_nodes) > 1:
        torch.cumsum(counts[:-1], 0, out=offsets[1:])
    ei = torch.cat([e.to(device, torch.int64) for e in edge_indices], dim=1) if edge_indices else \
        torch.zeros((2, 0), dtype=torch.int64, device=device)
    dev_counts, dev_edges, dev_offsets = (t.to(device, non_blocking=True) for t in (counts, edges, offsets))
    E = int(edges.sum())
    if validate and E:
        local_n = torch.repeat_interleave(dev_counts, dev_edges, output_size=E)
        bad = ((ei < 0) | (ei >= local_n)).any()
        if bool(bad):
            raise GraphError("an edge index holds a node id outside its graph's [0, num_nodes)")
    ei = ei + torch.repeat_interleave(dev_offsets, dev_edges, output_size=E)
    batch = torch.repeat_interleave(torch.arange(len(num_nodes), device=device), dev_counts, output_size=total)
    g = Graph(ei, num_nodes=total, dynamic=True, validate=False)
    return g, batch
