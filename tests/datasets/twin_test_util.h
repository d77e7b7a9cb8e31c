// Row statistics computed directly from CSR arrays, and a structural check, for the twin tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "graph/formats.h"

namespace gsparse::datasets::test {

struct RowShape {
    double mean = 0;
    double cov = 0;
    int64_t max = 0;
};

inline RowShape row_shape(const CSR &g) {
    RowShape s;
    if (g.num_rows == 0) return s;
    s.mean = static_cast<double>(g.nnz()) / static_cast<double>(g.num_rows);
    double ss = 0;
    for (int64_t v = 0; v < g.num_rows; v++) {
        const int64_t len = g.row_length(v);
        s.max = std::max(s.max, len);
        ss += (static_cast<double>(len) - s.mean) * (static_cast<double>(len) - s.mean);
    }
    s.cov = s.mean > 0 ? std::sqrt(ss / static_cast<double>(g.num_rows)) / s.mean : 0.0;
    return s;
}

/// Empty string when g is a well-formed twin (consistent row_ptr, identity edge ids, indices in
/// range, rows strictly ascending); otherwise the first problem found.
inline std::string structure_problem(const CSR &g) {
    if (g.num_rows != g.num_cols) return "not square";
    if (static_cast<int64_t>(g.row_ptr.size()) != g.num_rows + 1) return "row_ptr size";
    if (g.row_ptr.front() != 0 || g.row_ptr.back() != g.nnz()) return "row_ptr ends";
    if (!g.edge_ids.empty()) return "edge ids are not the identity";
    for (int64_t v = 0; v < g.num_rows; v++) {
        if (g.row_ptr[v + 1] < g.row_ptr[v]) return "row_ptr decreases at row " + std::to_string(v);
        for (int64_t p = g.row_ptr[v]; p < g.row_ptr[v + 1]; p++) {
            if (g.col_idx[p] < 0 || g.col_idx[p] >= g.num_cols)
                return "index " + std::to_string(g.col_idx[p]) + " out of range in row " + std::to_string(v);
            if (p > g.row_ptr[v] && g.col_idx[p] <= g.col_idx[p - 1])
                return "row " + std::to_string(v) + " is unsorted or has a duplicate";
        }
    }
    return "";
}

}  // namespace gsparse::datasets::test
