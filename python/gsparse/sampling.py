"""gsparse.sampling: uniform neighbour sampling on the device, producing gsparse graphs directly.

    sampler = gsparse.sampling.NeighborSampler(graph, fanouts=[25, 10])   # graph on the GPU
    batch = sampler.sample(seeds)            # seeds: int64 node ids on the graph's device
    x = features[batch.input_nodes]          # the rows the first layer reads
    for conv, block in zip(convs, batch.blocks):
        x = conv((x, x[:block.num_dst]), block)

A mini-batch holds one bipartite block per layer, outermost first (DGL's blocks; PyG's `adjs` of
the classic NeighborSampler). Block l has num_dst destination nodes, the first num_dst of its
num_src source nodes are those same nodes (so `x[:num_dst]` are the destinations' own rows), and
the next block's sources are this block's destinations; the other sources follow in ascending
id order (which also keeps the feature gather `features[batch.input_nodes]` in address order). Each block is a dynamic gsparse.Graph whose
CSR is produced by the sampler itself: no sort, no validation, no host round trip beyond the one
read of the sampled sizes per layer that every sampler needs to allocate its outputs.

Sampling is uniform over each node's in-neighbours (the sources of its in-edges), `fanout` of them
per node and layer: without replacement (replace=False) a node of in-degree d keeps min(d, fanout)
distinct edges (every such subset equally likely: random keys sorted per node, or for layers of
hubs Floyd's algorithm vectorised over the nodes); with replacement it draws fanout edges (none
when d = 0). A fanout of -1 takes every in-edge.
Results are deterministic for a given seed (torch.Generator on the graph's device).
"""

import torch

from ._native import GraphError, ShapeError
from ._tensor_graph import TensorGraph, padded_row_ptr
from .graph import Graph


class MiniBatch:
    """The result of one sampling step.

    input_nodes   int64 ids (in the sampled graph) of the first block's source nodes: the feature
                  rows the model reads;
    seeds         the output nodes (the last block's destinations), in the given order;
    blocks        one gsparse.Graph per layer, outermost first;
    edge_ids      per block, the int64 ids in the sampled graph of the block's edges (by the block's
                  edge ids), for edge features.
    """

    def __init__(self, input_nodes, seeds, blocks, edge_ids):
        self.input_nodes, self.seeds, self.blocks, self.edge_ids = input_nodes, seeds, blocks, edge_ids

    @property
    def n_id(self):
        """PyG's name of input_nodes."""
        return self.input_nodes

    @property
    def batch_size(self):
        return int(self.seeds.numel())

    @property
    def adjs(self):
        """PyG's classic NeighborSampler form: [(graph, e_id, (num_src, num_dst))], outermost first.
        A gsparse layer takes the graph where PyG's takes edge_index."""
        return [(b, e, (b.num_src, b.num_dst)) for b, e in zip(self.blocks, self.edge_ids)]

    def __repr__(self):
        sizes = ", ".join(f"({b.num_src}, {b.num_dst}, {b.num_edges})" for b in self.blocks)
        return f"MiniBatch(batch_size={self.batch_size}, blocks=[{sizes}])"


def _as_csr(graph):
    """(row_ptr int64, col_idx int64) by destination of a gsparse.Graph or a (row_ptr, col_idx) pair."""
    if isinstance(graph, Graph):
        row_ptr, col_idx, _ = graph.csr(graph.device)
        return row_ptr.to(torch.int64), col_idx.to(torch.int64), graph.num_src
    if isinstance(graph, (tuple, list)) and len(graph) == 2:
        row_ptr, col_idx = graph
        if not (isinstance(row_ptr, torch.Tensor) and isinstance(col_idx, torch.Tensor)):
            raise GraphError("NeighborSampler needs a gsparse.Graph or a (row_ptr, col_idx) pair of tensors")
        if row_ptr.dim() != 1 or col_idx.dim() != 1 or row_ptr.device != col_idx.device:
            raise GraphError("row_ptr and col_idx must be 1-d tensors on one device")
        n = row_ptr.numel() - 1
        return row_ptr.to(torch.int64), col_idx.to(torch.int64), n
    raise GraphError(f"NeighborSampler needs a gsparse.Graph or a (row_ptr, col_idx) pair, got {type(graph).__name__}")


# Without replacement, a node's k-subset of its in-edges comes from random keys: one key per
# candidate edge of the layer, one sort of (node, key), the first k of each node; as many host
# operations for any fan-out. The layer then holds a key, an order and a row id per candidate, so
# this runs while the candidates are at most KEY_CANDIDATES_PER_PICK times the picks and at most
# KEY_CANDIDATES_MAX; beyond (layers of hubs), Floyd's algorithm (_choose), whose host work grows
# with the fan-out but whose memory does not.
KEY_CANDIDATES_PER_PICK = 64
KEY_CANDIDATES_MAX = 1 << 25


def _choose_by_keys(deg, total, row, slot, generator):
    """Positions within each node's in-edges of the sampled edges (row, slot): the node's in-edges
    in a random order (random keys, sorted per node), the first of them."""
    n = deg.numel()
    device = deg.device
    first = torch.zeros(n + 1, dtype=torch.int64, device=device)
    torch.cumsum(deg, 0, out=first[1:])
    cand_row = torch.repeat_interleave(torch.arange(n, device=device), deg, output_size=total)
    key = torch.rand(total, generator=generator, device=device, dtype=torch.float64) + cand_row
    order = torch.argsort(key)
    at = first[row]
    return order[at + slot] - at


def _choose(deg, fanout, replace, generator):
    """[n, fanout] positions within each node's in-edges: the first min(deg, fanout) (or, with
    replacement, all fanout) columns of a row are its sampled positions."""
    n = deg.numel()
    device = deg.device
    if replace:
        r = torch.rand((n, fanout), generator=generator, device=device)
        return torch.minimum((r * deg.unsqueeze(1)).to(torch.int64), (deg - 1).clamp(min=0).unsqueeze(1))
    picks = torch.empty((n, fanout), dtype=torch.int64, device=device)
    # Floyd's algorithm for a uniform k-subset of range(d): for j = d - k .. d - 1 draw t in [0, j];
    # take t unless already taken, then j. Rows with d <= k take 0..d-1.
    base = deg - fanout
    for i in range(fanout):
        j = base + i
        t = (torch.rand(n, generator=generator, device=device) * (j + 1).clamp(min=1)).to(torch.int64)
        t = torch.minimum(t, j.clamp(min=0))
        if i:
            taken = (picks[:, :i] == t.unsqueeze(1)).any(1)
            t = torch.where(taken, j, t)
        picks[:, i] = t
    small = (deg <= fanout).unsqueeze(1)
    return torch.where(small, torch.arange(fanout, device=device).expand(n, fanout), picks)


# Relabeling marks the sampled nodes in a table of one int32 per node of the graph while the table
# is at most MARK_NODES_PER_ENTRY times the layer's entries (destinations + edges); beyond, a sort.
MARK_NODES_PER_ENTRY = 64


def _relabel(nodes, nbr, num_nodes):
    """(src_nodes, local): the block's source nodes, the destinations `nodes` first (in order, distinct)
    and then the other sampled neighbours in ascending id order, and every neighbour's int32 index
    among them. A node table marked on the device (no sort) when it is small enough, else a
    unique; the same result either way, with one synchronisation (the count of new nodes)."""
    device = nodes.device
    n_dst = nodes.numel()
    dst_rank = torch.arange(n_dst, device=device)
    if num_nodes <= MARK_NODES_PER_ENTRY * (n_dst + nbr.numel()):
        table = torch.zeros(num_nodes, dtype=torch.int32, device=device)
        table[nbr] = 1
        table[nodes] = 0
        new = torch.nonzero(table).squeeze(1)
        table[nodes] = dst_rank.to(torch.int32)
        table[new] = torch.arange(n_dst, n_dst + new.numel(), dtype=torch.int32, device=device)
        return torch.cat([nodes, new]), table[nbr]
    uniq, inverse = torch.unique(torch.cat([nodes, nbr]), return_inverse=True)
    is_new = torch.ones(uniq.numel(), dtype=torch.bool, device=device)
    is_new[inverse[:n_dst]] = False
    rank = torch.cumsum(is_new, 0).add_(n_dst - 1)
    rank[inverse[:n_dst]] = dst_rank
    src_nodes = torch.empty_like(uniq)
    src_nodes[rank] = uniq
    return src_nodes, rank[inverse[n_dst:]].to(torch.int32)


class NeighborSampler:
    """Uniform neighbour sampling with per-layer fan-outs (see the module docstring).

    graph: a gsparse.Graph (its CSR by destination: each node samples among its in-edges) or a
    (row_ptr, col_idx) pair of tensors of that CSR; the sampler keeps it on `device` (default: the
    graph's device, else the current CUDA device when there is one, else the CPU).
    fanouts: per layer, outermost first as in PyG's num_neighbors and DGL's fanouts lists: the
    first entry is sampled last, for the input layer.
    """

    def __init__(self, graph, fanouts, replace=False, seed=None, device=None):
        row_ptr, col_idx, num_nodes = _as_csr(graph)
        if device is None:
            device = row_ptr.device if row_ptr.is_cuda else (
                torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else row_ptr.device)
        self.device = torch.device(device)
        self.row_ptr = row_ptr.to(self.device)
        self.col_idx = col_idx.to(self.device)
        self.num_nodes = num_nodes
        fanouts = [int(f) for f in fanouts]
        if not fanouts or any(f == 0 or f < -1 for f in fanouts):
            raise ShapeError(f"fanouts must be a non-empty list of positive counts (or -1 for all), got {fanouts}")
        self.fanouts = fanouts
        self.replace = bool(replace)
        self.generator = torch.Generator(device=self.device)
        if seed is not None:
            self.generator.manual_seed(int(seed))
        else:
            self.generator.seed()

    def manual_seed(self, seed):
        self.generator.manual_seed(int(seed))
        return self

    def _layer(self, nodes, fanout):
        """One block: (block graph, its source nodes, its edges' ids in the sampled graph)."""
        device = self.device
        n_dst = nodes.numel()
        start = self.row_ptr[nodes]
        deg = self.row_ptr[nodes + 1] - start
        if fanout < 0:
            fanout_eff = None
            count = deg
        else:
            fanout_eff = fanout
            count = torch.where(deg > 0, torch.full_like(deg, fanout), deg) if self.replace else deg.clamp(max=fanout)
        offsets = torch.zeros(n_dst + 1, dtype=torch.int64, device=device)
        torch.cumsum(count, 0, out=offsets[1:])
        by_keys = fanout_eff is not None and not self.replace
        if by_keys:  # the layer's size and its candidates in one read
            num_edges, candidates = torch.stack([offsets[-1], deg.sum()]).tolist()
            by_keys = candidates <= min(KEY_CANDIDATES_MAX, KEY_CANDIDATES_PER_PICK * max(num_edges, 1))
        else:
            num_edges = int(offsets[-1])  # the one read of the layer's size
        row = torch.repeat_interleave(torch.arange(n_dst, device=device), count, output_size=num_edges)
        slot = torch.arange(num_edges, device=device) - offsets[row]
        if fanout_eff is None:
            pos = slot
        elif by_keys:
            pos = _choose_by_keys(deg, candidates, row, slot, self.generator)
        else:
            picks = _choose(deg, fanout_eff, self.replace, self.generator)
            pos = picks[row, slot]
        eids = start[row] + pos
        nbr = self.col_idx[eids]
        src_nodes, local = _relabel(nodes, nbr, self.num_nodes)
        max_degree = fanout_eff if fanout_eff is not None else num_edges
        tg = TensorGraph(src_nodes.numel(), n_dst, num_edges, padded_row_ptr(offsets, n_dst, num_edges), local,
                         None, max_degree)
        return Graph(_tensor_graph=tg), src_nodes, eids

    def sample(self, seeds):
        """A MiniBatch for the output nodes `seeds` (int64 ids, distinct)."""
        if not isinstance(seeds, torch.Tensor):
            seeds = torch.as_tensor(seeds)
        if seeds.dim() != 1 or seeds.dtype.is_floating_point:
            raise ShapeError(f"seeds must be a 1-d integer tensor, got {seeds.dtype} of shape {list(seeds.shape)}")
        nodes = seeds.to(self.device, torch.int64)
        blocks, edge_ids = [], []
        for fanout in reversed(self.fanouts):
            block, nodes, eids = self._layer(nodes, fanout)
            blocks.append(block)
            edge_ids.append(eids)
        blocks.reverse()
        edge_ids.reverse()
        return MiniBatch(nodes, seeds.to(self.device, torch.int64), blocks, edge_ids)


class NeighborLoader:
    """Mini-batches over `input_nodes` (default: every node), batch_size seeds each, shuffled per
    epoch when shuffle=True; iterating yields NeighborSampler MiniBatches. Deterministic under seed."""

    def __init__(self, graph, fanouts, batch_size, input_nodes=None, shuffle=False, replace=False, seed=None,
                 device=None, drop_last=False):
        self.sampler = NeighborSampler(graph, fanouts, replace=replace, seed=seed, device=device)
        dev = self.sampler.device
        self.input_nodes = (torch.arange(self.sampler.num_nodes, device=dev) if input_nodes is None
                            else torch.as_tensor(input_nodes).to(dev, torch.int64))
        if int(batch_size) <= 0:
            raise ShapeError(f"batch_size must be positive, got {batch_size}")
        self.batch_size, self.shuffle, self.drop_last = int(batch_size), bool(shuffle), bool(drop_last)

    def __len__(self):
        n = self.input_nodes.numel()
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size

    def __iter__(self):
        nodes = self.input_nodes
        if self.shuffle:
            nodes = nodes[torch.randperm(nodes.numel(), generator=self.sampler.generator, device=nodes.device)]
        for i in range(len(self)):
            yield self.sampler.sample(nodes[i * self.batch_size:(i + 1) * self.batch_size])
