// Checks on zoo graphs computed directly from the CSR arrays.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "graph/formats.h"
#include "graph/validate.h"

namespace gsparse::datasets::test {

/// The message of the gsparse::Error that f throws ("" if it throws none).
template <typename F>
std::string error_of(F &&f) {
    try {
        f();
    } catch (const Error &e) {
        return e.what();
    }
    return "";
}

/// Empty when g passes validate() and has sorted rows and identity edge ids; else the problem.
inline std::string csr_problem(const CSR &g) {
    try {
        validate(g);
        validate_sorted_rows(g);
    } catch (const Error &e) {
        return e.what();
    }
    return g.edge_ids.empty() ? "" : "edge ids are not the identity";
}

inline int64_t self_loops(const CSR &g) {
    int64_t n = 0;
    for (int64_t v = 0; v < g.num_rows; v++)
        for (int64_t p = g.row_ptr[v]; p < g.row_ptr[v + 1]; p++) n += g.col_idx[p] == v;
    return n;
}

/// Repeated sources within a row (rows are sorted).
inline int64_t duplicates(const CSR &g) {
    int64_t n = 0;
    for (int64_t v = 0; v < g.num_rows; v++)
        for (int64_t p = g.row_ptr[v] + 1; p < g.row_ptr[v + 1]; p++) n += g.col_idx[p] == g.col_idx[p - 1];
    return n;
}

inline std::vector<int64_t> out_degrees(const CSR &g) {
    std::vector<int64_t> d(static_cast<size_t>(g.num_cols), 0);
    for (index_t u : g.col_idx) d[u]++;
    return d;
}

inline int64_t max_row(const CSR &g) {
    int64_t m = 0;
    for (int64_t v = 0; v < g.num_rows; v++) m = std::max(m, g.row_length(v));
    return m;
}

/// Every edge u -> v has its reverse v -> u.
inline bool symmetric(const CSR &g) {
    if (g.num_rows != g.num_cols) return false;
    for (int64_t v = 0; v < g.num_rows; v++)
        for (int64_t p = g.row_ptr[v]; p < g.row_ptr[v + 1]; p++) {
            const int64_t u = g.col_idx[p];
            if (!std::binary_search(g.col_idx.begin() + g.row_ptr[u], g.col_idx.begin() + g.row_ptr[u + 1],
                                    static_cast<index_t>(v)))
                return false;
        }
    return true;
}

inline bool same_graph(const CSR &a, const CSR &b) {
    return a.num_rows == b.num_rows && a.num_cols == b.num_cols && a.row_ptr == b.row_ptr && a.col_idx == b.col_idx &&
           a.edge_ids == b.edge_ids;
}

}  // namespace gsparse::datasets::test
