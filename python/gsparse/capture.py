"""gsparse.capture: mini-batch training steps of fixed shapes, captured once as a CUDA graph and
replayed.

A training step on small graphs (sampled blocks, batches of molecules) is bound by host work:
Python, autograd and one launch per kernel take longer than the kernels. CUDA graphs remove that
work, but a captured step replays the same kernels on the same addresses with the same sizes, and
every mini-batch brings graphs of new sizes. So:

1. buffers of fixed capacity hold each step's graphs, padded: BlockBuffers for a sampler's blocks
   (capacities from the batch size and fan-outs), BatchBuffers for batches of small graphs;
2. the step builds its graphs over those buffers (gsparse graphs are built on the device with
   PyTorch operations, without a synchronisation, so building them can be captured);
3. CapturedStep captures the step once; each training step then loads the new batch into the
   buffers (a few copies) and replays.

    buffers = gsparse.capture.BlockBuffers(batch_size=1024, fanouts=[25, 10], num_features=602, device="cuda")
    opt = torch.optim.Adam(model.parameters(), lr=0.01, capturable=True)

    def step():
        opt.zero_grad(set_to_none=True)
        out = model(buffers.x, buffers.adjs())            # [(graph, (num_src, num_dst))], outermost first
        loss = F.cross_entropy(out[:buffers.batch_size], buffers.y)
        loss.backward()
        opt.step()
        return loss

    buffers.load(sampler.sample(seeds), features, labels)   # before capturing: real inputs
    captured = gsparse.capture.CapturedStep(step)           # trains `warmup` steps, then captures
    for seeds in loader:
        buffers.load(sampler.sample(seeds), features, labels)
        loss = captured()                                    # replays the whole step

Padding keeps every real row exact and every padded graph a valid graph (every edge in a row, every
id in range), so every operator runs on it. Blocks: the padding edges go from the last source
(always padding) to the padding destination rows, spread evenly over them (one long row would
serialise a row kernel); in PyG's edge-list form (BlockBuffers.edge_indices, for other libraries'
layers) they all go to the last destination row, which is always padding.
Batches: padding nodes form extra graphs of at most 32 nodes (ids from max_graphs on) with
self-loops only, so pooling's first max_graphs rows are the real graphs' (one padding graph of all
padding nodes would again be one long row for the readout's kernels). Losses and metrics must read
the real rows only (`out[:batch_size]`, `pooled[:max_graphs]`).

What the replay reads must stay alive: a CUDA graph holds the addresses of the tensors its kernels
read, not the tensors. CapturedStep keeps the step function, and with it what the step refers to
(model, optimizer and its state, buffers), for as long as it lives; tensors the step reaches
otherwise (globals it reads and later replaces) are the caller's to keep. A tensor freed after the
capture goes back to PyTorch's cache, and the next torch.cuda.empty_cache() (every
torch.cuda.graph capture begins with one) unmaps it: the replay then fails with an illegal memory
access.

What can be captured: a step without host synchronisations. gsparse's layers on these buffers have
none (GraphSAGE, GAT, GCN, GIN, pooling; dynamic graphs built with validate=False); an optimizer
must be created with capturable=True where PyTorch offers it. The first step of a training run
runs the step `warmup` times eagerly (on a side stream, as PyTorch requires) before capturing it.
"""

import torch

from ._native import ShapeError
from .graph import Graph


class BlockBuffers:
    """Fixed-capacity buffers for the blocks of a neighbour sampler (gsparse.sampling) with these
    fan-outs and batch size, outermost block first.

    Capacities (the most a sampled batch can hold, plus one padding row each): the last block has
    batch_size + 1 destinations; a block with D destinations and fan-out f has D * f edges and
    min(D * (1 + f), num_nodes) + 1 sources (a block's sources are distinct nodes of the sampled
    graph: give num_nodes, its node count, to bound them on graphs smaller than D * (1 + f)), which
    are the destinations of the block before it. Padded rows cost work in every step (the first
    layer's projection runs over all source rows), so the bound matters on small graphs.
    """

    def __init__(self, batch_size, fanouts, device, num_features=None, feature_dtype=torch.float32,
                 label_dtype=torch.int64, num_nodes=None):
        if batch_size < 1 or not fanouts or any(int(f) < 1 for f in fanouts):
            raise ShapeError(f"BlockBuffers needs batch_size >= 1 and fan-outs >= 1, got {batch_size}, {fanouts}")
        if num_nodes is not None and int(num_nodes) < batch_size:
            raise ShapeError(f"num_nodes ({num_nodes}) is the sampled graph's node count: at least batch_size "
                             f"({batch_size})")
        self.device = torch.device(device)
        self.batch_size = int(batch_size)
        self.fanouts = [int(f) for f in fanouts]
        sizes = []
        num_dst = self.batch_size + 1
        for f in reversed(self.fanouts):
            sources = num_dst * (1 + f) if num_nodes is None else min(num_dst * (1 + f), int(num_nodes))
            sizes.append((sources + 1, num_dst, num_dst * f))
            num_dst = sizes[-1][0]
        self._caps = sizes[::-1]  # (num_src, num_dst, num_edges), outermost first
        dev = self.device
        # The padding rows hold the padding edges (row_ptr[num_dst] is always the capacity), all from
        # the last source.
        self.row_ptr = [torch.full((d + 1,), e, dtype=torch.int32, device=dev) for _, d, e in self._caps]
        self.col_idx = [torch.full((e,), s - 1, dtype=torch.int32, device=dev) for s, _, e in self._caps]
        self._rows = torch.arange(max(d for _, d, _ in self._caps) + 1, dtype=torch.int64, device=dev)
        self._edge_index = None
        self._pad_edges = None
        self.x = None
        if num_features is not None:
            self.x = torch.zeros(self._caps[0][0], int(num_features), dtype=feature_dtype, device=dev)
        self.y = torch.zeros(self.batch_size, dtype=label_dtype, device=dev)

    @property
    def sizes(self):
        """[(num_src, num_dst)] of the padded blocks, outermost first."""
        return [(s, d) for s, d, _ in self._caps]

    def _check(self, batch):
        if batch.seeds.numel() != self.batch_size:
            raise ShapeError(f"the batch has {batch.seeds.numel()} seeds but the buffers {self.batch_size}")
        if len(batch.blocks) != len(self._caps):
            raise ShapeError(f"the batch has {len(batch.blocks)} blocks but the buffers {len(self._caps)}")
        for i, (b, (s, d, e)) in enumerate(zip(batch.blocks, self._caps)):
            if b.num_src >= s or b.num_dst >= d or b.num_edges > e:
                raise ShapeError(f"block {i} ({b.num_src} sources, {b.num_dst} destinations, {b.num_edges} edges) "
                                 f"exceeds the buffers' capacity ({s - 1}, {d - 1}, {e}): batch size or fan-outs "
                                 f"differ from the sampler's")

    def load(self, batch, x=None, y=None, edge_index=False):
        """Copies a sampled batch (gsparse.sampling.MiniBatch) into the buffers: the blocks' CSR,
        x (the rows of batch.input_nodes) into self.x and y (the seeds' labels) into self.y when
        given; edge_index=True also fills the padded edge lists of edge_indices()."""
        self._check(batch)
        for i, b in enumerate(batch.blocks):
            row_ptr, col_idx, _ = b.csr(self.device)
            n, e = b.num_dst, b.num_edges
            S, D, C = self._caps[i]
            self.row_ptr[i][: n + 1].copy_(row_ptr)
            # Padding row n + k ends at e + floor(k (C - e) / (D - n)): rows of at most
            # ceil((C - e) / (D - n)) edges, the last ending at the capacity.
            k = self._rows[1: D - n + 1]
            self.row_ptr[i][n + 1:].copy_(k.mul(C - e).floor_divide_(D - n).add_(e))
            self.col_idx[i][:e].copy_(col_idx)
            self.col_idx[i][e:].fill_(S - 1)
        if edge_index:
            self._load_edge_index(batch)
        if x is not None:
            if x.dim() != 2 or x.shape[0] != batch.blocks[0].num_src:
                raise ShapeError(f"x must hold the {batch.blocks[0].num_src} input nodes' rows, got {list(x.shape)}")
            if self.x is None:
                self.x = torch.zeros(self._caps[0][0], x.shape[1], dtype=x.dtype, device=self.device)
            if x.shape[1] != self.x.shape[1]:
                raise ShapeError(f"x has {x.shape[1]} features but the buffers {self.x.shape[1]}")
            self.x[: x.shape[0]].copy_(x)
        if y is not None:
            if tuple(y.shape) != (self.batch_size,):
                raise ShapeError(f"y must hold the {self.batch_size} seeds' labels, got {list(y.shape)}")
            self.y.copy_(y)

    def _load_edge_index(self, batch):
        if self._edge_index is None:
            self._edge_index = [torch.zeros(2, e, dtype=torch.int64, device=self.device) for _, _, e in self._caps]
            # Padding edges: from the padding source to the padding destination row of each block.
            self._pad_edges = [torch.tensor([[s - 1], [d - 1]], device=self.device).expand(2, e)
                               for s, d, e in self._caps]
        for i, b in enumerate(batch.blocks):
            e = b.num_edges
            self._edge_index[i][:, :e].copy_(b.edge_index(self.device))
            self._edge_index[i][:, e:].copy_(self._pad_edges[i][:, e:])

    def graphs(self):
        """gsparse graphs over the buffers, outermost first (call inside the step: building them is
        part of what is captured)."""
        # The padding row's length varies: no degree bound below the capacity.
        return [Graph.from_csr(rp, ci, num_src=s, dynamic=True, validate=False)
                for rp, ci, (s, _, _) in zip(self.row_ptr, self.col_idx, self._caps)]

    def adjs(self):
        """[(graph, (num_src, num_dst))] for the layers, outermost first."""
        return list(zip(self.graphs(), self.sizes))

    def edge_indices(self):
        """[(edge_index [2, E] int64, (num_src, num_dst))], padded, for layers that take edge lists
        (filled by load(..., edge_index=True))."""
        if self._edge_index is None:
            raise ShapeError("no edge lists loaded: call load(batch, ..., edge_index=True)")
        return list(zip(self._edge_index, self.sizes))


class BatchBuffers:
    """Fixed-capacity buffers for batches of up to max_graphs small graphs with at most max_nodes
    nodes and max_edges edges in all (a block-diagonal edge_index, PyG's Batch form). Padding:
    one node at least past the real ones, the padding nodes in extra graphs of PAD_GRAPH_NODES
    nodes (ids max_graphs, max_graphs + 1, ...), padding edges as self-loops of padding nodes,
    spread over them."""

    PAD_GRAPH_NODES = 32

    def __init__(self, max_graphs, max_nodes, max_edges, device, num_features=None, feature_dtype=torch.float32):
        if max_graphs < 1 or max_nodes < 1 or max_edges < 0:
            raise ShapeError(f"BatchBuffers needs max_graphs, max_nodes >= 1, got {max_graphs}, {max_nodes}")
        self.device = torch.device(device)
        self.max_graphs = int(max_graphs)
        self.num_nodes = int(max_nodes) + 1
        self.num_edges = int(max_edges)
        dev = self.device
        self.edge_index = torch.zeros(2, self.num_edges, dtype=torch.int64, device=dev)
        self._steps = torch.arange(max(self.num_edges, self.num_nodes), dtype=torch.int64, device=dev)
        self.batch = self._padding_graph_ids(0).clone()
        self.x = None
        if num_features is not None:
            self.x = torch.zeros(self.num_nodes, int(num_features), dtype=feature_dtype, device=dev)
        self.y = None  # made by the first load with labels, in their shape and dtype

    @property
    def num_graphs(self):
        """Graphs of the padded batch: max_graphs real ones and the padding graphs (enough for
        every node to be padding)."""
        return self.max_graphs + -(-self.num_nodes // self.PAD_GRAPH_NODES)

    def _padding_graph_ids(self, n):
        """The graph ids of padding nodes n .. num_nodes - 1 (sorted, PAD_GRAPH_NODES per graph)."""
        return self._steps[: self.num_nodes - n].floor_divide(self.PAD_GRAPH_NODES).add_(self.max_graphs)

    def load(self, edge_index, batch, num_nodes, x=None, y=None):
        """Copies a batch (edge_index [2, E] of the block-diagonal graph, batch [num_nodes] graph ids
        sorted, num_nodes as an int, node features x, per-graph labels y) into the buffers."""
        n, e = int(num_nodes), int(edge_index.shape[1])
        if n >= self.num_nodes or e > self.num_edges:
            raise ShapeError(f"the batch ({n} nodes, {e} edges) exceeds the buffers' capacity "
                             f"({self.num_nodes - 1} nodes, {self.num_edges} edges)")
        if batch.numel() != n:
            raise ShapeError(f"batch has {batch.numel()} entries for {n} nodes")
        self.edge_index[:, :e].copy_(edge_index)
        pad = self._steps[: self.num_edges - e].remainder(self.num_nodes - n).add_(n)
        self.edge_index[:, e:].copy_(pad.expand(2, -1))
        self.batch[:n].copy_(batch)
        self.batch[n:].copy_(self._padding_graph_ids(n))
        if x is not None:
            if x.dim() != 2 or x.shape[0] != n:
                raise ShapeError(f"x must hold the {n} nodes' rows, got {list(x.shape)}")
            if self.x is None:
                self.x = torch.zeros(self.num_nodes, x.shape[1], dtype=x.dtype, device=self.device)
            if x.shape[1] != self.x.shape[1]:
                raise ShapeError(f"x has {x.shape[1]} features but the buffers {self.x.shape[1]}")
            self.x[:n].copy_(x)
        if y is not None:
            if self.y is None:
                self.y = torch.zeros(y.shape, dtype=y.dtype, device=self.device)
            self.y.copy_(y)

    def graph(self):
        """The gsparse graph over the buffers (call inside the step)."""
        return Graph(self.edge_index, num_nodes=self.num_nodes, dynamic=True, validate=False)


class CapturedStep:
    """A training step (a function of no arguments that reads fixed buffers) captured as one CUDA
    graph: `warmup` eager steps on a side stream (PyTorch's requirement before capturing; they train
    like any step), then one capture. Calling it replays the step and returns what the step
    returned at capture (tensors the replay refills). It keeps `step` (and so what the step refers
    to) alive while it lives."""

    def __init__(self, step, warmup=3, pool=None):
        if not torch.cuda.is_available():
            raise ShapeError("CapturedStep needs a CUDA device")
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(warmup):
                step()
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph, pool=pool):
            self.outputs = step()
        # The replay reads the optimizer state, weights and buffers the step refers to: keep them.
        self.step = step

    def __call__(self):
        self.graph.replay()
        return self.outputs
