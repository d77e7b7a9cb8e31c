"""gsparse.distributed.dist_graph: DistGraph, one rank's part of a graph partitioned by
destination rows, ready for gsparse's kernels.

    dg = DistGraph.from_global(graph)            # collective: every rank calls it
    x = features[dg.nodes]                       # this rank's feature rows only
    x_src = dg.gather(x)                         # [own rows; halo rows], differentiable
    out = gsparse.gspmm(dg.graph, "copy_lhs", "sum", x_src)   # [num_local, F]: the rows' aggregates

`dg.graph` is a bipartite gsparse.Graph: destinations are this rank's rows (local ids), sources
are its rows followed by the halo rows (partition.LocalPart). Each rank's aggregate of its rows is
exactly the aggregate of those rows in the whole graph: all their in-edges are local, and the
remote sources' rows arrive by the halo exchange. The layers of gsparse.distributed.layers are
built on this.
"""

import torch
import torch.distributed as dist

from ..graph import Graph
from .exchange import HaloPlan, halo_exchange
from .partition import LocalPart, _csr_of, balanced_bounds


class DistGraph:
    """One rank's part of a partitioned graph (see the module docstring).

    part        the LocalPart (ranges, local CSR, halo ids, global edge ids)
    plan        the HaloPlan of the exchange
    graph       the local bipartite gsparse.Graph (num_dst = num_local, num_src = num_local + num_halo)
    nodes       int64 global ids of this rank's rows (x_local = x_global[dg.nodes])
    dynamic     build the local graphs as dynamic graphs on `device` (default False: static graphs,
                whose kernels pick schedules from the graph, the better choice for full-graph
                training where one graph serves every epoch)
    """

    def __init__(self, part, group=None, device=None, dynamic=False, method="auto"):
        self.part = part
        self.group = group
        self.device = torch.device(device) if device is not None else torch.device("cpu")
        self.dynamic = bool(dynamic)
        self.plan = HaloPlan(part, group, method)
        self.graph = self._make(part.row_ptr, part.col_idx)
        self._looped = None

    @classmethod
    def from_global(cls, graph, group=None, bounds=None, node_weight=1.0, device=None, dynamic=False, method="auto"):
        """Every rank holds the whole graph's structure (a gsparse.Graph, or a (row_ptr, col_idx) CSR by
        destination) and keeps its rows: ranges `bounds`, by default balanced_bounds(row_ptr, world
        size, node_weight), the same on every rank. Collective."""
        world, rank = dist.get_world_size(group), dist.get_rank(group)
        if bounds is None:
            bounds = balanced_bounds(_csr_of(graph)[0], world, node_weight)
        return cls(LocalPart.from_global(graph, bounds, rank), group, device, dynamic, method)

    def _make(self, row_ptr, col_idx):
        n_src = self.num_local + self.num_halo
        if self.dynamic:
            return Graph.from_csr(row_ptr.to(self.device, torch.int32), col_idx.to(self.device, torch.int32),
                                  num_src=n_src, dynamic=True)
        return Graph.from_csr(row_ptr, col_idx, num_src=n_src, dynamic=False)

    # --- Sizes and ids ---------------------------------------------------------------------------

    @property
    def num_local(self):
        return self.part.num_local

    @property
    def num_halo(self):
        return self.part.num_halo

    @property
    def num_nodes(self):
        """The whole graph's node count."""
        return self.part.num_nodes

    @property
    def rank(self):
        return self.part.rank

    @property
    def nodes(self):
        return self.part.nodes

    @property
    def bounds(self):
        return self.part.bounds

    def __repr__(self):
        return (f"DistGraph(rank={self.rank}/{self.part.num_parts}, rows={self.num_local}, halo={self.num_halo}, "
                f"edges={self.part.num_edges}, sends={self.plan.num_send})")

    # --- Features ----------------------------------------------------------------------------------

    def halo(self, x_local):
        """The halo rows of the distributed tensor whose local rows are x_local (collective)."""
        if x_local.shape[0] != self.num_local:
            raise ValueError(f"x_local has {x_local.shape[0]} rows, this rank owns {self.num_local}")
        return halo_exchange(x_local, self.plan)

    def gather(self, x_local):
        """[x_local; halo rows]: the source rows of self.graph (collective, differentiable)."""
        return torch.cat([x_local, self.halo(x_local)], 0)

    # --- Self-loops ----------------------------------------------------------------------------

    def with_self_loops(self):
        """The local graph with every existing self-loop removed and one loop v -> v added per
        local row (PyG's add_remaining_self_loops on the whole graph, restricted to these rows):
        its edges are the local non-loop edges in local edge-id order, then the loops of rows
        0..num_local-1. Cached."""
        if self._looped is None:
            rp, ci = self.part.row_ptr, self.part.col_idx
            n = self.num_local
            dst = torch.repeat_interleave(torch.arange(n, dtype=torch.int64), rp.diff())
            keep = (ci != dst).nonzero().flatten()
            loops = torch.arange(n, dtype=torch.int64)
            src = torch.cat([ci[keep], loops])
            dst2 = torch.cat([dst[keep], loops])
            loop_edge = torch.full((n,), -1, dtype=torch.int64)
            is_loop = (ci == dst).nonzero().flatten()
            loop_edge[dst[is_loop]] = is_loop
            ei = torch.stack([src, dst2])
            n_src = self.num_local + self.num_halo
            if self.dynamic:
                g = Graph(ei.to(self.device), num_src=n_src, num_dst=n, dynamic=True)
            else:
                g = Graph(ei, num_src=n_src, num_dst=n, dynamic=False)
            self._looped = (g, keep, loop_edge)
        return self._looped[0]

    def self_loop_weights(self, edge_weight, fill_value=1.0):
        """Edge weights of with_self_loops() from weights of the local edges (by local edge id):
        non-loop edges keep theirs, a row's loop takes its existing loop's weight or fill_value."""
        self.with_self_loops()
        _, keep, loop_edge = self._looped
        keep, loop_edge = keep.to(edge_weight.device), loop_edge.to(edge_weight.device)
        loops = torch.full((self.num_local,) + tuple(edge_weight.shape[1:]), float(fill_value),
                           dtype=edge_weight.dtype, device=edge_weight.device)
        has = (loop_edge >= 0).view(-1, *([1] * (edge_weight.dim() - 1)))
        loops = torch.where(has, edge_weight[loop_edge.clamp(min=0)], loops)
        return torch.cat([edge_weight[keep], loops])

    def local_edge_values(self, values):
        """The rows of a per-edge tensor of the whole graph (by edge id: see LocalPart.edge_ids)
        that belong to this rank's edges, in local edge-id order."""
        return values[self.part.edge_ids.to(values.device)]
