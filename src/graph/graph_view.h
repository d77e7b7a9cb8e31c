// GraphView: a graph over index arrays in caller memory (host or CUDA device memory), for graphs
// that live for a few operator calls: mini-batch blocks, batches of small graphs, any graph built
// on the device. Nothing is copied, validated or derived here: the caller builds the arrays (the
// Python package does so on the GPU with PyTorch operations, validating them there) and keeps them
// alive while kernels run on the view. Kernels run on a view with the graph-blind (stats-free)
// default schedules, so a new graph of any size never triggers a compile.
//
// Layout:
//   row_ptr   CSR by destination: row_ptr_len >= num_dst + 1 entries; entries past num_dst are
//             num_edges. On CUDA, row_ptr_len >= round_up(num_dst, kViewRowPad) + 2, so the last
//             block of every row tile reads in-range offsets.
//   col_idx   num_edges source ids (at least one entry, even without edges).
//   edge_ids  num_edges edge ids of the CSR positions, or null when the id of position i is i.
//   coo_src,  g-SDDMM's COO in edge-id order (source and destination of edge e); coo_len >=
//   coo_dst   num_edges entries (at least one), padded with 0 on CUDA to a multiple of
//             kViewEdgePad. Null when no g-SDDMM runs on the view.
//             A COO view has these and no CSR (row_ptr and col_idx null): the kernels that read
//             the COO alone (g-SpMM sum by nonzeros) run on graphs whose CSR was never built.
//   max_degree an upper bound of the longest row (num_edges when unknown).
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "graph/formats.h"

namespace gsparse {

/// Row padding of a view's row_ptr on CUDA (every row tile of the schedules divides it).
inline constexpr int64_t kViewRowPad = 32;
/// Edge padding of a view's COO arrays on CUDA (the largest g-SDDMM edge tile).
inline constexpr int64_t kViewEdgePad = 1024;

/// Entries of a view's row_ptr for num_dst rows on CUDA: round_up(num_dst, kViewRowPad) + 2 (more
/// than the CPU's num_dst + 1 needs).
int64_t view_row_ptr_length(int64_t num_dst);
/// Entries of a view's COO arrays for num_edges edges on CUDA: round_up(max(num_edges, 1),
/// kViewEdgePad) (at least the CPU's max(num_edges, 1)).
int64_t view_coo_length(int64_t num_edges);

struct GraphView {
    Device device = Device::CPU;
    int64_t num_src = 0, num_dst = 0, num_edges = 0;
    const index_t *row_ptr = nullptr;
    int64_t row_ptr_len = 0;
    const index_t *col_idx = nullptr;
    const index_t *edge_ids = nullptr;
    const index_t *coo_src = nullptr, *coo_dst = nullptr;
    int64_t coo_len = 0;
    int64_t max_degree = -1;
    /// The rows by in-degree, longest first (num_dst entries, a permutation of 0..num_dst - 1), for
    /// user programs whose schedule orders rows (dsl::ScheduleContext::balanced_rows); null when
    /// none runs on the view. Like the other arrays, the caller's to build and validate.
    const index_t *row_order = nullptr;

    bool identity_edge_ids() const { return edge_ids == nullptr; }
    /// The bound passed to kernels as the longest row.
    int64_t degree_bound() const { return max_degree >= 0 ? max_degree : num_edges; }

    /// Throws GraphError when the node and edge counts are out of int32 range.
    void check_counts() const;
    /// Throws GraphError when the sizes, pointers or paddings of the CSR break the layout above
    /// (the values in the arrays are the caller's to validate); check_counts() included.
    void check() const;
    /// Whether the view has its CSR (a COO view has none).
    bool has_csr() const { return row_ptr != nullptr; }
    /// Throws GraphError unless the COO arrays are present.
    void check_coo() const;
};

}  // namespace gsparse
