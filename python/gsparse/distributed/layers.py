"""gsparse.distributed.layers: gsparse.nn layers on a partitioned graph (DistGraph).

Each layer is the gsparse.nn layer of the same name (same constructor, same parameters and
state_dict keys, so weights move between a single-process model and a partitioned one), with
forward(x_local, dist_graph): x_local holds this rank's rows, the result this rank's output rows.
A layer exchanges the halo rows it needs (one all-to-all forward, its transpose backward) and runs
gsparse's kernels on the local bipartite graph; the result equals the single-process layer's rows
to float tolerance.

What crosses the network: DistGCNConv exchanges min(in_channels, out_channels) per halo row
(projecting before the exchange when that narrows the rows, else aggregating the inputs and
projecting the aggregates: the same result, and the g-SpMM runs at the narrower width too); DistSAGEConv with mean / sum aggregation projects first when out_channels <
in_channels (min(in, out) per halo row); DistGINConv and DistGATConv exchange their input rows.

Parameters are replicated: after backward, sum their gradients over the ranks with
allreduce_gradients(model) (each rank's loss being its rows' share of the global loss, e.g. the sum
over its training rows divided by the global number of training rows).
"""

import torch
import torch.distributed as dist
import torch.nn.functional as F

from .. import nn as gnn
from .. import spmm
from .._native import ShapeError
from .dist_graph import DistGraph


def _check(x, dg):
    if not isinstance(dg, DistGraph):
        raise ShapeError(f"a distributed layer needs a gsparse.distributed.DistGraph, got {type(dg).__name__}")
    if x.dim() < 2 or x.shape[0] != dg.num_local:
        raise ShapeError(f"x must hold this rank's {dg.num_local} rows, got shape {list(x.shape)}")


class DistGCNConv(gnn.GCNConv):
    """GCNConv on a DistGraph: out[v] = dinv[v] * sum over u -> v (and v -> v) of dinv[u] (x W)[u] + b,
    the degrees those of the whole graph (every row's in-edges are local to its rank)."""

    def forward(self, x, dg, edge_weight=None):
        _check(x, dg)
        graph, w = self._loops_and_weights(dg, dg.graph, dg.part.num_edges, "num local edges", edge_weight, x)
        # Linear maps commute with the weighted sums, so the layer exchanges and aggregates
        # min(in, out) features per row: project first (as GCNConv) when that narrows the rows,
        # else aggregate the inputs and project the aggregates.
        aggregate_first = x.shape[-1] < self.out_channels
        h = x if aggregate_first else self.lin(x)
        if self.normalize:
            dinv = self._inv_sqrt_degrees(graph, w, x)
            h = h * dinv
        out = self._aggregate(graph, dg.gather(h), w)
        if aggregate_first:
            out = self.lin(out)
        if self.normalize:
            out = out * dinv
        if self.bias is not None:
            out = out + self.bias
        return out


class DistSAGEConv(gnn.SAGEConv):
    """SAGEConv on a DistGraph: lin_l(aggregate of in-neighbours) + lin_r(x)."""

    def forward(self, x, dg):
        _check(x, dg)
        reduce = {"add": "sum"}.get(self.aggr, self.aggr)
        if reduce in ("mean", "sum") and self.out_channels < x.shape[-1]:
            # W mean(x) = mean(W x): project on the owners, exchange out_channels per halo row.
            out = spmm.gspmm(dg.graph, "copy_lhs", reduce, dg.gather(F.linear(x, self.lin_l.weight)))
            if self.lin_l.bias is not None:
                out = out + self.lin_l.bias
            if self.root_weight:
                out = out + self.lin_r(x)
            if self.normalize:
                out = F.normalize(out, p=2.0, dim=-1)
            return out
        return super().forward((dg.gather(x), x), dg.graph)


class DistGINConv(gnn.GINConv):
    """GINConv on a DistGraph: nn((1 + eps) x + sum of in-neighbours)."""

    def forward(self, x, dg):
        _check(x, dg)
        return super().forward((dg.gather(x), x), dg.graph)


class DistGATConv(gnn.GATConv):
    """GATConv on a DistGraph (attention over each row's in-edges, all local to its rank)."""

    def forward(self, x, dg, return_attention_weights=None):
        _check(x, dg)
        graph = dg.with_self_loops() if self.add_self_loops else dg.graph
        loops, self.add_self_loops = self.add_self_loops, False  # the loops are in `graph` already
        try:
            return super().forward((dg.gather(x), x), graph, return_attention_weights=return_attention_weights)
        finally:
            self.add_self_loops = loops


def allreduce_gradients(module, group=None, op=dist.ReduceOp.SUM):
    """Sums (op) every parameter gradient of module over the ranks of group, in one flat
    all-reduce per dtype and device (parameters without a gradient count as zeros, so every rank
    makes the same calls)."""
    params = [p for p in module.parameters() if p.requires_grad]
    buckets = {}
    for p in params:
        buckets.setdefault((p.dtype, p.device), []).append(p)
    for (dtype, device), ps in sorted(buckets.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]))):
        flat = torch.cat([(p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1) for p in ps])
        dist.all_reduce(flat, op=op, group=group)
        offset = 0
        for p in ps:
            n = p.numel()
            g = flat[offset:offset + n].view_as(p)
            if p.grad is None:
                p.grad = g.clone()
            else:
                p.grad.copy_(g)
            offset += n
