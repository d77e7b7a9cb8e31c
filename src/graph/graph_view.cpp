#include "graph/graph_view.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "core/error.h"

namespace gsparse {

namespace {

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

}  // namespace

int64_t view_row_ptr_length(int64_t num_dst) { return round_up(std::max<int64_t>(num_dst, 0), kViewRowPad) + 2; }

int64_t view_coo_length(int64_t num_edges) { return round_up(std::max<int64_t>(num_edges, 1), kViewEdgePad); }

void GraphView::check_counts() const {
    for (auto [name, n] : {std::pair{"num_src", num_src}, {"num_dst", num_dst}, {"num_edges", num_edges}})
        if (n < 0 || n > INT32_MAX) fail<GraphError>("graph view: ", name, " = ", n, " is out of range [0, 2^31)");
}

void GraphView::check() const {
    check_counts();
    if (!row_ptr) fail<GraphError>("graph view: row_ptr is null");
    if (!col_idx) fail<GraphError>("graph view: col_idx is null (it holds at least one entry)");
    const int64_t need = device == Device::CUDA ? view_row_ptr_length(num_dst) : num_dst + 1;
    if (row_ptr_len < need)
        fail<GraphError>("graph view: row_ptr has ", row_ptr_len, " entries, ", need, " needed for ", num_dst,
                         " destinations on ", device_name(device));
    if (max_degree > num_edges)
        fail<GraphError>("graph view: max_degree ", max_degree, " exceeds num_edges ", num_edges);
}

void GraphView::check_coo() const {
    if (!coo_src || !coo_dst) fail<GraphError>("graph view: the kernel needs the COO arrays (coo_src, coo_dst: g-SDDMM, g-SpMM by nonzeros)");
    const int64_t need = device == Device::CUDA ? view_coo_length(num_edges) : std::max<int64_t>(num_edges, 1);
    if (coo_len < need)
        fail<GraphError>("graph view: the COO arrays have ", coo_len, " entries, ", need, " needed for ", num_edges,
                         " edges on ", device_name(device));
}

}  // namespace gsparse
