// Validation of graph arrays at the boundary. Each check throws GraphError with a message that names
// the offending position and value, e.g. "CSR row_ptr[17] = 40 is less than row_ptr[16] = 52
// (row_ptr must be non-decreasing)". Validation is O(nnz) and runs wherever arrays enter gsparse
// (loaders, Graph constructors, the C++ API); kernels rely on it for in-range gathers.
#pragma once

#include <string>
#include <vector>

#include "graph/formats.h"

namespace gsparse {

/// num_rows/num_cols in [0, INT32_MAX]; row_ptr of size num_rows+1, starting at 0, non-decreasing,
/// ending at nnz; nnz <= INT32_MAX; col_idx in [0, num_cols); edge_ids empty or a permutation of
/// [0, nnz). `what` prefixes messages (e.g. the file name).
void validate(const CSR &g, const std::string &what = "CSR");
void validate(const CSC &g, const std::string &what = "CSC");
/// Sizes agree; row in [0, num_rows), col in [0, num_cols); edge_ids empty or a permutation.
void validate(const COO &g, const std::string &what = "COO");

/// The structural part of validate(): sizes, row_ptr / col_ptr and index ranges, and edge_ids of the
/// right length, but not the permutation property of edge_ids (which needs O(nnz) extra memory).
/// Conversions run it on their input so that they never index out of bounds.
void validate_structure(const CSR &g, const std::string &what = "CSR");
void validate_structure(const CSC &g, const std::string &what = "CSC");
void validate_structure(const COO &g, const std::string &what = "COO");

/// perm has exactly n entries and is a permutation of [0, n).
void validate_permutation(const std::vector<index_t> &perm, int64_t n, const std::string &what);

/// Throws unless every row's column indices are non-decreasing.
void validate_sorted_rows(const CSR &g, const std::string &what = "CSR");

}  // namespace gsparse
