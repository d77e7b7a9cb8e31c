// Validation of CSR / CSC / COO arrays and of permutations. Every failure throws GraphError naming
// the array, the offending position and its value.
#include "graph/validate.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "core/error.h"

namespace gsparse {
namespace {

constexpr int64_t kIndexMax = std::numeric_limits<index_t>::max();

void check_count(int64_t n, const std::string &what, const char *name) {
    if (n < 0) fail<GraphError>(what, " ", name, " = ", n, " is negative");
    if (n > kIndexMax) fail<GraphError>(what, " ", name, " = ", n, " exceeds INT32_MAX (", kIndexMax, ")");
}

void check_nnz(size_t nnz, const std::string &what, const char *array) {
    if (nnz > static_cast<size_t>(kIndexMax))
        fail<GraphError>(what, " nnz = ", nnz, " (the size of ", array, ") exceeds INT32_MAX (", kIndexMax, ")");
}

void check_edge_ids_size(const std::vector<index_t> &edge_ids, size_t nnz, const std::string &what) {
    if (!edge_ids.empty() && edge_ids.size() != nnz)
        fail<GraphError>(what, " edge_ids has ", edge_ids.size(), " entries, expected 0 (identity) or nnz = ", nnz);
}

/// perm[0..n) is a permutation of [0, n); messages name `name`[i].
void check_permutation(const index_t *perm, int64_t n, const std::string &prefix, const char *name,
                       const char *rule) {
    std::vector<uint8_t> seen(static_cast<size_t>(n), 0);
    for (int64_t i = 0; i < n; i++) {
        const index_t v = perm[i];
        if (v < 0 || v >= n)
            fail<GraphError>(prefix, name, "[", i, "] = ", v, " is out of range [0, ", n, ") (", rule, ")");
        if (seen[v]) {
            int64_t first = 0;
            while (perm[first] != v) first++;
            fail<GraphError>(prefix, name, "[", i, "] = ", v, " duplicates ", name, "[", first, "] = ", v, " (", rule,
                             ")");
        }
        seen[v] = 1;
    }
}

/// Checks one compressed layout (CSR or CSC): ptr of n_outer + 1 non-decreasing offsets from 0 to
/// idx.size(), every idx in [0, n_inner).
struct CompressedNames {
    const char *outer_count;  // "num_rows"
    const char *inner_count;  // "num_cols"
    const char *ptr;          // "row_ptr"
    const char *idx;          // "col_idx"
    const char *outer;        // "row"
};

void check_compressed(int64_t n_outer, int64_t n_inner, const std::vector<index_t> &ptr,
                      const std::vector<index_t> &idx, const std::vector<index_t> &edge_ids, const std::string &what,
                      const CompressedNames &nm) {
    check_count(n_outer, what, nm.outer_count);
    check_count(n_inner, what, nm.inner_count);
    check_nnz(idx.size(), what, nm.idx);
    const int64_t nnz = static_cast<int64_t>(idx.size());
    if (static_cast<int64_t>(ptr.size()) != n_outer + 1)
        fail<GraphError>(what, " ", nm.ptr, " has ", ptr.size(), " entries, expected ", nm.outer_count, " + 1 = ",
                         n_outer + 1);
    if (ptr[0] != 0) fail<GraphError>(what, " ", nm.ptr, "[0] = ", ptr[0], ", expected 0");
    for (int64_t i = 1; i <= n_outer; i++) {
        if (ptr[i] < ptr[i - 1])
            fail<GraphError>(what, " ", nm.ptr, "[", i, "] = ", ptr[i], " is less than ", nm.ptr, "[", i - 1,
                             "] = ", ptr[i - 1], " (", nm.ptr, " must be non-decreasing)");
    }
    if (ptr[n_outer] != nnz)
        fail<GraphError>(what, " ", nm.ptr, "[", n_outer, "] = ", ptr[n_outer], " does not equal nnz = ", nnz,
                         " (the number of ", nm.idx, " entries)");
    const index_t *ix = idx.data();
    for (int64_t r = 0; r < n_outer; r++) {
        for (index_t p = ptr[r]; p < ptr[r + 1]; p++) {
            const index_t c = ix[p];
            if (c < 0 || c >= n_inner)
                fail<GraphError>(what, " ", nm.idx, "[", p, "] = ", c, " is out of range [0, ", nm.inner_count,
                                 " = ", n_inner, ") (", nm.outer, " ", r, ")");
        }
    }
    check_edge_ids_size(edge_ids, idx.size(), what);
}

const CompressedNames kCsrNames{"num_rows", "num_cols", "row_ptr", "col_idx", "row"};
const CompressedNames kCscNames{"num_cols", "num_rows", "col_ptr", "row_idx", "column"};

const char *kEdgeIdRule = "edge_ids must be a permutation of [0, nnz)";

void check_edge_id_permutation(const std::vector<index_t> &edge_ids, const std::string &what) {
    if (edge_ids.empty()) return;
    check_permutation(edge_ids.data(), static_cast<int64_t>(edge_ids.size()), what + " ", "edge_ids", kEdgeIdRule);
}

}  // namespace

void validate_structure(const CSR &g, const std::string &what) {
    check_compressed(g.num_rows, g.num_cols, g.row_ptr, g.col_idx, g.edge_ids, what, kCsrNames);
}

void validate_structure(const CSC &g, const std::string &what) {
    check_compressed(g.num_cols, g.num_rows, g.col_ptr, g.row_idx, g.edge_ids, what, kCscNames);
}

void validate_structure(const COO &g, const std::string &what) {
    check_count(g.num_rows, what, "num_rows");
    check_count(g.num_cols, what, "num_cols");
    if (g.col.size() != g.row.size())
        fail<GraphError>(what, " col has ", g.col.size(), " entries but row has ", g.row.size(),
                         " (one of each per edge)");
    check_nnz(g.row.size(), what, "row");
    check_edge_ids_size(g.edge_ids, g.row.size(), what);
    const int64_t nnz = static_cast<int64_t>(g.row.size());
    for (int64_t i = 0; i < nnz; i++) {
        const index_t r = g.row[i];
        if (r < 0 || r >= g.num_rows)
            fail<GraphError>(what, " row[", i, "] = ", r, " is out of range [0, num_rows = ", g.num_rows, ")");
    }
    for (int64_t i = 0; i < nnz; i++) {
        const index_t c = g.col[i];
        if (c < 0 || c >= g.num_cols)
            fail<GraphError>(what, " col[", i, "] = ", c, " is out of range [0, num_cols = ", g.num_cols, ")");
    }
}

void validate(const CSR &g, const std::string &what) {
    validate_structure(g, what);
    check_edge_id_permutation(g.edge_ids, what);
}

void validate(const CSC &g, const std::string &what) {
    validate_structure(g, what);
    check_edge_id_permutation(g.edge_ids, what);
}

void validate(const COO &g, const std::string &what) {
    validate_structure(g, what);
    check_edge_id_permutation(g.edge_ids, what);
}

void validate_permutation(const std::vector<index_t> &perm, int64_t n, const std::string &what) {
    if (n < 0) fail<GraphError>(what, ": n = ", n, " is negative");
    if (n > kIndexMax) fail<GraphError>(what, ": n = ", n, " exceeds INT32_MAX (", kIndexMax, ")");
    if (static_cast<int64_t>(perm.size()) != n)
        fail<GraphError>(what, " has ", perm.size(), " entries, expected n = ", n);
    check_permutation(perm.data(), n, "", what.c_str(), "must be a permutation of [0, n)");
}

void validate_sorted_rows(const CSR &g, const std::string &what) {
    validate_structure(g, what);
    for (int64_t r = 0; r < g.num_rows; r++) {
        for (index_t p = g.row_ptr[r] + 1; p < g.row_ptr[r + 1]; p++) {
            if (g.col_idx[p] < g.col_idx[p - 1])
                fail<GraphError>(what, " col_idx[", p, "] = ", g.col_idx[p], " is less than col_idx[", p - 1,
                                 "] = ", g.col_idx[p - 1], " in row ", r, " (rows must be sorted by column)");
        }
    }
}

}  // namespace gsparse
