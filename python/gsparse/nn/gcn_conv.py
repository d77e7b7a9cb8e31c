"""GCNConv: the graph convolution of Kipf and Welling, with PyG's GCNConv signature.

    out = D^-1/2 (A + I) D^-1/2 (x W) + b,   D = the in-degrees of A + I (weighted with edge_weight)

Without edge weights the normalization is applied to the rows of x W before and after one g-SpMM
copy_lhs/sum on the graph with self-loops (no per-edge tensor at all); with edge weights the
g-SpMM is mul/sum with the weights, and their gradient flows through g-SDDMM.

On a dynamic graph without edge weights the graph's own self-loops are not removed (counting them
needs a read-back, and the new edge list a sort, every step): Graph.with_masked_self_loops appends
one loop per node on the device and marks the old ones, which get the weight 0. With c(v) the number
of v's own loops and l(v) the weight of its one loop afterwards (1 where c(v) > 0, else the fill
value: 1, or 2 when improved), deg(v) = in-degree(v) - c(v) + l(v), and the normalization goes into
the edge weights, D^-1/2[u] D^-1/2[v] (l(v) D^-1[v] on the loops), of one g-SpMM u_mul_e: exactly
the graph with its loops replaced by one loop of weight l per node (PyG's add_remaining_self_loops).
On CUDA the loop graph and (float32) its weights come from gsparse's graph-build kernels (four
kernels: the loops, the degree counters, the weights), and a graph without its CSR yet keeps its
COO: the loops follow its edges and the g-SpMM runs by nonzeros, without a sort.

On a static graph without edge weights whose rows average at most FOLD_MAX_AVG_DEGREE edges, the
normalization goes into per-edge weights as well, D^-1/2[u] D^-1/2[v] (times the loop weight with
`improved`), computed once and cached by the graph: one g-SpMM u_mul_e reads one scalar per edge
where scaling the rows of x W before and after the aggregation would read and write the [N, C]
features twice more, about 4 / (average degree + 1) of the aggregation's traffic (on an H100,
2026-11-27: lattice, batch, Erdos-Renyi, R-MAT graphs of 11-50 M edges 1.06x-1.27x faster per
epoch). On graphs with longer rows that saving is small and copy_lhs's schedules are the better
tuned (the reddit and ogbn-products twins, 492 and 51 edges a row: 2.9x and 1.5x slower folded), so
they keep the row scaling.
"""

import torch

from .. import _tensor_graph as TG
from .. import spmm
from .._native import ShapeError
from ..graph import Graph
from .graph_input import GraphInput

# Static graphs with at most this many edges per row on average fold the normalization into edge
# weights (see the module docstring).
FOLD_MAX_AVG_DEGREE = 32


class GCNConv(torch.nn.Module):
    def __init__(self, in_channels, out_channels, improved=False, cached=False, add_self_loops=True,
                 normalize=True, bias=True):
        super().__init__()
        self.in_channels, self.out_channels = in_channels, out_channels
        self.improved, self.cached = improved, cached
        self.add_self_loops, self.normalize = add_self_loops, normalize
        self.lin = torch.nn.Linear(in_channels, out_channels, bias=False)
        self.bias = torch.nn.Parameter(torch.empty(out_channels)) if bias else None
        self._graph = GraphInput()
        self.reset_parameters()

    def reset_parameters(self):
        torch.nn.init.xavier_uniform_(self.lin.weight)  # glorot, as PyG
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)

    def forward(self, x, edge_index, edge_weight=None):
        if x.dim() != 2:
            raise ShapeError(f"x must be [num_nodes, in_channels], got {list(x.shape)}")
        g = self._graph(edge_index, x.shape[0], x.shape[0])
        x = self.lin(x)
        if g.is_dynamic and edge_weight is None and self.add_self_loops:
            return self._rows_with_loops(g, x)
        if (edge_weight is None and self.add_self_loops and self.normalize and isinstance(g, Graph)
                and g.num_edges <= FOLD_MAX_AVG_DEGREE * max(g.num_dst, 1)):
            out = spmm.gspmm(g.with_self_loops(), "mul", "sum", x, self._folded_weights(g, x))
            return out + self.bias if self.bias is not None else out
        graph, w = self._loops_and_weights(g, g, g.num_edges, "num_edges", edge_weight, x)
        if self.normalize:
            dinv = self._inv_sqrt_degrees(graph, w, x)
            x = x * dinv
        out = self._aggregate(graph, x, w)
        if self.normalize:
            out = out * dinv
        if self.bias is not None:
            out = out + self.bias
        return out

    def _loops_and_weights(self, g, plain, num_edges, edges_what, edge_weight, x):
        """The graph the layer aggregates over (g's with self-loops, or plain without them) and its edge
        weights as [E, 1] in x's dtype (None without weights). g has with_self_loops and
        self_loop_weights (a Graph, or a DistGraph whose plain local graph is another object);
        num_edges and edges_what describe g's edges in the error for weights of the wrong shape."""
        fill = 2.0 if self.improved else 1.0
        if self.add_self_loops:
            graph = g.with_self_loops()
            if edge_weight is not None:
                edge_weight = g.self_loop_weights(edge_weight, fill)
            elif self.improved:
                edge_weight = g.self_loop_weights(torch.ones(num_edges, dtype=x.dtype, device=x.device), fill)
        else:
            graph = plain
        if edge_weight is None:
            return graph, None
        if edge_weight.dim() != 1 or edge_weight.shape[0] != graph.num_edges:
            raise ShapeError(f"edge_weight must be [{edges_what} = {num_edges}], got {list(edge_weight.shape)}")
        return graph, edge_weight.to(x.dtype).unsqueeze(-1)

    def _rows_with_loops(self, g, x):
        """The layer on a dynamic graph without edge weights (see the module docstring): one g-SpMM
        u_mul_e over the graph with loops appended on the device, the normalization folded into the
        per-edge weights; no read-back, no sort, no elementwise pass over the features."""
        graph, w = self.loop_weights(g, 2.0 if self.improved else 1.0, self.normalize, x.dtype)
        out = spmm.gspmm(graph, "mul", "sum", x, w)
        if self.bias is not None:
            out = out + self.bias
        return out

    def _folded_weights(self, g, x):
        """The normalized edge weights D^-1/2[u] A[u, v] D^-1/2[v] of a static graph's self-loop graph
        (Graph.with_self_loops) as [E, 1] in edge-id order, in x's dtype and on its device: the
        normalization of the row-scaling form, folded into the edges. Cached by the graph."""
        key = ("gcn_static_weights", self.improved, x.dtype, str(x.device))
        w = g._cache.get(key)
        if w is None:
            graph, a = self._loops_and_weights(g, g, g.num_edges, "num_edges", None, x)
            dinv = self._inv_sqrt_degrees(graph, a, x).squeeze(-1)
            src, dst = (t.to(torch.int64) for t in graph.coo(x.device))
            w = (dinv.index_select(0, src) * dinv.index_select(0, dst)).unsqueeze(-1)
            if a is not None:
                w = w * a
            g._cache[key] = w
        return w

    @staticmethod
    def loop_weights(g, fill, normalize, dtype):
        """(graph, w): g's loop graph (Graph.with_masked_self_loops) and its edge weights [E, 1]: 0 on
        g's own loops, l(v) on the appended ones, else 1; times D^-1/2[u] D^-1/2[v] when normalizing.
        Cached by the graph (every layer of a step shares them)."""
        key = ("gcn_loop_weights", fill, normalize, dtype)
        r = g._cache.get(key)
        if r is not None:
            return r
        graph, dropped = g.with_masked_self_loops()
        if dtype == torch.float32 and g.device.type in TG.NATIVE_BUILD_DEVICES and (g.num_src == g.num_dst or
                                                                                   not normalize):
            r = (graph, graph._t.gcn_loop_weights(dropped, fill, normalize))  # two graph-build kernels
            g._cache[key] = r
            return r
        lsrc, ldst = graph.coo(g.device)
        # c(v), the graph's own loops of v (the dropped edges), and l(v), 1 where c(v) > 0, else fill.
        loops = torch.zeros(g.num_dst, dtype=dtype, device=g.device).index_add_(0, ldst, dropped.to(dtype))
        loop_weight = loops.clamp(max=1.0) * (1.0 - fill) + fill
        kept = ~dropped
        appended = (lsrc == ldst).logical_and_(kept)
        w = torch.where(appended, loop_weight.index_select(0, ldst), kept.to(dtype))
        if normalize:
            dinv = (g.in_degrees(g.device).to(dtype) - loops + loop_weight).rsqrt()  # deg >= 1
            w = w * dinv.index_select(0, lsrc) * dinv.index_select(0, ldst)
        r = (graph, w.unsqueeze(-1))
        g._cache[key] = r
        return r

    @staticmethod
    def _inv_sqrt_degrees(graph, w, x):
        """D^-1/2 as a column [N, 1] in x's dtype (0 for nodes without in-edges)."""
        deg = graph.in_degrees(x.device).to(x.dtype) if w is None else spmm.gspmm(graph, "copy_rhs", "sum", None,
                                                                                    w).squeeze(-1)
        return deg.pow(-0.5).masked_fill(deg == 0, 0.0).unsqueeze(-1)

    @staticmethod
    def _aggregate(graph, h, w):
        """The sum of h over every row's in-edges, weighted by w when given."""
        return spmm.gspmm(graph, "copy_lhs", "sum", h) if w is None else spmm.gspmm(graph, "mul", "sum", h, w)

    def __repr__(self):
        return f"{self.__class__.__name__}({self.in_channels}, {self.out_channels})"
