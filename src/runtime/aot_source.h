// Small pieces shared by the writers of emitted wrapper headers (aot.cpp, aot_cuda.cpp,
// aot_sddmm.cpp): element counts of feature extents and the C++ spelling of a buffer's sizes.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace gsparse::aot_source {

/// Elements per row of a tensor with these feature extents.
inline int64_t product(const std::vector<int64_t> &extents) {
    int64_t p = 1;
    for (int64_t x : extents) p *= x;
    return p;
}

/// "std::vector<int>{e0, e1, ..., rows}": the sizes of a buffer whose feature extents are given,
/// innermost first, and whose row count is the C++ expression rows.
inline std::string sizes(const std::vector<int64_t> &extents, const std::string &rows) {
    std::ostringstream os;
    os << "std::vector<int>{";
    for (int64_t e : extents) os << e << ", ";
    os << rows << "}";
    return os.str();
}

}  // namespace gsparse::aot_source
