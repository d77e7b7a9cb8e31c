#include "halide_ext/sparse_metadata.h"

#include <sstream>
#include <stdexcept>

namespace gsparse::ext {

namespace {

void require(bool ok, const std::string &what) {
    if (!ok) throw std::invalid_argument("SparseLayout: " + what);
}

std::string text(const Halide::Expr &e) {
    if (!e.defined()) return "?";
    std::ostringstream s;
    s << e;
    return s.str();
}

}  // namespace

SparseLayout &SparseLayout::csr(const Halide::ImageParam &row_ptr, const Halide::Expr &nnz) {
    return csr(row_ptr.name(), nnz);
}

SparseLayout &SparseLayout::csr(const std::string &row_ptr_name, const Halide::Expr &nnz) {
    require(!row_ptr_name.empty(), "row_ptr needs a name");
    require(nnz.defined(), "nnz of '" + row_ptr_name + "' is undefined");
    require(nnz.type().is_int() || nnz.type().is_uint(), "nnz must be an integer expression");
    require(!has_csr() || row_ptr_ == row_ptr_name, "a second row pointer '" + row_ptr_name + "' (have '" +
                                                         row_ptr_ + "')");
    require(!find(row_ptr_name), "'" + row_ptr_name + "' is already declared as an array");
    row_ptr_ = row_ptr_name;
    nnz_ = nnz;
    return *this;
}

SparseLayout &SparseLayout::nnz_index_array(const Halide::ImageParam &array, const Halide::Expr &value_count) {
    return nnz_index_array(array.name(), value_count);
}

SparseLayout &SparseLayout::nnz_index_array(const std::string &name, const Halide::Expr &value_count) {
    require(has_csr(), "declare csr() before the nnz-indexed array '" + name + "'");
    require(value_count.defined(), "value count of '" + name + "' is undefined");
    return add({name, nnz_, value_count, false});
}

SparseLayout &SparseLayout::nnz_data_array(const Halide::ImageParam &array) { return nnz_data_array(array.name()); }

SparseLayout &SparseLayout::nnz_data_array(const std::string &name) {
    require(has_csr(), "declare csr() before the nnz-indexed array '" + name + "'");
    return add({name, nnz_, Halide::Expr(), false});
}

SparseLayout &SparseLayout::coo_index_array(const Halide::ImageParam &array, const Halide::Expr &num_edges,
                                            const Halide::Expr &value_count) {
    return coo_index_array(array.name(), num_edges, value_count);
}

SparseLayout &SparseLayout::coo_index_array(const std::string &name, const Halide::Expr &num_edges,
                                            const Halide::Expr &value_count) {
    require(num_edges.defined(), "edge count of '" + name + "' is undefined");
    require(value_count.defined(), "value count of '" + name + "' is undefined");
    return add({name, num_edges, value_count, true});
}

SparseLayout &SparseLayout::add(SparseArray a) {
    require(!a.name.empty(), "an array needs a name");
    require(!is_row_ptr(a.name), "'" + a.name + "' is the row pointer");
    require(!find(a.name), "'" + a.name + "' is declared twice");
    if (a.value_count.defined())
        require(a.value_count.type().is_int() || a.value_count.type().is_uint(),
                "value count of '" + a.name + "' must be an integer expression");
    arrays_.push_back(std::move(a));
    return *this;
}

std::optional<SparseArray> SparseLayout::find(const std::string &name) const {
    for (const SparseArray &a : arrays_)
        if (a.name == name) return a;
    return std::nullopt;
}

std::string SparseLayout::str() const {
    std::ostringstream s;
    if (has_csr()) s << "row_ptr " << row_ptr_ << ": monotone, values in [0, " << text(nnz_) << "]\n";
    for (const SparseArray &a : arrays_) {
        s << (a.coo ? "coo " : "nnz ") << a.name << ": indexed by [0, " << text(a.index_count) << ")";
        if (a.is_index_array()) s << ", values in [0, " << text(a.value_count) << ")";
        s << "\n";
    }
    return s.str();
}

}  // namespace gsparse::ext
