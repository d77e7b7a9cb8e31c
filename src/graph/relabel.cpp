#include "graph/relabel.h"

#include <algorithm>

#include "core/error.h"
#include "core/parallel.h"
#include "graph/validate.h"

namespace gsparse {

CSR relabel_csr(const CSR &csr, const std::vector<index_t> &order) {
    if (csr.num_rows != csr.num_cols)
        fail<GraphError>("relabeling renumbers rows and sources together: the graph must be square, got ",
                         csr.num_rows, " rows and ", csr.num_cols, " sources");
    const int64_t n = csr.num_rows;
    validate_permutation(order, n, "relabeling order");
    std::vector<index_t> new_id(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; i++) new_id[static_cast<size_t>(order[static_cast<size_t>(i)])] = static_cast<index_t>(i);

    CSR out;
    out.num_rows = out.num_cols = n;
    out.row_ptr.assign(static_cast<size_t>(n) + 1, 0);
    for (int64_t i = 0; i < n; i++)
        out.row_ptr[static_cast<size_t>(i) + 1] =
            out.row_ptr[static_cast<size_t>(i)] + static_cast<index_t>(csr.row_length(order[static_cast<size_t>(i)]));
    const size_t nnz = csr.col_idx.size();
    out.col_idx.resize(nnz);
    out.edge_ids.resize(nnz);
    // Rows are independent: each chunk of new rows copies, renames and sorts its own.
    parallel_chunks(static_cast<size_t>(n), host_threads(nnz), [&](size_t, size_t begin, size_t end) {
        std::vector<std::pair<index_t, index_t>> row;
        for (size_t i = begin; i < end; i++) {
            const int64_t old = order[i];
            row.clear();
            for (int64_t k = csr.row_ptr[static_cast<size_t>(old)]; k < csr.row_ptr[static_cast<size_t>(old) + 1]; k++)
                row.emplace_back(new_id[static_cast<size_t>(csr.col_idx[static_cast<size_t>(k)])], csr.edge_id(k));
            std::stable_sort(row.begin(), row.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
            size_t d = static_cast<size_t>(out.row_ptr[i]);
            for (const auto &[col, eid] : row) {
                out.col_idx[d] = col;
                out.edge_ids[d] = eid;
                d++;
            }
        }
    });
    return out;
}

}  // namespace gsparse
