// A GraphView over the host arrays of a Graph, as the Python package builds views over its tensors.
#pragma once

#include <vector>

#include "graph/graph.h"
#include "graph/graph_view.h"

namespace gsparse::test {

struct HostView {
    GraphView view;
    std::vector<index_t> row_ptr;
};

/// The view of g's host arrays (edge ids kept unless identity), COO in edge-id order.
inline HostView view_of(const Graph &g, int64_t max_degree = -1) {
    HostView h;
    const CSR &csr = g.csr();
    h.row_ptr = csr.row_ptr;
    h.view.num_src = g.num_src();
    h.view.num_dst = g.num_dst();
    h.view.num_edges = g.num_edges();
    h.view.row_ptr = h.row_ptr.data();
    h.view.row_ptr_len = static_cast<int64_t>(h.row_ptr.size());
    h.view.col_idx = csr.col_idx.data();
    h.view.edge_ids = csr.identity_edge_ids() ? nullptr : csr.edge_ids.data();
    h.view.coo_src = g.coo().col.data();
    h.view.coo_dst = g.coo().row.data();
    h.view.coo_len = g.num_edges();
    h.view.max_degree = max_degree;
    return h;
}

}  // namespace gsparse::test
