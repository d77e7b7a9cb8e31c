// Binary CSR (.gcsr): a 40-byte little-endian header followed by the raw arrays (see
// docs/graph-formats.md). Loading is a few bulk reads after checking the file size against the
// header, then validation.
#include <cstdio>
#include <cstring>
#include <limits>
#include <utility>

#include "core/error.h"
#include "graph/io.h"
#include "graph/io_util.h"
#include "graph/validate.h"

namespace gsparse {
namespace {

using namespace io_detail;

constexpr char kMagic[8] = {'G', 'S', 'P', 'C', 'S', 'R', '\0', '\1'};
constexpr uint32_t kVersion = 1;
constexpr uint32_t kFlagIdentityEdgeIds = 1u << 0;
constexpr uint32_t kFlagHasValues = 1u << 1;
constexpr uint32_t kKnownFlags = kFlagIdentityEdgeIds | kFlagHasValues;
constexpr size_t kHeaderBytes = 40;
constexpr int64_t kIndexMax = std::numeric_limits<index_t>::max();

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
constexpr bool kBigEndian = true;
#else
constexpr bool kBigEndian = false;
#endif

template <typename T>
T byteswap(T v) {
    unsigned char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    for (size_t i = 0; i < sizeof(T) / 2; i++) std::swap(b[i], b[sizeof(T) - 1 - i]);
    std::memcpy(&v, b, sizeof(T));
    return v;
}

/// Little-endian (file order) <-> host order, in place.
template <typename T>
void to_from_le(T *data, size_t n) {
    if constexpr (kBigEndian)
        for (size_t i = 0; i < n; i++) data[i] = byteswap(data[i]);
}

template <typename T>
T load_le(const unsigned char *p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    to_from_le(&v, 1);
    return v;
}

template <typename T>
void store_le(unsigned char *p, T v) {
    to_from_le(&v, 1);
    std::memcpy(p, &v, sizeof(T));
}

template <typename T>
void read_array(InFile &in, std::vector<T> &v, uint64_t count, uint64_t &offset, const char *what) {
    v.resize(static_cast<size_t>(count));
    in.read_exact(v.data(), static_cast<size_t>(count) * sizeof(T), offset, what);
    to_from_le(v.data(), v.size());
    offset += count * sizeof(T);
}

template <typename T>
void write_array(OutFile &out, const T *data, size_t n) {
    if constexpr (kBigEndian) {
        std::vector<T> tmp(data, data + n);
        to_from_le(tmp.data(), n);
        out.write_bytes(tmp.data(), n * sizeof(T));
    } else {
        out.write_bytes(data, n * sizeof(T));
    }
}

}  // namespace

LoadedGraph load_binary_csr(const std::string &path) {
    InFile in(path);
    if (in.regular_size() < 0)
        fail<FormatError>(path, ": not a regular file (a .gcsr file is checked against its size before reading)");
    const uint64_t file_size = static_cast<uint64_t>(in.regular_size());
    if (file_size < kHeaderBytes)
        fail<FormatError>(path, ": the file has ", file_size, " bytes, fewer than the ", kHeaderBytes,
                          "-byte .gcsr header (truncated or not a .gcsr file)");
    unsigned char h[kHeaderBytes];
    in.read_exact(h, kHeaderBytes, 0, "the header");
    if (std::memcmp(h, kMagic, sizeof(kMagic)) != 0)
        fail<FormatError>(path, ": bad magic at byte offset 0 (expected \"GSPCSR\\0\\1\"; not a .gcsr file)");
    const uint32_t version = load_le<uint32_t>(h + 8);
    const uint32_t flags = load_le<uint32_t>(h + 12);
    const int64_t num_rows = load_le<int64_t>(h + 16);
    const int64_t num_cols = load_le<int64_t>(h + 24);
    const int64_t nnz = load_le<int64_t>(h + 32);
    if (version != kVersion)
        fail<FormatError>(path, ": unsupported .gcsr version ", version, " at byte offset 8 (supported: ", kVersion,
                          ")");
    if (flags & ~kKnownFlags)
        fail<FormatError>(path, ": flags = ", flags, " at byte offset 12 has unknown bits (known bits: ",
                          kKnownFlags, ")");
    if (num_rows < 0 || num_rows > kIndexMax)
        fail<FormatError>(path, ": header num_rows = ", num_rows, " at byte offset 16 is out of range [0, INT32_MAX]");
    if (num_cols < 0 || num_cols > kIndexMax)
        fail<FormatError>(path, ": header num_cols = ", num_cols, " at byte offset 24 is out of range [0, INT32_MAX]");
    if (nnz < 0 || nnz > kIndexMax)
        fail<FormatError>(path, ": header nnz = ", nnz, " at byte offset 32 is out of range [0, INT32_MAX]");
    const bool identity = flags & kFlagIdentityEdgeIds;
    const bool has_values = flags & kFlagHasValues;
    // Counts are at most 2^31, so the size fits easily in 64 bits.
    const uint64_t expected = kHeaderBytes + 4 * (static_cast<uint64_t>(num_rows) + 1) +
                              4 * static_cast<uint64_t>(nnz) * (1 + (identity ? 0 : 1) + (has_values ? 1 : 0));
    if (file_size != expected)
        fail<FormatError>(path, ": the header (num_rows = ", num_rows, ", nnz = ", nnz, ", flags = ", flags,
                          ") implies ", expected, " bytes but the file has ", file_size, " bytes (",
                          file_size < expected ? "truncated file" : "trailing data", ")");

    LoadedGraph out;
    CSR &csr = out.csr;
    csr.num_rows = num_rows;
    csr.num_cols = num_cols;
    uint64_t offset = kHeaderBytes;
    read_array(in, csr.row_ptr, static_cast<uint64_t>(num_rows) + 1, offset, "row_ptr");
    read_array(in, csr.col_idx, static_cast<uint64_t>(nnz), offset, "col_idx");
    if (!identity) read_array(in, csr.edge_ids, static_cast<uint64_t>(nnz), offset, "edge_ids");
    if (has_values) read_array(in, out.values, static_cast<uint64_t>(nnz), offset, "values");
    validate(csr, path);
    return out;
}

void save_binary_csr(const std::string &path, const CSR &csr, const std::vector<float> &values) {
    validate(csr, "save_binary_csr: CSR");
    check_values_size(csr, values, "save_binary_csr");
    const bool identity = csr.identity_edge_ids();
    const bool has_values = !values.empty();
    unsigned char h[kHeaderBytes];
    std::memcpy(h, kMagic, sizeof(kMagic));
    store_le<uint32_t>(h + 8, kVersion);
    store_le<uint32_t>(h + 12, (identity ? kFlagIdentityEdgeIds : 0u) | (has_values ? kFlagHasValues : 0u));
    store_le<int64_t>(h + 16, csr.num_rows);
    store_le<int64_t>(h + 24, csr.num_cols);
    store_le<int64_t>(h + 32, csr.nnz());
    OutFile out(path);
    out.write_bytes(h, kHeaderBytes);
    write_array(out, csr.row_ptr.data(), csr.row_ptr.size());
    write_array(out, csr.col_idx.data(), csr.col_idx.size());
    if (!identity) write_array(out, csr.edge_ids.data(), csr.edge_ids.size());
    if (has_values) write_array(out, values.data(), values.size());
    out.close();
}

}  // namespace gsparse
