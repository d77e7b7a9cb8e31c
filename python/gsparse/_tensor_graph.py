"""Graphs built with PyTorch operations on the device of their index tensors ("dynamic" graphs).

A dynamic gsparse.Graph keeps its index arrays as int32 tensors on one device and hands them to the
kernels by address (gsparse._C.GraphView): nothing goes through the host, nothing is copied to the
device, and no per-graph preprocessing runs. Everything here is made of PyTorch operations that
run asynchronously on the current stream; the only host synchronisation is the optional validation
(one flag read back), which graphs valid by construction (the sampler's blocks, batches) skip.

Layout (graph/graph_view.h on the C++ side):
  row_ptr   the CSR by destination, padded with num_edges to round_up(num_dst, 32) + 2 entries
            (row_ptr, col_idx and edge_ids of a graph built from an unsorted COO with at most
            LAZY_CSR_MAX_EDGES edges are made on first use: see from_coo);
  col_idx   the source of every CSR position (at least one entry);
  edge_ids  the edge id of every CSR position, or None when position i holds edge i;
  coo       (src, dst) in edge-id order, padded with 0 to a multiple of 1024 entries, made on
            first use (g-SDDMM);
  max_degree an upper bound of the longest row known without a synchronisation (the sampler's
            fan-out, else num_edges).
Derived graphs (the reverse graph for backward passes, the self-loop graph of the layers) are
built on the device on first use and cached by the Graph.
"""

import threading

import torch

from ._native import GraphError, _C, launch_arg, tensor_arg

ROW_PAD = 32
EDGE_PAD = 1024
INT32_MAX = 2**31 - 1
# Graphs from a COO not sorted by destination with at most this many edges build their CSR on first
# use instead of at once (the rule and its measurements: docs/minibatch.md).
LAZY_CSR_MAX_EDGES = 1 << 16
# The schedule of g-SpMM sum on a graph without a CSR: by nonzeros over its COO.
COO_SEGMENTS = "spmm_segments{run=32}"
# Devices whose graphs from a COO are built by gsparse's graph-build kernels (one native call: the
# range and order statistics, the row offsets and the int32 arrays, one read-back) instead of a
# sequence of PyTorch operations; the CPU keeps the PyTorch form (tests add it to check both).
NATIVE_BUILD_DEVICES = {"cuda"}


def _round_up(x, m):
    return (x + m - 1) // m * m


def padded_row_ptr(row_ptr, num_dst, num_edges):
    """row_ptr [num_dst + 1] (any integer dtype) as the padded int32 layout above."""
    out = torch.full((_round_up(num_dst, ROW_PAD) + 2,), num_edges, dtype=torch.int32, device=row_ptr.device)
    out[: num_dst + 1].copy_(row_ptr)
    return out


def row_ptr_of_sorted(sorted_dst, num_dst):
    """The padded int32 row_ptr of edges sorted by destination: one searchsorted over the padded
    row range (rows past num_dst get num_edges, as every destination id is below num_dst)."""
    rows = torch.arange(_round_up(num_dst, ROW_PAD) + 2, device=sorted_dst.device, dtype=sorted_dst.dtype)
    return torch.searchsorted(sorted_dst, rows, out_int32=True)


def padded_int32(t, length, pad_to):
    """t as int32 in a buffer of round_up(max(length, 1), pad_to) entries, padded with 0."""
    out = torch.zeros((_round_up(max(length, 1), pad_to),), dtype=torch.int32, device=t.device)
    out[:length].copy_(t)
    return out


def check_async(checks):
    """Raises GraphError with the first failing message of [(bad_flag_tensor, message_fn)]; one
    device-to-host copy of all flags (the only synchronisation of a graph build)."""
    if not checks:
        return
    flags = torch.stack([c[0].reshape(()) for c in checks]).cpu()
    for ok, (_, message) in zip(flags.tolist(), checks):
        if ok:
            raise GraphError(message())


class TensorGraph:
    """The index tensors of a dynamic graph (see the module docstring)."""

    def __init__(self, num_src, num_dst, num_edges, row_ptr, col_idx, edge_ids=None, max_degree=None, coo=None,
                 coo_source=None, sources=()):
        """row_ptr = col_idx = None: the CSR is made from the COO (coo or coo_source) on first use.
        sources: the caller's index tensors the graph reads where they are (or derives arrays from
        later), or [(tensor, version)] pairs of a graph this one derives from: modifying one in place
        afterwards makes every use of the graph raise GraphError instead of reading a mix of old
        and new edges."""
        self.num_src, self.num_dst, self.num_edges = int(num_src), int(num_dst), int(num_edges)
        self._sources = tuple(s if isinstance(s, tuple) else (s, s._version) for s in sources if s is not None)
        self._row_ptr = self._col_idx = self._edge_ids = None
        if row_ptr is None:
            if coo is None and coo_source is None:
                raise GraphError("a graph without a CSR needs its COO")
            self.device = (coo if coo is not None else coo_source)[0].device
        else:
            self.device = col_idx.device
            self._set_csr(row_ptr, col_idx, edge_ids)
        if coo is not None:
            coo = tuple(t.contiguous() for t in coo)
        self.max_degree = self.num_edges if max_degree is None else min(int(max_degree), self.num_edges)
        self._coo = coo  # (src, dst) padded int32, or None
        self._coo_source = coo_source  # (src, dst) in edge-id order, any integer dtype: padded on first use
        self._view = None
        self._view_has_coo = False
        self._user_view = None  # the view with edge ids (user programs), and the ids it reads
        self._user_view_ids = None
        self._row_order = None  # the rows by in-degree, longest first, once a user program asks
        # Guards the arrays and the view made on first use: graphs may be shared by threads, and a
        # view must never point at arrays another thread's build replaced (and freed).
        self._lock = threading.RLock()
        self._coo_ready = None  # (stream, event) of a COO made on the GPU
        self._coo_views = {}  # COO views without a CSR: {reversed: view}

    def _check_sources(self):
        """GraphError when an index tensor the graph was built from has been modified in place. Called
        where the graph's arrays leave it (the kernels' views, csr(), the COO), not by the accessors
        the derivations use: a derived graph inherits the sources and checks them at its own use."""
        for t, version in self._sources:
            if t._version != version:
                raise GraphError("an index tensor this graph was built from was modified in place after the graph "
                                 "was built (a graph built on the device reads its index tensors where they are); "
                                 "build a new graph from the modified tensor")

    def _set_csr(self, row_ptr, col_idx, edge_ids):
        # The kernels read the arrays by address: dense, whatever view the caller handed in (a
        # row of a transposed edge_index has stride 2; contiguous() copies only such views).
        self._col_idx = col_idx.contiguous() if col_idx.numel() else torch.zeros(1, dtype=torch.int32,
                                                                                device=self.device)
        self._edge_ids = edge_ids.contiguous() if edge_ids is not None else None
        self._row_ptr = row_ptr.contiguous()  # padded int32; set last: has_csr reads it

    # --- The CSR (made on first use for graphs built without one) --------------------------------

    @property
    def has_csr(self):
        """Whether the CSR exists (graphs from a small unsorted COO make it on first use)."""
        return self._row_ptr is not None

    def _ensure_csr(self):
        if self._row_ptr is None:
            with self._lock:
                if self._row_ptr is None:
                    src, dst = self.coo()
                    order = torch.sort(dst, stable=True)
                    self._set_csr(row_ptr_of_sorted(order.values, self.num_dst), src[order.indices],
                                  order.indices.to(torch.int32))

    @property
    def row_ptr(self):
        self._ensure_csr()
        return self._row_ptr

    @property
    def col_idx(self):
        self._ensure_csr()
        return self._col_idx

    @property
    def edge_ids(self):
        self._ensure_csr()
        return self._edge_ids

    def runs_on_coo(self, reduce):
        """Whether g-SpMM with reduce runs on the COO alone (by nonzeros, COO_SEGMENTS): a graph
        without its CSR yet, reduce sum, and PyTorch not asked for deterministic algorithms (the
        form adds with atomics)."""
        return self._row_ptr is None and reduce == "sum" and not torch.are_deterministic_algorithms_enabled()

    def coo_view(self, reverse=False):
        """The view of the COO alone (no CSR); reverse: of the reversed graph (edges v -> u, same
        ids), for the transposed g-SpMM."""
        if self._sources:
            self._check_sources()
        v = self._coo_views.get(reverse)
        if v is None:
            src, dst = self.coo_padded()
            with self._lock:
                v = self._coo_views.get(reverse)
                if v is None:
                    (ns, s), (nd, d) = ((self.num_dst, dst), (self.num_src, src)) if reverse else \
                        ((self.num_src, src), (self.num_dst, dst))
                    v = _C.GraphView.coo(self.device.type, ns, nd, self.num_edges, s.data_ptr(), d.data_ptr(), s.numel())
                    self._coo_views[reverse] = v
        return v

    # --- The native view ---------------------------------------------------------------------------

    @property
    def view(self):
        if self._sources:
            self._check_sources()
        v = self._view
        if v is None:
            with self._lock:
                if self._view is None:
                    self._view = _C.GraphView(self.device.type, self.num_src, self.num_dst, self.num_edges,
                                              self.row_ptr.data_ptr(), self.row_ptr.numel(), self.col_idx.data_ptr(),
                                              self.edge_ids.data_ptr() if self.edge_ids is not None else 0,
                                              self.max_degree)
                v = self._view
        return v

    def user_view(self, row_order=False):
        """The view with the edge id of every CSR position set (positions when they are the ids), as
        user programs on CUDA need it (made on first use); with row_order, also the rows by in-degree,
        longest first (one stable sort on the device, on first use), for user programs whose schedule
        orders rows."""
        if self._sources:
            self._check_sources()
        v = self._user_view
        if v is None:
            with self._lock:
                if self._user_view is None:
                    eid = self.edge_ids if self.edge_ids is not None else torch.arange(
                        max(self.num_edges, 1), dtype=torch.int32, device=self.device)
                    self._user_view_ids = eid  # the view reads it by address
                    self._user_view = _C.GraphView(self.device.type, self.num_src, self.num_dst, self.num_edges,
                                                   self.row_ptr.data_ptr(), self.row_ptr.numel(),
                                                   self.col_idx.data_ptr(), eid.data_ptr(), self.max_degree)
                v = self._user_view
        if row_order and self._row_order is None:
            with self._lock:
                if self._row_order is None:
                    order = torch.sort(self.in_degrees(), descending=True, stable=True).indices.to(torch.int32)
                    v.set_row_order(order.data_ptr())
                    self._row_order = order  # the view reads it by address
        return v

    def sddmm_view(self):
        """The view with its COO arrays set (built and set on first use); the COO view of a graph
        without its CSR (g-SDDMM reads the COO alone)."""
        if self._row_ptr is None:
            return self.coo_view()
        if not self._view_has_coo:
            with self._lock:
                if not self._view_has_coo:
                    src, dst = self.coo_padded()
                    self.view.set_coo(src.data_ptr(), dst.data_ptr(), src.numel())
                    self._view_has_coo = True
        return self._view

    # --- Derived arrays ----------------------------------------------------------------------------

    def row_of_position(self):
        """The destination of every CSR position (int64, num_edges entries): the rows ending at or
        before it, one binary search per position (two kernels; repeat_interleave takes five and
        several times the host work)."""
        positions = torch.arange(self.num_edges, dtype=self.row_ptr.dtype, device=self.device)
        return torch.searchsorted(self.row_ptr[1: self.num_dst + 1], positions, right=True)

    def positions_edge_ids(self):
        """The edge id of every CSR position (int64)."""
        if self.edge_ids is None:
            return torch.arange(self.num_edges, device=self.device)
        return self.edge_ids.to(torch.int64)

    def coo_padded(self):
        if self._sources:
            self._check_sources()
        if self._coo is None:
            with self._lock:  # threads sharing the graph must all get (and keep alive) the same arrays
                if self._coo is None:
                    self._make_coo_padded()
                    if self.device.type == "cuda":  # made on this stream: others wait for it
                        self._coo_ready = (torch.cuda.current_stream(self.device), torch.cuda.Event())
                        self._coo_ready[1].record(self._coo_ready[0])
        ready = self._coo_ready
        if ready is not None:
            stream = torch.cuda.current_stream(self.device)
            if stream != ready[0]:
                stream.wait_event(ready[1])
        return self._coo

    def _make_coo_padded(self):
        if self._coo is None and self._coo_source is not None:
            E = self.num_edges
            self._coo = tuple(padded_int32(t, E, EDGE_PAD) for t in self._coo_source)
            self._coo_source = None
        if self._coo is None:
            E = self.num_edges
            rows = self.row_of_position()
            cols = self.col_idx[:E]
            if self.edge_ids is None:
                self._coo = (padded_int32(cols, E, EDGE_PAD), padded_int32(rows, E, EDGE_PAD))
            else:
                src = torch.zeros(_round_up(max(E, 1), EDGE_PAD), dtype=torch.int32, device=self.device)
                dst = torch.zeros_like(src)
                eid = self.edge_ids.to(torch.int64)
                src[eid] = cols
                dst[eid] = rows.to(torch.int32)
                self._coo = (src, dst)
        return self._coo

    def coo(self):
        """(src, dst) int32 in edge-id order, num_edges entries each."""
        src, dst = self.coo_padded()
        return src[: self.num_edges], dst[: self.num_edges]

    def csr(self):
        """(row_ptr [num_dst + 1], col_idx [num_edges], edge_ids [num_edges]) int32."""
        if self._sources:
            self._check_sources()
        eid = self.edge_ids if self.edge_ids is not None else torch.arange(
            self.num_edges, dtype=torch.int32, device=self.device)
        return self.row_ptr[: self.num_dst + 1], self.col_idx[: self.num_edges], eid

    def in_degrees(self):
        return (self.row_ptr[1: self.num_dst + 1] - self.row_ptr[: self.num_dst]).to(torch.int64)

    def with_loops_appended(self):
        """(graph, dropped): this graph plus one self-loop u -> u at the end of every row
        u < n = min(num_src, num_dst), built with elementwise operations (no sort, no read-back),
        and a bool mask [num_edges + n] marking this graph's own self-loops. The new graph's edge ids
        are its CSR positions (an edge keeps its source and destination, not its id), so edge
        tensors of it come from operators on it. With the masked edges left out it is the graph with
        every self-loop replaced by one loop per node (PyG's remove_self_loops + add_self_loops); a
        layer that can weigh edges by zero (attention scores of -inf, normalization weights of 0)
        uses it as it is, without the read-back that counting the loops needs."""
        E, n = self.num_edges, min(self.num_src, self.num_dst)
        if E + n > INT32_MAX:
            raise GraphError(f"{E} edges and {n} self-loops exceed int32 indices (gsparse uses int32)")
        dev = self.device
        length = _round_up(max(E + n, 1), EDGE_PAD)
        if dev.type in NATIVE_BUILD_DEVICES:
            # Graph-build kernels instead of about fifteen PyTorch operations. A graph without its
            # CSR yet stays without: its edges in their order, then the loops (one kernel).
            csr = self._row_ptr is not None
            view = self.view if csr else self.coo_view()
            row_ptr = torch.empty(self._row_ptr.numel(), dtype=torch.int32, device=dev) if csr else None
            src = torch.empty(length, dtype=torch.int32, device=dev)
            dst = torch.empty(length, dtype=torch.int32, device=dev)
            own = torch.empty(length, dtype=torch.bool, device=dev)
            _C.append_self_loops(view, row_ptr.data_ptr() if csr else 0, src.data_ptr(), dst.data_ptr(), own.data_ptr(),
                                 length, launch_arg(dev))
            g = TensorGraph(self.num_src, self.num_dst, E + n, row_ptr, src if csr else None, None,
                            self.max_degree + 1, coo=(src, dst), sources=self._sources)
            return g, own[: E + n]
        rows = torch.arange(self.row_ptr.numel(), dtype=torch.int32, device=dev)
        row_ptr = self.row_ptr + rows.clamp(max=n)
        pos_row = self.row_of_position()
        new_pos = pos_row.clamp(max=n).add_(torch.arange(E, device=dev))
        # The COO in position order is the CSR's source array and the row of every position.
        src = torch.zeros(length, dtype=torch.int32, device=dev)
        dst = torch.zeros(length, dtype=torch.int32, device=dev)
        cols = self.col_idx[:E]
        src[new_pos] = cols
        dst[new_pos] = pos_row.to(torch.int32)
        loop_pos = row_ptr[1: n + 1].to(torch.int64).sub_(1)
        loops = rows[:n]
        src[loop_pos] = loops
        dst[loop_pos] = loops
        dropped = torch.zeros(E + n, dtype=torch.bool, device=dev)
        dropped[new_pos] = cols == pos_row
        g = TensorGraph(self.num_src, self.num_dst, E + n, row_ptr, src, None, self.max_degree + 1, coo=(src, dst),
                        sources=self._sources)
        return g, dropped

    def gcn_loop_weights(self, own_loops, fill, normalize):
        """GCN's float32 edge weights [num_edges, 1] of this self-loop graph (with_loops_appended; own_loops
        its flags), computed by two graph-build kernels: see gsparse.nn.GCNConv.loop_weights."""
        E, dev = self.num_edges, self.device
        degrees = torch.empty(2 * max(self.num_dst, 1), dtype=torch.int32, device=dev)
        w = torch.empty(max(E, 1), 1, dtype=torch.float32, device=dev)
        _C.gcn_loop_weights(self.coo_view(), own_loops.data_ptr(), float(fill), bool(normalize), degrees.data_ptr(), w.data_ptr(),
                            launch_arg(dev))
        return w[:E]

    def reverse(self):
        """The reversed graph (edges v -> u, same ids), built with one stable sort on the device."""
        E = self.num_edges
        if self._row_ptr is None:  # no CSR: the COO is in edge-id order, its positions are the ids
            cols, rows = self.coo()
            order = torch.sort(cols, stable=True)
            return TensorGraph(self.num_dst, self.num_src, E, row_ptr_of_sorted(order.values, self.num_src),
                               rows[order.indices], order.indices.to(torch.int32), None, sources=self._sources)
        cols = self.col_idx[:E]
        coo_source = self._coo_source  # (another thread may pad and drop it meanwhile)
        if coo_source is not None and self.edge_ids is None:
            rows = coo_source[1]  # positions are edge ids: the destinations as given
        else:
            rows = torch.searchsorted(self.row_ptr[1: self.num_dst + 1], torch.arange(E, dtype=torch.int32,
                                      device=self.device), right=True, out_int32=True)
        order = torch.sort(cols, stable=True)
        row_ptr = row_ptr_of_sorted(order.values, self.num_src)
        rev_cols = rows[order.indices].to(torch.int32)
        eid = (order.indices if self.edge_ids is None else self.edge_ids[order.indices]).to(torch.int32)
        return TensorGraph(self.num_dst, self.num_src, E, row_ptr, rev_cols, eid, None, sources=self._sources)


def _is_edge_index(t):
    """Whether t is a [2, E] tensor (the rows src and dst come from), so one kernel covers both."""
    return t is not None and t.dim() == 2 and t.shape[0] == 2


def _coo_stats(src, dst, edge_index, order=True):
    """[min src, min dst, max src, max dst, min step of dst] read back in one copy: the range and
    order checks of from_coo (a handful of kernels and one synchronisation). The step is 0 for a
    single edge, and without order."""
    if _is_edge_index(edge_index):
        lo, hi = torch.aminmax(edge_index, dim=1)
    else:
        (lo_s, hi_s), (lo_d, hi_d) = torch.aminmax(src), torch.aminmax(dst)
        lo, hi = torch.stack([lo_s, lo_d]), torch.stack([hi_s, hi_d])
    parts = [lo, hi]
    if order and dst.numel() > 1:
        parts.append(torch.diff(dst).min().view(1).to(lo.dtype))
    values = torch.cat(parts).tolist()
    return values + [0] * (5 - len(values))


def from_coo(src, dst, num_src, num_dst, validate=True, max_degree=None, edge_index=None, csr="auto"):
    """A dynamic graph of the edges src[i] -> dst[i] (edge id i) on their device. With validation
    (one read of a few numbers), edges already sorted by destination (PyG's sorted edge_index, the
    sampler's blocks) also skip the sort and keep their ids as CSR positions. edge_index: the
    [2, E] tensor src and dst are the rows of, when there is one (its range check is one kernel).

    csr: when the CSR of unsorted edges is made (one stable sort): "now", "lazy" (on first use by
    an operator that needs it: g-SpMM mean / max / min, edge softmax, the derived graphs; g-SpMM
    sum and its backward and g-SDDMM run on the COO), or "auto": lazy for graphs of at most
    LAZY_CSR_MAX_EDGES edges, whose operators cost less than the sort, now for larger ones."""
    if csr not in ("auto", "now", "lazy"):
        raise GraphError(f"csr must be 'auto', 'now' or 'lazy', got {csr!r}")
    E = int(src.numel())
    if E > INT32_MAX:
        raise GraphError(f"{E} edges exceed int32 indices (gsparse uses int32)")
    src, dst = src.contiguous(), dst.contiguous()  # rows of a transposed edge_index are strided
    if src.dtype not in (torch.int32, torch.int64):
        # Narrower ids (uint8, int16, ...) would wrap in the order check (diff) and in the row
        # numbers of row_ptr_of_sorted (an arange of their dtype): widen them.
        src, dst = src.to(torch.int64), dst.to(torch.int64)
        edge_index = edge_index.to(torch.int64) if edge_index is not None else None
    # Small graphs keep their COO (padded int32) and make the CSR on first use; their order does not
    # matter, so validation skips the order check.
    lazy = E > 0 and (csr == "lazy" or (csr == "auto" and E <= LAZY_CSR_MAX_EDGES))
    if E and src.device.type in NATIVE_BUILD_DEVICES and (lazy or validate):
        g = _native_from_coo(src, dst, num_src, num_dst, validate, lazy, max_degree)
        if g is not None:
            return g
        validate = False  # unsorted edges, validated: sort them below
    in_order = False
    if validate and E:
        min_src, min_dst, max_src, max_dst, step = _coo_stats(src, dst, edge_index, order=not lazy)
        if min(min_src, min_dst) < 0:
            which = "source" if min_src < 0 else "destination"
            raise GraphError(f"edge_index holds the negative {which} id {min(min_src, min_dst)}")
        if max_src >= num_src:
            raise GraphError(f"edge source id {max_src} is out of range [0, num_src = {num_src})")
        if max_dst >= num_dst:
            raise GraphError(f"edge destination id {max_dst} is out of range [0, num_dst = {num_dst})")
        in_order = step >= 0 and not lazy
    if lazy:
        coo = torch.zeros((2, _round_up(E, EDGE_PAD)), dtype=torch.int32, device=src.device)
        if _is_edge_index(edge_index):
            coo[:, :E].copy_(edge_index)
        else:
            coo[0, :E].copy_(src)
            coo[1, :E].copy_(dst)
        return TensorGraph(num_src, num_dst, E, None, None, None, max_degree, coo=(coo[0], coo[1]))
    if in_order or E == 0:
        row_ptr = row_ptr_of_sorted(dst, num_dst)
        col_idx = src.to(torch.int32)
        return TensorGraph(num_src, num_dst, E, row_ptr, col_idx, None, max_degree, coo_source=(src, dst),
                           sources=(src, dst))
    order = torch.sort(dst, stable=True)
    row_ptr = row_ptr_of_sorted(order.values, num_dst)
    col_idx = src[order.indices].to(torch.int32)
    edge_ids = order.indices.to(torch.int32)
    return TensorGraph(num_src, num_dst, E, row_ptr, col_idx, edge_ids, max_degree, coo_source=(src, dst),
                       sources=(src, dst))


def _native_from_coo(src, dst, num_src, num_dst, validate, lazy, max_degree):
    """from_coo by the graph-build kernels (api/view_build.h): the COO graph (lazy) or the CSR of
    edges sorted by destination; None when validation finds them unsorted (ranges checked)."""
    if src.dtype != dst.dtype:
        src, dst = src.to(torch.int64), dst.to(torch.int64)
    E, dev = int(src.numel()), src.device
    workspace = torch.empty(_C.view_build_workspace_bytes(E), dtype=torch.uint8, device=dev)
    launch = launch_arg(dev)
    ids = (tensor_arg(src, "src"), tensor_arg(dst, "dst"))
    if lazy:
        coo = torch.empty((2, _round_up(E, EDGE_PAD)), dtype=torch.int32, device=dev)
        _C.build_coo(*ids, num_src, num_dst, coo[0].data_ptr(), coo[1].data_ptr(), coo.shape[1],
                     workspace.data_ptr(), validate, launch)
        return TensorGraph(num_src, num_dst, E, None, None, None, max_degree, coo=(coo[0], coo[1]))
    row_ptr = torch.empty(_round_up(num_dst, ROW_PAD) + 2, dtype=torch.int32, device=dev)
    col_idx = src if src.dtype == torch.int32 else torch.empty(E, dtype=torch.int32, device=dev)
    stats = _C.build_sorted_csr(*ids, num_src, num_dst, row_ptr.data_ptr(),
                                0 if col_idx is src else col_idx.data_ptr(), workspace.data_ptr(), True, launch)
    if stats[4] > 0:
        return None
    return TensorGraph(num_src, num_dst, E, row_ptr, col_idx, None, max_degree, coo_source=(src, dst),
                       sources=(src, dst))


def from_csr(row_ptr, col_idx, num_src, edge_ids=None, validate=True, max_degree=None):
    """A dynamic graph over a CSR by destination on its device (edge ids: positions, or edge_ids)."""
    # Narrower arrays (uint8, int16, ...) would wrap the counts they are compared with: widen them.
    row_ptr, col_idx, edge_ids = (t.to(torch.int64) if t is not None and t.dtype not in (torch.int32, torch.int64)
                                  else t for t in (row_ptr, col_idx, edge_ids))
    num_dst = int(row_ptr.numel()) - 1
    E = int(col_idx.numel())
    if E > INT32_MAX:
        raise GraphError(f"{E} edges exceed int32 indices (gsparse uses int32)")
    if validate and max_degree is None and edge_ids is None and row_ptr.device.type in NATIVE_BUILD_DEVICES:
        # The graph-build kernels' statistics of both arrays (two passes, two read-backs).
        # (The contiguous arrays are held while the kernels read them; the caller's stay the sources.)
        rp, ci = row_ptr.contiguous(), col_idx.contiguous()
        workspace = torch.empty(_C.view_build_workspace_bytes(max(num_dst + 1, E)), dtype=torch.uint8, device=rp.device)
        _C.check_csr(tensor_arg(rp, "row_ptr"), tensor_arg(ci, "col_idx"), num_src, workspace.data_ptr(),
                     launch_arg(rp.device))
    elif validate:
        checks = [
            (row_ptr[0] != 0, lambda: f"row_ptr[0] = {int(row_ptr[0])}, expected 0"),
            (row_ptr[-1] != E, lambda: f"row_ptr[-1] = {int(row_ptr[-1])} but col_idx has {E} entries"),
        ]
        if num_dst > 0:
            checks.append(((row_ptr[1:] < row_ptr[:-1]).any(), lambda: "row_ptr decreases"))
            if max_degree is not None:
                longest = (row_ptr[1:] - row_ptr[:-1]).max()
                checks.append((longest > max_degree, lambda: f"max_degree = {max_degree} is less than the "
                                                             f"longest row ({int(longest)} edges)"))
        if E:
            checks += [
                (col_idx.min() < 0, lambda: f"col_idx holds the negative source id {int(col_idx.min())}"),
                (col_idx.max() >= num_src,
                 lambda: f"col_idx holds the source id {int(col_idx.max())}, out of range [0, num_src = {num_src})"),
            ]
        if edge_ids is not None and E:
            seen = torch.zeros(E, dtype=torch.int32, device=edge_ids.device)
            ok_range = (edge_ids.min() >= 0) & (edge_ids.max() < E)
            seen.index_add_(0, edge_ids.to(torch.int64).clamp(0, E - 1), torch.ones_like(seen))
            checks.append((~ok_range | (seen != 1).any(),
                           lambda: f"edge_ids is not a permutation of 0..{E - 1}"))
        check_async(checks)
    eid = edge_ids.to(torch.int32).contiguous() if edge_ids is not None else None
    return TensorGraph(num_src, num_dst, E, padded_row_ptr(row_ptr, num_dst, E),
                       col_idx.to(torch.int32).contiguous(), eid, max_degree, sources=(col_idx, edge_ids))
