#include "api/view_build.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "ops/graph_build_algorithm.h"
#include "runtime/graph_build_kernels.h"
#include "runtime/primary_context.h"

namespace gsparse {

namespace {

/// The edges' device and id type; ShapeError when src and dst are not two 1-D id tensors of
/// num_edges entries on one device with one dtype.
void check_edges(const Tensor &src, const Tensor &dst, int64_t num_src, int64_t num_dst) {
    for (auto [t, name] : {std::pair{&src, "src"}, {&dst, "dst"}}) {
        if (!t->defined()) fail<ShapeError>("the edges' ", name, " array is undefined");
        if (t->dim() != 1) fail<ShapeError>("the edges' ", name, " array must be 1-D, got ", t->str());
        check_index_dtype(t->dtype(), name);
    }
    if (src.size(0) != dst.size(0))
        fail<ShapeError>("src ", src.str(), " and dst ", dst.str(), " hold different numbers of edges");
    if (src.dtype() != dst.dtype())
        fail<ShapeError>("src (", dtype_name(src.dtype()), ") and dst (", dtype_name(dst.dtype()), ") differ in dtype");
    if (src.device() != dst.device())
        fail<ShapeError>("src is on ", device_name(src.device()), " and dst on ", device_name(dst.device()));
    if (src.size(0) > 0 && (!src.data() || !dst.data())) fail<ShapeError>("null src or dst array for ", src.size(0), " edges");
    for (auto [name, n] : {std::pair{"num_src", num_src}, {"num_dst", num_dst}, {"num_edges", src.size(0)}})
        if (n < 0 || n > INT32_MAX) fail<GraphError>(name, " = ", n, " is out of range [0, 2^31) (gsparse uses int32 ids)");
}

void check_workspace(const void *workspace) {
    if (!workspace) fail<ShapeError>("the graph build needs a workspace (view_build_workspace_bytes)");
    if (reinterpret_cast<uintptr_t>(workspace) % alignof(int64_t) != 0)
        fail<ShapeError>("the graph build's workspace must be 8-byte aligned");
}

CooStats read_stats(const GraphBuildKernels &k, const Tensor &src, const Tensor &dst, void *workspace,
                    const CudaLaunch &cuda) {
    CooStats s;
    const int64_t E = src.size(0);
    if (E == 0) return s;
    const GraphBuildKernels::Partials p = k.coo_stats(src, dst, E, static_cast<int64_t *>(workspace), cuda);
    std::vector<int64_t> v(static_cast<size_t>(p.parts * kCooStatCount));
    const size_t bytes = v.size() * sizeof(int64_t);
    if (src.device() == Device::CUDA) cuda_read_back(cuda.context, cuda.stream, v.data(), p.data, bytes);
    else std::memcpy(v.data(), p.data, bytes);
    // The last combination on the host: partial t's statistics are at t * kCooStatCount.
    s.min_src = s.min_dst = INT64_MAX;
    s.max_src = s.max_dst = INT64_MIN;
    for (int64_t t = 0; t < p.parts; t++) {
        const int64_t *q = v.data() + t * kCooStatCount;
        s.min_src = std::min(s.min_src, q[kMinSrc]);
        s.max_src = std::max(s.max_src, q[kMaxSrc]);
        s.min_dst = std::min(s.min_dst, q[kMinDst]);
        s.max_dst = std::max(s.max_dst, q[kMaxDst]);
        s.descents += q[kDescents];
    }
    return s;
}

void check_ranges(const CooStats &s, int64_t num_src, int64_t num_dst) {
    if (std::min(s.min_src, s.min_dst) < 0) {
        const bool source = s.min_src < 0;
        fail<GraphError>("the edges hold the negative ", source ? "source" : "destination", " id ",
                         source ? s.min_src : s.min_dst);
    }
    if (s.max_src >= num_src)
        fail<GraphError>("edge source id ", s.max_src, " is out of range [0, num_src = ", num_src, ")");
    if (s.max_dst >= num_dst)
        fail<GraphError>("edge destination id ", s.max_dst, " is out of range [0, num_dst = ", num_dst, ")");
}

/// ids, or for an empty ids array a one-entry stand-in in the workspace: the kernels read at least
/// one entry (at a clamped index) even where they use none.
Tensor ids_or_stand_in(const Tensor &ids, void *workspace) {
    return ids.size(0) > 0 ? ids : Tensor::wrap(workspace, {1}, ids.dtype(), ids.device());
}

GraphView sized_view(Device device, int64_t num_src, int64_t num_dst, int64_t num_edges) {
    GraphView g;
    g.device = device;
    g.num_src = num_src;
    g.num_dst = num_dst;
    g.num_edges = num_edges;
    return g;
}

}  // namespace

int64_t view_build_workspace_bytes(int64_t num_edges) {
    return static_cast<int64_t>(sizeof(int64_t)) * coo_stats_workspace_slots(std::max<int64_t>(num_edges, 1));
}

CooStats check_coo(const Tensor &src, const Tensor &dst, int64_t num_src, int64_t num_dst, void *workspace,
                   const CudaLaunch &cuda) {
    check_edges(src, dst, num_src, num_dst);
    check_workspace(workspace);
    CooStats s = read_stats(*GraphBuildKernels::get(src.dtype(), src.device()), src, dst, workspace, cuda);
    check_ranges(s, num_src, num_dst);
    return s;
}

void check_csr(const Tensor &row_ptr, const Tensor &col_idx, int64_t num_src, void *workspace,
               const CudaLaunch &cuda) {
    for (auto [t, name] : {std::pair{&row_ptr, "row_ptr"}, {&col_idx, "col_idx"}}) {
        if (!t->defined()) fail<ShapeError>("the CSR's ", name, " array is undefined");
        if (t->dim() != 1) fail<ShapeError>("the CSR's ", name, " array must be 1-D, got ", t->str());
        check_index_dtype(t->dtype(), name);
        if (t->size(0) > 0 && !t->data()) fail<ShapeError>("null ", name, " array for ", t->size(0), " entries");
    }
    if (row_ptr.size(0) < 1) fail<GraphError>("row_ptr must hold num_dst + 1 offsets, got none");
    if (row_ptr.device() != col_idx.device())
        fail<ShapeError>("row_ptr is on ", device_name(row_ptr.device()), " and col_idx on ", device_name(col_idx.device()));
    const int64_t E = col_idx.size(0);
    for (auto [name, n] : {std::pair{"num_src", num_src}, {"num_dst", row_ptr.size(0) - 1}, {"num_edges", E}})
        if (n < 0 || n > INT32_MAX) fail<GraphError>(name, " = ", n, " is out of range [0, 2^31) (gsparse uses int32 ids)");
    check_workspace(workspace);
    const Device device = row_ptr.device();
    // The offsets: no descent, so the first is the minimum and the last the maximum.
    const CooStats r = read_stats(*GraphBuildKernels::get(row_ptr.dtype(), device), row_ptr, row_ptr, workspace, cuda);
    if (r.descents > 0) fail<GraphError>("row_ptr decreases");
    if (r.min_src != 0) fail<GraphError>("row_ptr[0] = ", r.min_src, ", expected 0");
    if (r.max_src != E) fail<GraphError>("row_ptr[-1] = ", r.max_src, " but col_idx has ", E, " entries");
    if (E == 0) return;
    const CooStats c = read_stats(*GraphBuildKernels::get(col_idx.dtype(), device), col_idx, col_idx, workspace, cuda);
    if (c.min_src < 0) fail<GraphError>("col_idx holds the negative source id ", c.min_src);
    if (c.max_src >= num_src)
        fail<GraphError>("col_idx holds the source id ", c.max_src, ", out of range [0, num_src = ", num_src, ")");
}

CooStats build_sorted_csr(const Tensor &src, const Tensor &dst, int64_t num_src, int64_t num_dst, index_t *row_ptr,
                          index_t *col_idx, void *workspace, const ViewBuildOptions &options) {
    check_edges(src, dst, num_src, num_dst);
    check_workspace(workspace);
    if (!row_ptr) fail<ShapeError>("the view's row_ptr array is null");
    const int64_t E = src.size(0);
    if (src.dtype() == DType::I64 && E > 0 && !col_idx)
        fail<ShapeError>("int64 sources need a col_idx array of ", E, " int32 entries");
    const auto kernels = GraphBuildKernels::get(src.dtype(), src.device());
    // The kernels are queued before the read-back: one synchronisation covers them all. Without
    // edges the search runs no step and every offset is 0.
    kernels->row_offsets(ids_or_stand_in(dst, workspace), E, row_ptr, view_row_ptr_length(num_dst), options.cuda);
    if (src.dtype() == DType::I64 && E > 0) kernels->narrow(src, E, col_idx, E, options.cuda);
    if (!options.validate) return CooStats{};
    CooStats s = read_stats(*kernels, src, dst, workspace, options.cuda);
    check_ranges(s, num_src, num_dst);
    return s;
}

GraphView view_from_sorted_coo(const Tensor &src, const Tensor &dst, int64_t num_src, int64_t num_dst,
                               index_t *row_ptr, index_t *col_idx, void *workspace, const ViewBuildOptions &options) {
    const CooStats s = build_sorted_csr(src, dst, num_src, num_dst, row_ptr, col_idx, workspace, options);
    if (!s.sorted())
        fail<GraphError>("the edges are not sorted by destination (", s.descents,
                         " edges are followed by a smaller destination): sort them first, or build a Graph "
                         "(Graph::from_coo sorts on the host)");
    const int64_t E = src.size(0);
    GraphView g = sized_view(src.device(), num_src, num_dst, E);
    g.row_ptr = row_ptr;
    g.row_ptr_len = view_row_ptr_length(num_dst);
    // int32 sources are the column array as they are; without edges any valid address will do.
    g.col_idx = E == 0 ? row_ptr : src.dtype() == DType::I32 ? static_cast<const index_t *>(src.data()) : col_idx;
    g.max_degree = options.max_degree;
    g.check();
    return g;
}

GraphView coo_view_from_edges(const Tensor &src, const Tensor &dst, int64_t num_src, int64_t num_dst,
                              index_t *coo_src, index_t *coo_dst, int64_t coo_len, void *workspace,
                              const ViewBuildOptions &options, CooStats *stats) {
    check_edges(src, dst, num_src, num_dst);
    check_workspace(workspace);
    if (!coo_src || !coo_dst) fail<ShapeError>("the view's COO arrays are null");
    const int64_t E = src.size(0);
    if (coo_len < view_coo_length(E))
        fail<ShapeError>("the COO arrays have ", coo_len, " entries, ", view_coo_length(E), " needed for ", E, " edges");
    const auto kernels = GraphBuildKernels::get(src.dtype(), src.device());
    kernels->narrow_pair(ids_or_stand_in(src, workspace), ids_or_stand_in(dst, workspace), E, coo_src, coo_dst,
                         coo_len, options.cuda);
    CooStats s;
    if (options.validate) {
        s = read_stats(*kernels, src, dst, workspace, options.cuda);
        check_ranges(s, num_src, num_dst);
    }
    if (stats) *stats = s;
    GraphView g = sized_view(src.device(), num_src, num_dst, E);
    g.coo_src = coo_src;
    g.coo_dst = coo_dst;
    g.coo_len = coo_len;
    g.max_degree = options.max_degree;
    g.check_counts();
    g.check_coo();
    return g;
}

GraphView view_with_self_loops(const GraphView &g, index_t *row_ptr, index_t *coo_src, index_t *coo_dst,
                               uint8_t *own_loops, int64_t coo_len, const CudaLaunch &cuda) {
    if (g.has_csr()) g.check();
    else if (g.coo_src && g.coo_dst) g.check_coo();
    else fail<GraphError>("the self-loop graph is built from a view's CSR or COO; this view has neither");
    const int64_t loops = std::min(g.num_src, g.num_dst), E = g.num_edges + loops;
    if (E > INT32_MAX)
        fail<GraphError>(g.num_edges, " edges and ", loops, " self-loops exceed int32 indices (gsparse uses int32)");
    if ((g.has_csr() && !row_ptr) || !coo_src || !coo_dst || !own_loops)
        fail<ShapeError>("the self-loop view's row_ptr, COO or own-loop arrays are null");
    if (coo_len < view_coo_length(E))
        fail<ShapeError>("the COO arrays have ", coo_len, " entries, ", view_coo_length(E), " needed for ", E, " edges");
    const auto kernels = GraphBuildKernels::get(DType::I32, g.device);
    GraphView out = g;
    out.num_edges = E;
    out.edge_ids = nullptr;
    if (g.has_csr()) {
        const int64_t rows = view_row_ptr_length(g.num_dst);
        kernels->append_self_loops(g.row_ptr, g.row_ptr_len, g.col_idx, g.num_dst, g.num_edges, loops, row_ptr, rows,
                                   coo_src, coo_dst, own_loops, coo_len, cuda);
        out.row_ptr = row_ptr;
        out.row_ptr_len = rows;
        out.col_idx = coo_src;
    } else {
        kernels->append_self_loops_to_coo(g.coo_src, g.coo_dst, g.num_edges, loops, coo_src, coo_dst, own_loops, coo_len,
                                          cuda);
    }
    out.coo_src = coo_src;
    out.coo_dst = coo_dst;
    out.coo_len = coo_len;
    out.max_degree = g.max_degree >= 0 ? g.max_degree + 1 : -1;
    out.row_order = nullptr;
    if (out.has_csr()) out.check();
    out.check_coo();
    return out;
}

void gcn_self_loop_weights(const GraphView &loops, const uint8_t *own_loops, float fill, bool normalize,
                           int32_t *degrees, float *weights, const CudaLaunch &cuda) {
    loops.check_coo();
    if (!own_loops || !degrees || !weights) fail<ShapeError>("GCN's weights need the own-loop, degree and weight arrays");
    if (normalize && loops.num_src != loops.num_dst)
        fail<ShapeError>("GCN's normalization needs a square graph, got ", loops.num_src, " sources and ",
                         loops.num_dst, " destinations");
    if (loops.num_edges == 0) return;
    GraphBuildKernels::get(DType::I32, loops.device)
        ->gcn_weights(loops.coo_src, loops.coo_dst, own_loops, loops.coo_len, loops.num_edges, loops.num_dst,
                      std::min(loops.num_src, loops.num_dst), fill, normalize, degrees, weights, loops.num_edges, cuda);
}

}  // namespace gsparse
