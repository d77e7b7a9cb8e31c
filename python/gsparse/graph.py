"""gsparse.Graph: a validated graph for the sparse operators.

A graph has num_src source nodes, num_dst destination nodes and num_edges edges with ids
0..num_edges-1. Edge-feature tensors are indexed by edge id. The native graph keeps the CSR by
destination and derives, once and on first use, the CSC / reverse graph (backward passes), the COO
in edge-id order (g-SDDMM), balancedIdx (GPU row balancing) and the device copies of its index
arrays; compiled kernels are cached process-wide by operator, broadcast pattern, dtype and
schedule. On the Python side the graph caches index tensors, degrees and the self-loop graph of
the layers, per device.
"""

import json
import operator
import weakref

import torch

from . import _native
from . import _tensor_graph as TG
from ._native import GraphError, _C

# Graphs from CUDA tensors with fewer edges than this are dynamic by default (see Graph).
DYNAMIC_MAX_EDGES = 1 << 24

_INT32_MAX = 2**31 - 1


def _as_index_tensor(a, name):
    """A contiguous int32 CPU tensor holding integer array a (torch tensor, numpy array, list)."""
    if not isinstance(a, torch.Tensor):
        try:
            a = torch.as_tensor(a)
        except (TypeError, ValueError, RuntimeError) as e:
            raise GraphError(f"{name} is not an integer array: {e}") from None
    if a.dtype.is_floating_point or a.dtype.is_complex or a.dtype == torch.bool:
        raise GraphError(f"{name} must hold integers, got dtype {a.dtype}")
    a = a.detach().to("cpu")
    if a.numel() > 0:
        lo, hi = int(a.min()), int(a.max())
        if lo < 0:
            raise GraphError(f"{name} holds the negative index {lo}")
        if hi > _INT32_MAX:
            raise GraphError(f"{name} holds the index {hi}, beyond int32 (gsparse uses int32 indices)")
    return a.to(torch.int32).contiguous()


def _count(value, name):
    if value is None:
        return None
    try:
        value = operator.index(value)  # ints, NumPy integers, integer 0-d tensors; not 2.5 or "3"
    except TypeError:
        raise GraphError(f"{name} = {value!r} is not an integer") from None
    if value < 0 or value > _INT32_MAX:
        raise GraphError(f"{name} = {value} is out of range [0, {_INT32_MAX}]")
    return value


def _is_dynamic(dynamic, index, num_edges):
    """The dynamic= rule of Graph: explicit, or CUDA index tensors under DYNAMIC_MAX_EDGES edges."""
    if dynamic is not None:
        return bool(dynamic)
    return isinstance(index, torch.Tensor) and index.is_cuda and int(num_edges()) < DYNAMIC_MAX_EDGES


def _index_tensor_on_device(a, name, device=None):
    """An integer tensor (kept on its device; lists and arrays go to `device` or the CPU)."""
    if not isinstance(a, torch.Tensor):
        try:
            a = torch.as_tensor(a, device=device)
        except (TypeError, ValueError, RuntimeError) as e:
            raise GraphError(f"{name} is not an integer array: {e}") from None
    if a.dtype.is_floating_point or a.dtype.is_complex or a.dtype == torch.bool:
        raise GraphError(f"{name} must hold integers, got dtype {a.dtype}")
    return a.detach()


def _size_of(ids):
    """max id + 1 of an index tensor (0 when empty), the node count when none is given; the nodes
    must have int32 ids."""
    if not ids.numel():
        return 0
    top = int(ids.max())
    if top >= _INT32_MAX:
        raise GraphError(f"edge_index holds the index {top}: {top + 1} nodes are beyond int32 "
                         "(gsparse uses int32 indices)")
    return top + 1


def _dynamic_from_edge_index(edge_index, num_nodes, num_src, num_dst, validate, max_degree=None, csr="auto"):
    ei = _index_tensor_on_device(edge_index, "edge_index")
    if ei.dim() != 2 or ei.shape[0] != 2:
        raise GraphError(f"edge_index must have shape [2, E], got {list(ei.shape)}")
    src, dst = ei[0], ei[1]
    if num_nodes is not None and (num_src is not None or num_dst is not None):
        raise GraphError("give either num_nodes or num_src / num_dst, not both")
    num_nodes, num_src, num_dst = (_count(num_nodes, "num_nodes"), _count(num_src, "num_src"),
                                   _count(num_dst, "num_dst"))
    if num_nodes is not None:
        num_src = num_dst = num_nodes
    if num_src is None or num_dst is None:
        # Sizes not given: max id + 1 (a synchronisation, as in PyG's maybe_num_nodes).
        if num_src is None and num_dst is None and num_nodes is None:
            n = _size_of(ei)
            num_src = num_dst = n
        if num_src is None:
            num_src = _size_of(src)
        if num_dst is None:
            num_dst = _size_of(dst)
    return TG.from_coo(src, dst, num_src, num_dst, validate=validate, max_degree=max_degree, edge_index=ei, csr=csr)


class Graph:
    """A graph of num_src source and num_dst destination nodes.

    Graph(edge_index, num_nodes=None): PyG-style edge_index [2, E] (row 0 = source, row 1 =
    destination); edge i gets id i. num_nodes defaults to max id + 1. For bipartite graphs give
    num_src and num_dst instead. See also Graph.from_csr, Graph.from_scipy and Graph.load.

    A graph is static or dynamic (`dynamic=`):
      static   the validated graph of the C++ library, built on the host: kernels then pick their
               schedule from the graph's statistics and may run on per-graph preprocessing (row
               orders, locality relabeling, segment tables, device copies), which pays for itself
               over many calls (full-graph training, inference on one graph);
      dynamic  the index arrays stay tensors on their device, built there with PyTorch operations
               on the current stream (CSR by one stable sort, the reverse graph and COO on first
               use): no host round trip, no copy to the device, no per-graph preprocessing, and
               kernels with graph-blind schedules compiled once per operator and feature shape, so a
               new graph each step never recompiles. For graphs that live for a step or a few
               calls: sampled blocks, batches of small graphs.
    dynamic=None (the default) makes graphs from CUDA tensors with fewer than 2^24 edges dynamic
    and every other graph static. validate=False skips the range checks of a dynamic graph (their
    one device-to-host flag read is its only synchronisation): for indices valid by construction.

    csr (dynamic graphs from an edge_index not sorted by destination): when the CSR is made (one
    stable sort on the device). "auto" (the default): on first use for graphs of at most 65,536
    edges (batches of small graphs), whose g-SpMM sum, its backward and g-SDDMM then run on the
    COO by nonzeros without it; at once for larger graphs (without a sort when their edges are
    sorted by destination). "lazy" / "now" force either. See docs/minibatch.md.
    """

    def __init__(self, edge_index=None, num_nodes=None, *, num_src=None, num_dst=None, dynamic=None, validate=True,
                 csr="auto", _native_graph=None, _tensor_graph=None):
        self._cache = {}
        self.edge_weight = None
        self._g = None
        self._t = None
        if _native_graph is not None:
            self._g = _native_graph
            return
        if _tensor_graph is not None:
            self._t = _tensor_graph
            return
        if edge_index is None:
            raise GraphError("Graph needs an edge_index [2, E] (or use Graph.from_csr / from_scipy / load)")
        if isinstance(edge_index, torch.Tensor) and edge_index.is_sparse:
            raise GraphError("edge_index is a sparse tensor; build the graph with Graph.from_csr")
        if _is_dynamic(dynamic, edge_index, lambda: edge_index.shape[-1]):
            self._t = _dynamic_from_edge_index(edge_index, num_nodes, num_src, num_dst, validate, csr=csr)
            return
        ei = _as_index_tensor(edge_index, "edge_index")
        if ei.dim() != 2 or ei.shape[0] != 2:
            raise GraphError(f"edge_index must have shape [2, E], got {list(ei.shape)}")
        src, dst = ei[0].contiguous(), ei[1].contiguous()
        self._g = self._native_from_coo(src, dst, num_nodes, num_src, num_dst)

    @property
    def is_dynamic(self):
        """Whether the graph's index arrays are tensors on its device (see the class docstring)."""
        return self._t is not None

    @property
    def device(self):
        """The device of a dynamic graph's arrays; None for a static graph (usable on every device)."""
        return self._t.device if self._t is not None else None

    @staticmethod
    def _native_from_coo(src, dst, num_nodes, num_src, num_dst):
        if num_nodes is not None and (num_src is not None or num_dst is not None):
            raise GraphError("give either num_nodes or num_src / num_dst, not both")
        num_nodes, num_src, num_dst = (_count(num_nodes, "num_nodes"), _count(num_src, "num_src"),
                                       _count(num_dst, "num_dst"))
        if num_nodes is None and num_src is None and num_dst is None:
            num_nodes = int(torch.max(src.max(), dst.max())) + 1 if src.numel() else 0
        if num_nodes is not None:
            num_src = num_dst = num_nodes
        else:
            if num_src is None:
                num_src = int(src.max()) + 1 if src.numel() else 0
            if num_dst is None:
                num_dst = int(dst.max()) + 1 if dst.numel() else 0
        if src.numel() and int(src.max()) >= num_src:
            raise GraphError(f"edge source id {int(src.max())} is out of range [0, num_src = {num_src})")
        if dst.numel() and int(dst.max()) >= num_dst:
            raise GraphError(f"edge destination id {int(dst.max())} is out of range [0, num_dst = {num_dst})")
        return _C.Graph.from_coo(num_src, num_dst, src.data_ptr(), dst.data_ptr(), src.numel())

    # --- Constructors --------------------------------------------------------------------------

    @classmethod
    def from_edge_index(cls, edge_index, num_nodes=None, *, num_src=None, num_dst=None, dynamic=None, validate=True,
                        csr="auto"):
        """Same as Graph(edge_index, num_nodes, ...)."""
        return cls(edge_index, num_nodes, num_src=num_src, num_dst=num_dst, dynamic=dynamic, validate=validate,
                   csr=csr)

    @classmethod
    def from_csr(cls, row_ptr, col_idx, num_src=None, edge_ids=None, *, dynamic=None, validate=True,
                 max_degree=None):
        """CSR by destination (PyG's adj_t layout, DGL's in-edge CSC): the in-edges of node v are
        the sources col_idx[row_ptr[v]:row_ptr[v+1]]; num_dst = len(row_ptr) - 1; num_src defaults
        to num_dst. edge_ids (a permutation of 0..nnz-1) gives the id of the edge at each position;
        by default edge ids are positions. A dynamic graph (dynamic=None: CUDA tensors under 2^24
        edges) uses int32 arrays as they are, without a copy; max_degree, when known, bounds the
        longest row (checked, except by a dynamic graph with validate=False: a wrong bound there
        drops edges)."""
        max_degree = _count(max_degree, "max_degree")
        if _is_dynamic(dynamic, col_idx, lambda: col_idx.numel()):
            device = col_idx.device if isinstance(col_idx, torch.Tensor) else None
            rp = _index_tensor_on_device(row_ptr, "row_ptr", device)
            ci = _index_tensor_on_device(col_idx, "col_idx", device)
            if rp.dim() != 1 or rp.numel() < 1:
                raise GraphError(f"row_ptr must be a 1-d array of num_dst + 1 offsets, got shape {list(rp.shape)}")
            if ci.dim() != 1:
                raise GraphError(f"col_idx must be 1-d, got shape {list(ci.shape)}")
            if rp.device != ci.device:
                raise GraphError(f"row_ptr is on {rp.device} but col_idx on {ci.device}")
            eid = None
            if edge_ids is not None:
                eid = _index_tensor_on_device(edge_ids, "edge_ids", ci.device)
                if eid.shape != ci.shape or eid.device != ci.device:
                    raise GraphError(f"edge_ids ({list(eid.shape)} on {eid.device}) must match col_idx "
                                     f"({list(ci.shape)} on {ci.device})")
            num_dst = rp.numel() - 1
            num_src = num_dst if num_src is None else _count(num_src, "num_src")
            return cls(_tensor_graph=TG.from_csr(rp, ci, num_src, eid, validate=validate, max_degree=max_degree))
        rp = _as_index_tensor(row_ptr, "row_ptr")
        ci = _as_index_tensor(col_idx, "col_idx")
        if rp.dim() != 1 or rp.numel() < 1:
            raise GraphError(f"row_ptr must be a 1-d array of num_dst + 1 offsets, got shape {list(rp.shape)}")
        if ci.dim() != 1:
            raise GraphError(f"col_idx must be 1-d, got shape {list(ci.shape)}")
        num_dst = rp.numel() - 1
        num_src = num_dst if num_src is None else _count(num_src, "num_src")
        eid_ptr = 0
        if edge_ids is not None:
            eid = _as_index_tensor(edge_ids, "edge_ids")
            if eid.shape != ci.shape:
                raise GraphError(f"edge_ids has shape {list(eid.shape)} but col_idx {list(ci.shape)}")
            eid_ptr = eid.data_ptr()
        native = _C.Graph.from_csr(num_dst, num_src, rp.data_ptr(), ci.data_ptr(), eid_ptr, ci.numel())
        if max_degree is not None and native.max_row_length > max_degree:
            raise GraphError(f"max_degree = {max_degree} is less than the longest row ({native.max_row_length} edges)")
        return cls(_native_graph=native)

    @classmethod
    def from_scipy(cls, matrix):
        """A SciPy sparse matrix (any format, or anything with .tocoo()) of shape
        [num_src, num_dst]: entry [u, v] is an edge u -> v (the DGL / PyG convention). Edge ids follow
        the stored order of matrix.tocoo(); the stored values become graph.edge_weight."""
        if not hasattr(matrix, "tocoo") or not hasattr(matrix, "shape"):
            raise GraphError(f"from_scipy needs a SciPy sparse matrix, got {type(matrix).__name__}")
        coo = matrix.tocoo()
        src = _as_index_tensor(coo.row, "matrix row indices")
        dst = _as_index_tensor(coo.col, "matrix column indices")
        num_src, num_dst = (int(s) for s in matrix.shape)
        native = cls._native_from_coo(src, dst, None, num_src, num_dst)
        g = cls(_native_graph=native)
        if coo.data is not None and len(coo.data) == src.numel():
            g.edge_weight = torch.as_tensor(coo.data).clone()
        return g

    @classmethod
    def load(cls, path):
        """A graph file (.mtx, .gcsr, edge list; see docs/graph-formats.md). Stored edge values,
        when the file has them, become graph.edge_weight (float32)."""
        g = cls(_native_graph=_C.Graph.load(str(path)))
        n = g._g.array_size("values")
        if n:
            w = torch.empty(n, dtype=torch.float32)
            g._g.copy_array("values", w.data_ptr(), n)
            g.edge_weight = w
        return g

    # --- Sizes ---------------------------------------------------------------------------------

    @property
    def num_src(self):
        return self._t.num_src if self._t is not None else self._g.num_src

    @property
    def num_dst(self):
        return self._t.num_dst if self._t is not None else self._g.num_dst

    @property
    def num_nodes(self):
        """The node count of a graph with as many sources as destinations."""
        if self.num_src != self.num_dst:
            raise GraphError(f"bipartite graph ({self.num_src} sources, {self.num_dst} destinations) has no num_nodes")
        return self.num_src

    @property
    def num_edges(self):
        return self._t.num_edges if self._t is not None else self._g.num_edges

    def __repr__(self):
        kind = f", dynamic on {self._t.device}" if self._t is not None else ""
        return f"gsparse.Graph(num_src={self.num_src}, num_dst={self.num_dst}, num_edges={self.num_edges}{kind})"

    # --- Tuned kernels ---------------------------------------------------------------------------

    def use_tuned(self, cache=None):
        """Runs this graph's float32 kernels with the schedules gsparse-tune stored for it (same
        device model, operator, feature shapes and graph structure) in its tuning cache: `cache`, or
        $XDG_CACHE_HOME/gsparse/tuning.json, or ~/.cache/gsparse/tuning.json. Calls without a
        matching entry keep the expert default. The reverse and self-loop graphs the layers use share
        the setting (their own entries apply to them). Returns self."""
        if self._t is not None:
            raise GraphError("use_tuned() needs a static graph (tuned schedules are chosen per graph structure); "
                             "build it with dynamic=False")
        path = cache or _C.default_tuning_cache()
        try:
            with open(path) as f:
                entries = json.load(f).get("entries", {})
        except FileNotFoundError:
            entries = {}
        except (OSError, ValueError) as err:
            raise _native.GraphError(f"tuning cache {path}: {err}") from None
        if not isinstance(entries, dict):
            raise _native.GraphError(f"tuning cache {path}: 'entries' is not an object")
        self._tuned = entries
        for k in ("reverse", "with_self_loops"):
            if k in self._cache:
                self._cache[k]._tuned = entries
        return self

    def tuned_schedule(self, kind, op, a, b, lhs_feat, rhs_feat, device):
        """The tuned schedule (a string gsparse's kernels accept) of a g-SpMM (kind "spmm", a = reduce)
        or g-SDDMM (kind "sddmm", a, b = targets) call with float32 operands of these feature shapes on
        device, or None (use_tuned() not called, or no entry)."""
        if not getattr(self, "_tuned", None) or self._t is not None:
            return None
        key = _C.tuning_key(self._g, kind, op, a, b, list(lhs_feat), list(rhs_feat), torch.device(device).type == "cuda")
        entry = self._tuned.get(key)
        if not entry:
            return None
        return _C.schedule_string(json.dumps(entry.get("schedule", {})))

    def default_schedule(self, kind, op, a, b=None, lhs_feat=(), rhs_feat=(), device="cpu"):
        """The schedule point (a string gsparse's kernels accept) a g-SpMM (kind "spmm", a = reduce)
        or g-SDDMM (kind "sddmm", a, b = targets) call with float32 operands of these feature shapes
        runs on this graph and device when no schedule is given: the default schedule's choice from
        the graph's statistics (gsparse-tune --show-default). Nothing is compiled; a CUDA answer needs
        no GPU. Static graphs only (a dynamic graph's kernels do not depend on its statistics)."""
        if self._t is not None:
            raise GraphError("default_schedule() needs a static graph (a dynamic graph's default is graph-blind); "
                             "build it with dynamic=False")
        if kind == "sddmm" and b is None:
            raise _native.ShapeError("a g-SDDMM needs both operand targets (a and b: u, v or e)")
        return _C.default_schedule(self._g, kind, op, a, b or "", list(lhs_feat), list(rhs_feat),
                                   torch.device(device).type == "cuda")

    # --- Cached layouts --------------------------------------------------------------------------

    def _cached(self, key, device, make):
        """make() on the CPU (a dynamic graph: on its device), cached; copies to other devices cached
        as well."""
        if self._t is not None:
            home = str(self._t.device)
            if (key, home) not in self._cache:
                self._cache[(key, home)] = make()
            home_value = self._cache[(key, home)]
            device = torch.device(device) if device is not None else self._t.device
            if device == self._t.device or str(device) == home:
                return home_value
            k = (key, str(device))
            if k not in self._cache:
                self._cache[k] = (tuple(t.to(device) for t in home_value) if isinstance(home_value, tuple)
                                  else home_value.to(device))
            return self._cache[k]
        device = torch.device(device) if device is not None else torch.device("cpu")
        if device.type == "cuda" and device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        k = (key, str(device))
        if k not in self._cache:
            cpu = self._cache.get((key, "cpu"))
            if cpu is None:
                cpu = make()
                self._cache[(key, "cpu")] = cpu
            if device.type != "cpu":
                self._cache[k] = tuple(t.to(device) for t in cpu) if isinstance(cpu, tuple) else cpu.to(device)
        return self._cache[k]

    def _array(self, name):
        n = self._g.array_size(name)
        t = torch.empty(n, dtype=torch.int32)
        self._g.copy_array(name, t.data_ptr(), n)
        return t

    def csr(self, device=None):
        """(row_ptr, col_idx, edge_ids), int32: the CSR by destination with the id of each edge."""
        if self._t is not None:
            return self._cached("csr", device, self._t.csr)
        return self._cached("csr", device,
                            lambda: (self._array("csr.row_ptr"), self._array("csr.col_idx"), self._array("csr.edge_ids")))

    def csc(self, device=None):
        """(col_ptr, row_idx, edge_ids), int32: the CSR of the reverse graph (by source)."""
        return self.reverse().csr(device)

    def coo(self, device=None):
        """(src, dst), int32, position i holding edge i."""
        if self._t is not None:
            return self._cached("coo", device, self._t.coo)
        return self._cached("coo", device, lambda: (self._array("coo.src"), self._array("coo.dst")))

    def edge_index(self, device=None):
        """PyG-style [2, E] int64 edge index in edge-id order."""
        return self._cached("edge_index", device,
                            lambda: torch.stack(self.coo(self.device)).to(torch.int64))

    def reverse(self):
        """The reversed graph (edges v -> u), same edge ids; cached, and its reverse is self. The
        reverse refers back weakly: a graph and its reverse form no reference cycle, so a step's
        graphs are freed when the step lets go of them, not by the garbage collector (mini-batch
        training makes new graphs every step)."""
        r = self._cache.get("reverse")
        if r is None:
            back = getattr(self, "_reverse_of", None)
            r = back() if back is not None else None
        if r is None:
            r = Graph(_tensor_graph=self._t.reverse()) if self._t is not None else Graph(_native_graph=self._g.reverse())
            r._tuned = getattr(self, "_tuned", None)
            r._reverse_of = weakref.ref(self)
            self._cache["reverse"] = r
        return r

    def in_degrees(self, device=None):
        """Number of in-edges per destination node (int64)."""
        if self._t is not None:
            return self._cached("in_degrees", device, self._t.in_degrees)
        return self._cached("in_degrees", device, lambda: self.csr()[0].to(torch.int64).diff())

    def out_degrees(self, device=None):
        """Number of out-edges per source node (int64)."""
        return self.reverse().in_degrees(device)

    def with_self_loops(self):
        """The graph with every existing self-loop removed and one self-loop per node added (PyG's
        add_remaining_self_loops; on a bipartite graph, loops u -> u for u < min(num_src, num_dst),
        as PyG's GATConv adds them). Cached. Its edges are this graph's non-loop edges in edge-id
        order, then the loops of nodes 0..n-1; see self_loop_weights for carrying edge weights over.
        A dynamic graph builds it on its device (one synchronisation, for the number of loops to
        drop)."""
        r = self._cache.get("with_self_loops")
        if r is None:
            n = min(self.num_src, self.num_dst)
            device = self.device if self._t is not None else torch.device("cpu")
            src, dst = (t.to(torch.int64) for t in self.coo(device))
            keep = (src != dst).nonzero().flatten()
            loops = torch.arange(n, dtype=torch.int64, device=device)
            new_src = torch.cat([src[keep], loops]).to(torch.int32).contiguous()
            new_dst = torch.cat([dst[keep], loops]).to(torch.int32).contiguous()
            if self._t is not None:
                r = Graph(_tensor_graph=TG.from_coo(new_src, new_dst, self.num_src, self.num_dst, validate=False,
                                                    max_degree=self._t.max_degree + 1))
            else:
                r = Graph(_native_graph=_C.Graph.from_coo(self.num_src, self.num_dst, new_src.data_ptr(),
                                                          new_dst.data_ptr(), new_src.numel()))
            # Per node, the id of an existing self-loop edge (the last one), or -1.
            loop_edge = torch.full((n,), -1, dtype=torch.int64, device=device)
            is_loop = (src == dst).nonzero().flatten()
            loop_edge[src[is_loop]] = is_loop
            r._loop_source = (keep, loop_edge)
            r._tuned = getattr(self, "_tuned", None)
            self._cache["with_self_loops"] = r
        return r

    def with_masked_self_loops(self):
        """(graph, dropped): a graph whose edges, leaving out those where the bool mask dropped
        [graph.num_edges] (edge-id order) is set, are those of with_self_loops(). A dynamic graph
        appends one loop per node to its rows on the device and marks its own loops in dropped,
        without a synchronisation (with_self_loops needs one, to count the loops it drops); a
        static graph returns (with_self_loops(), None). For layers that can weigh edges by zero,
        such as attention with a score of -inf. Cached."""
        r = self._cache.get("with_masked_self_loops")
        if r is None:
            if self._t is None:
                r = (self.with_self_loops(), None)
            else:
                t, dropped = self._t.with_loops_appended()
                g = Graph(_tensor_graph=t)
                g._tuned = getattr(self, "_tuned", None)
                r = (g, dropped)
            self._cache["with_masked_self_loops"] = r
        return r

    def self_loop_weights(self, edge_weight, fill_value=1.0):
        """Edge weights of with_self_loops() from weights of this graph: non-loop edges keep theirs,
        a node's loop takes the weight of its existing self-loop or fill_value."""
        g = self.with_self_loops()
        keep, loop_edge = (t.to(edge_weight.device) for t in g._loop_source)
        if edge_weight.shape[0] != self.num_edges:
            raise _native.ShapeError(f"edge_weight has {edge_weight.shape[0]} rows, the graph {self.num_edges} edges")
        n = self.num_nodes if self._t is None else min(self.num_src, self.num_dst)
        loops = torch.full((n,) + tuple(edge_weight.shape[1:]), float(fill_value),
                           dtype=edge_weight.dtype, device=edge_weight.device)
        has = loop_edge >= 0
        loops = torch.where(has.view(-1, *([1] * (edge_weight.dim() - 1))), edge_weight[loop_edge.clamp(min=0)], loops)
        return torch.cat([edge_weight[keep], loops])
