// Graph views built where the caller's edges are (graph/graph_view.h): on the GPU for device
// arrays, with gsparse's own kernels on the caller's stream, for graphs that live for one step
// (mini-batch blocks, batches of small graphs). Nothing is copied to or from the host but the
// validation's five numbers (one read-back, the only synchronisation); nothing is allocated: the
// caller passes the arrays the view will read and a workspace, as cuSPARSE's calls take a buffer.
//
//   std::vector<char> ... // or cudaMalloc'ed memory for CUDA arrays
//   int64_t rows = gsparse::view_row_ptr_length(num_dst);
//   // row_ptr: rows int32; col_idx: num_edges int32 (or nullptr when src is int32);
//   // workspace: view_build_workspace_bytes(num_edges) bytes, 8-byte aligned
//   gsparse::ViewBuildOptions opt;  opt.cuda = {context, stream};
//   gsparse::GraphView g = gsparse::view_from_sorted_coo(src, dst, num_src, num_dst, row_ptr, col_idx,
//                                                        workspace, opt);
//   gsparse::gspmm_into(g, spec, x, {}, out, nullptr, nullptr, {.cuda = opt.cuda});
//
// src and dst are 1-D int32 or int64 tensors (Tensor::wrap of the caller's arrays) of num_edges
// entries on one device. Ids out of range, a bad size or unsorted edges (where sorting is
// required) throw GraphError naming the problem; the caller's arrays are never modified.
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "graph/formats.h"
#include "graph/graph_view.h"
#include "runtime/cuda_launch.h"

namespace gsparse {

/// What the validation of a COO found: the id ranges and the number of descents (edges followed
/// by an edge with a smaller destination; 0 when the edges are sorted by destination).
struct CooStats {
    int64_t min_src = 0, max_src = -1, min_dst = 0, max_dst = -1, descents = 0;
    bool sorted() const { return descents == 0; }
};

struct ViewBuildOptions {
    /// Check the ids' ranges and the order (one read-back). Without it, nothing is read back and
    /// the caller vouches for the edges (a sampler's blocks).
    bool validate = true;
    /// An upper bound of the longest row known to the caller (the view's max_degree); -1: unknown.
    int64_t max_degree = -1;
    /// Where the kernels run, for CUDA arrays (the caller's context and stream).
    CudaLaunch cuda;
};

// view_row_ptr_length(num_dst) and view_coo_length(num_edges), the sizes of a view's arrays, are in
// graph/graph_view.h.
/// Bytes of workspace the calls below need for num_edges edges (device memory for CUDA arrays).
int64_t view_build_workspace_bytes(int64_t num_edges);

/// The statistics of the edges src[i] -> dst[i], computed where they are; GraphError for an id
/// outside [0, num_src) or [0, num_dst).
CooStats check_coo(const Tensor &src, const Tensor &dst, int64_t num_src, int64_t num_dst, void *workspace,
                   const CudaLaunch &cuda = {});

/// Validates a CSR by destination where its arrays are: row_ptr (num_dst + 1 offsets) starts at 0,
/// never decreases and ends at num_edges = col_idx's length, and every source id in col_idx is in
/// [0, num_src); GraphError naming the first problem found. row_ptr and col_idx are 1-D int32 or
/// int64 tensors on one device; workspace: view_build_workspace_bytes(max(num_dst + 1, num_edges))
/// bytes. The statistics passes of check_coo over each array, each read back (two synchronisations).
void check_csr(const Tensor &row_ptr, const Tensor &col_idx, int64_t num_src, void *workspace,
               const CudaLaunch &cuda = {});

/// Writes the CSR of edges sorted by destination: row_ptr [view_row_ptr_length(num_dst)] and, for
/// int64 src, col_idx [num_edges] (int32 src is the view's col_idx as it is; col_idx may then be
/// null). With options.validate, returns the statistics (ranges checked: GraphError) without
/// requiring the order: an unsorted COO gives descents > 0 and row_ptr is then meaningless.
/// Without it, returns default statistics.
CooStats build_sorted_csr(const Tensor &src, const Tensor &dst, int64_t num_src, int64_t num_dst, index_t *row_ptr,
                          index_t *col_idx, void *workspace, const ViewBuildOptions &options = {});

/// The view of edges sorted by destination (build_sorted_csr; GraphError when validation finds
/// them unsorted). The view reads row_ptr, col_idx (or src) and none of the other arrays.
GraphView view_from_sorted_coo(const Tensor &src, const Tensor &dst, int64_t num_src, int64_t num_dst,
                               index_t *row_ptr, index_t *col_idx, void *workspace,
                               const ViewBuildOptions &options = {});

/// The COO view of edges in any order (g-SpMM sum by nonzeros and g-SDDMM run on it): src and dst
/// narrowed to int32 into coo_src and coo_dst [coo_len >= view_coo_length(num_edges)], padded with
/// 0; ranges validated with options.validate.
GraphView coo_view_from_edges(const Tensor &src, const Tensor &dst, int64_t num_src, int64_t num_dst,
                              index_t *coo_src, index_t *coo_dst, int64_t coo_len, void *workspace,
                              const ViewBuildOptions &options = {}, CooStats *stats = nullptr);

/// The view of g with one self-loop u -> u added for every u < min(num_src, num_dst), g's own
/// self-loops kept, built where g's arrays are (no read-back). From a CSR view (two kernels): the
/// loop at the end of its row, row_ptr [view_row_ptr_length(num_dst)] and the COO in position order
/// coo_src (also the new view's col_idx) and coo_dst; its edge ids are its positions (g's ids are
/// not carried over). From a COO view (one kernel; row_ptr unused, may be null): a COO view of g's
/// edges in their order, then the loops. own_loops flags g's own self-loops (1, else 0); coo_src,
/// coo_dst and own_loops have coo_len >= view_coo_length(num_edges + loops) entries, padded with
/// 0. max_degree is g's plus one. Leaving out the flagged edges gives the graph with every self-loop
/// replaced by one loop per node (PyG's remove_self_loops + add_self_loops) without counting them
/// on the host.
GraphView view_with_self_loops(const GraphView &g, index_t *row_ptr, index_t *coo_src, index_t *coo_dst,
                               uint8_t *own_loops, int64_t coo_len, const CudaLaunch &cuda = {});

/// GCN's edge weights on a self-loop view (view_with_self_loops, own_loops its flags), in edge
/// order: 0 on g's own loops, l(v) on the added loop of v (1 where v had loops of its own, else
/// fill: 1, or 2 for GCN's `improved`), 1 on the other edges; with normalize, times
/// D^-1/2[u] D^-1/2[v], D[v] = l(v) plus v's other in-edges: PyG's add_remaining_self_loops and
/// gcn_norm on the graph, on the device and without a read-back (two kernels). own_loops: coo_len
/// entries (as view_with_self_loops writes them); weights: num_edges float32 entries; degrees: a
/// workspace of 2 num_dst int32. Normalizing needs a square graph.
void gcn_self_loop_weights(const GraphView &loops, const uint8_t *own_loops, float fill, bool normalize,
                           int32_t *degrees, float *weights, const CudaLaunch &cuda = {});

}  // namespace gsparse
