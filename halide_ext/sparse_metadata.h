// SparseLayout: what an algorithm author declares, once, about the sparse structure a Halide
// pipeline reads, so that the extension can bound the accesses stock bounds inference cannot.
//
//   CSR:  row_ptr  monotone (non-decreasing), values in [0, nnz]; row v owns the positions
//                  [row_ptr(v), row_ptr(v + 1)).
//         nnz-indexed arrays (col_idx, edge_ids, values) are indexed by positions in [0, nnz); an
//                  index array among them also declares the range of its values: col_idx in
//                  [0, num_src), edge_ids in [0, num_edges); a data array (values) declares none.
//   COO:  edge-indexed arrays (src_idx, dst_idx) indexed by edge ids in [0, num_edges) with values in
//                  [0, num_src) / [0, num_dst).
//
// These facts are guaranteed by gsparse's graph validation; the extension trusts them
// (ragged_bounds.h turns them into promises that Halide's bounds inference uses).
#pragma once

#include <Halide.h>

#include <optional>
#include <string>
#include <vector>

namespace gsparse::ext {

/// An input array indexed by sparse positions (CSR nnz positions or COO edge ids).
struct SparseArray {
    std::string name;          ///< the buffer's name as it appears in loads (ImageParam / Buffer name)
    Halide::Expr index_count;  ///< positions lie in [0, index_count)
    Halide::Expr value_count;  ///< values lie in [0, value_count); undefined for data arrays
    bool coo = false;          ///< edge-indexed COO array (else nnz-indexed CSR array)

    bool is_index_array() const { return value_count.defined(); }
};

class SparseLayout {
public:
    /// Declares the CSR row pointer (monotone, values in [0, nnz]) and the number of nonzeros.
    SparseLayout &csr(const Halide::ImageParam &row_ptr, const Halide::Expr &nnz);
    SparseLayout &csr(const std::string &row_ptr_name, const Halide::Expr &nnz);

    /// Declares an nnz-indexed index array whose values lie in [0, value_count) (col_idx, edge_ids).
    /// Requires csr() first.
    SparseLayout &nnz_index_array(const Halide::ImageParam &array, const Halide::Expr &value_count);
    SparseLayout &nnz_index_array(const std::string &name, const Halide::Expr &value_count);

    /// Declares an nnz-indexed data array (edge values in CSR order): positions only, no value range.
    SparseLayout &nnz_data_array(const Halide::ImageParam &array);
    SparseLayout &nnz_data_array(const std::string &name);

    /// Declares an edge-indexed COO array (src_idx, dst_idx) with edge ids in [0, num_edges) and
    /// values in [0, value_count).
    SparseLayout &coo_index_array(const Halide::ImageParam &array, const Halide::Expr &num_edges,
                                  const Halide::Expr &value_count);
    SparseLayout &coo_index_array(const std::string &name, const Halide::Expr &num_edges,
                                  const Halide::Expr &value_count);

    bool has_csr() const { return !row_ptr_.empty(); }
    const std::string &row_ptr() const { return row_ptr_; }
    const Halide::Expr &nnz() const { return nnz_; }
    const std::vector<SparseArray> &arrays() const { return arrays_; }

    /// The declared array of that buffer name, if any.
    std::optional<SparseArray> find(const std::string &name) const;
    bool is_row_ptr(const std::string &name) const { return has_csr() && name == row_ptr_; }

    /// A one-line-per-entry description, for messages and logs.
    std::string str() const;

private:
    SparseLayout &add(SparseArray a);

    std::string row_ptr_;
    Halide::Expr nnz_;
    std::vector<SparseArray> arrays_;
};

}  // namespace gsparse::ext
