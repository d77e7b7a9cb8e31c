"""gsparse.distributed.partition: splitting a graph by destination rows across ranks.

Rank r of P owns the contiguous node range [bounds[r], bounds[r + 1]): those destination rows with
all their in-edges, and those nodes' feature rows. The ranges are balanced by a cost per node of
its in-degree plus `node_weight` (nonzeros, with a little weight for the feature rows every node
brings), found with one searchsorted on the prefix sums of the CSR.

A rank's part (LocalPart) is a bipartite graph: its destinations are its own rows 0..n_local-1;
its sources are its own rows (local ids 0..n_local-1, so a row's own features are source row
`v`) followed by the halo: the distinct remote sources of its edges (local ids n_local..), sorted
by global id, hence grouped by the rank that owns them.

Contiguous ranges of an arbitrarily numbered graph cut many edges; `locality_order` gives a
relabeling (reverse Cuthill-McKee on the symmetrised graph, SciPy) that keeps neighbours close, and
`relabel_csr` applies a node order to a CSR (features then go through `x[order]`).
"""

import torch

from .._native import GraphError


def _csr_of(graph, with_ids=False):
    """(row_ptr int64, col_idx int64) on the CPU of a gsparse.Graph or a (row_ptr, col_idx) pair;
    with_ids: also the edge id of each CSR position (None for a pair: positions are the ids)."""
    from ..graph import Graph
    edge_ids = None
    if isinstance(graph, Graph):
        row_ptr, col_idx, edge_ids = graph.csr("cpu")
        edge_ids = edge_ids.to(torch.int64)
    elif isinstance(graph, (tuple, list)) and len(graph) == 2:
        row_ptr, col_idx = (torch.as_tensor(t) for t in graph)
    else:
        raise GraphError(f"expected a gsparse.Graph or a (row_ptr, col_idx) pair, got {type(graph).__name__}")
    csr = row_ptr.detach().to("cpu", torch.int64), col_idx.detach().to("cpu", torch.int64)
    return csr + (edge_ids,) if with_ids else csr


def balanced_bounds(row_ptr, num_parts, node_weight=1.0):
    """int64 [num_parts + 1] range boundaries over the rows of a CSR by destination: part k holds
    rows bounds[k]..bounds[k+1]-1, the parts' costs (in-edges + node_weight per row) as equal as
    contiguous ranges allow."""
    num_parts = int(num_parts)
    if num_parts < 1:
        raise GraphError(f"num_parts must be positive, got {num_parts}")
    row_ptr = torch.as_tensor(row_ptr).to("cpu", torch.float64)
    n = row_ptr.numel() - 1
    cost = row_ptr - row_ptr[0] + float(node_weight) * torch.arange(n + 1, dtype=torch.float64)
    targets = torch.arange(num_parts + 1, dtype=torch.float64) * (cost[-1] / num_parts)
    bounds = torch.searchsorted(cost, targets).clamp(max=n)
    bounds[0], bounds[-1] = 0, n
    return torch.cummax(bounds, 0).values.to(torch.int64)


def owner_of(nodes, bounds):
    """The rank owning each global node id."""
    return torch.searchsorted(bounds.to(nodes.device), nodes, right=True) - 1


class LocalPart:
    """One rank's rows of a graph split by destination rows (see the module docstring).

    rank, num_parts, bounds   this rank, the number of ranks, the int64 range boundaries
    start, stop, num_local    this rank's global node range and its size
    row_ptr, col_idx          int64 CSR of the local bipartite graph (col_idx: local source ids)
    edge_ids                  int64 per local edge (CSR position): its id in the whole graph (for a
                              gsparse.Graph, its edge id; for a CSR pair, its global CSR position),
                              for edge features
    halo_nodes                int64 global ids of the halo sources, sorted
    halo_counts               list: how many of them each rank owns
    num_nodes                 the global node count
    """

    def __init__(self, row_ptr, col_idx, bounds, rank, edge_offset=0):
        """row_ptr / col_idx: the CSR of this rank's rows alone (row_ptr[0] may be nonzero: it is
        then the position of the first edge in the global CSR), with global source ids."""
        self.bounds = torch.as_tensor(bounds).to("cpu", torch.int64)
        self.num_parts = self.bounds.numel() - 1
        self.rank = int(rank)
        if not 0 <= self.rank < self.num_parts:
            raise GraphError(f"rank {rank} is out of range for {self.num_parts} parts")
        self.start, self.stop = int(self.bounds[self.rank]), int(self.bounds[self.rank + 1])
        self.num_local = self.stop - self.start
        self.num_nodes = int(self.bounds[-1])
        row_ptr = torch.as_tensor(row_ptr).to("cpu", torch.int64)
        if row_ptr.numel() != self.num_local + 1:
            raise GraphError(f"rank {rank} owns {self.num_local} rows but row_ptr has {row_ptr.numel()} entries")
        first = int(row_ptr[0])
        col = torch.as_tensor(col_idx).to("cpu", torch.int64)
        if col.numel() != int(row_ptr[-1]) - first:
            col = col[first:int(row_ptr[-1])]
        self.edge_ids = torch.arange(first, first + col.numel(), dtype=torch.int64) + int(edge_offset)
        self.row_ptr = row_ptr - first
        is_local = (col >= self.start) & (col < self.stop)
        self.halo_nodes = torch.unique(col[~is_local])  # sorted, so grouped by owner
        local_col = torch.empty_like(col)
        local_col[is_local] = col[is_local] - self.start
        local_col[~is_local] = self.num_local + torch.searchsorted(self.halo_nodes, col[~is_local])
        self.col_idx = local_col
        owners = owner_of(self.halo_nodes, self.bounds)
        self.halo_counts = torch.bincount(owners, minlength=self.num_parts).tolist()

    @classmethod
    def from_global(cls, graph, bounds, rank):
        """This rank's part of a whole graph (a gsparse.Graph or a (row_ptr, col_idx) CSR by
        destination, global ids), every rank holding the structure (not the features)."""
        row_ptr, col_idx, edge_ids = _csr_of(graph, with_ids=True)
        bounds = torch.as_tensor(bounds).to("cpu", torch.int64)
        if int(bounds[-1]) != row_ptr.numel() - 1:
            raise GraphError(f"bounds end at {int(bounds[-1])} but the graph has {row_ptr.numel() - 1} rows")
        start, stop = int(bounds[rank]), int(bounds[rank + 1])
        part = cls(row_ptr[start:stop + 1], col_idx, bounds, rank)
        if edge_ids is not None:
            part.edge_ids = edge_ids[part.edge_ids]
        return part

    @property
    def nodes(self):
        """The global ids of the local rows."""
        return torch.arange(self.start, self.stop, dtype=torch.int64)

    @property
    def num_halo(self):
        return int(self.halo_nodes.numel())

    @property
    def num_edges(self):
        return int(self.col_idx.numel())

    def __repr__(self):
        return (f"LocalPart(rank={self.rank}/{self.num_parts}, rows {self.start}..{self.stop - 1}, "
                f"edges={self.num_edges}, halo={self.num_halo})")


def relabel_csr(row_ptr, col_idx, order):
    """The CSR of a graph renumbered so that new node i is old node order[i]: (row_ptr, col_idx,
    edge_perm) with edge_perm[j] the old CSR position of new position j (edge features:
    feat[edge_perm]). Node features follow with x[order]."""
    row_ptr, col_idx = _csr_of((row_ptr, col_idx))
    order = torch.as_tensor(order).to("cpu", torch.int64)
    n = row_ptr.numel() - 1
    if order.numel() != n:
        raise GraphError(f"order has {order.numel()} entries for {n} nodes")
    new_id = torch.empty_like(order)
    new_id[order] = torch.arange(n, dtype=torch.int64)
    deg = row_ptr.diff()[order]
    new_ptr = torch.zeros(n + 1, dtype=torch.int64)
    torch.cumsum(deg, 0, out=new_ptr[1:])
    row = torch.repeat_interleave(torch.arange(n, dtype=torch.int64), deg)
    edge_perm = row_ptr[order][row] + (torch.arange(int(new_ptr[-1]), dtype=torch.int64) - new_ptr[row])
    return new_ptr, new_id[col_idx[edge_perm]], edge_perm


def locality_order(row_ptr, col_idx):
    """A node order (order[i] = old id of new node i) keeping neighbours close: reverse
    Cuthill-McKee on the symmetrised graph (SciPy). Contiguous ranges of it cut fewer edges than
    those of shuffled ids."""
    try:
        import numpy as np
        import scipy.sparse as sp
        from scipy.sparse.csgraph import reverse_cuthill_mckee
    except ImportError as e:  # pragma: no cover - SciPy is a dependency of the tests
        raise GraphError(f"locality_order needs SciPy: {e}") from None
    row_ptr, col_idx = _csr_of((row_ptr, col_idx))
    n = row_ptr.numel() - 1
    a = sp.csr_matrix((np.ones(col_idx.numel(), dtype=np.int8), col_idx.numpy(), row_ptr.numpy()), shape=(n, n))
    sym = (a + a.T).tocsr()
    return torch.from_numpy(reverse_cuthill_mckee(sym, symmetric_mode=True).astype(np.int64))
