// Conversions between CSR, CSC and COO by counting sort: O(nnz + n), stable, edge ids kept.
#include "graph/convert.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "core/error.h"
#include "core/parallel.h"
#include "graph/validate.h"

namespace gsparse {
namespace {

/// Re-compresses a compressed layout along its other dimension: the entries of outer slice o
/// (ptr[o]..ptr[o+1]) holding inner index i become entries of slice i of the output, visited in
/// increasing o, so the output's slices list their indices in increasing order of o (stable).
void recompress(int64_t n_outer, int64_t n_inner, const std::vector<index_t> &ptr, const std::vector<index_t> &idx,
                const std::vector<index_t> &edge_ids, std::vector<index_t> &out_ptr, std::vector<index_t> &out_idx,
                std::vector<index_t> &out_edge_ids) {
    const size_t nnz = idx.size();
    out_ptr.assign(static_cast<size_t>(n_inner) + 1, 0);
    for (size_t p = 0; p < nnz; p++) out_ptr[static_cast<size_t>(idx[p]) + 1]++;
    for (int64_t i = 0; i < n_inner; i++) out_ptr[i + 1] += out_ptr[i];
    std::vector<index_t> next(out_ptr.begin(), out_ptr.end() - 1);
    out_idx.resize(nnz);
    out_edge_ids.resize(nnz);
    const bool identity = edge_ids.empty();
    for (int64_t o = 0; o < n_outer; o++) {
        for (index_t p = ptr[o]; p < ptr[o + 1]; p++) {
            const index_t q = next[idx[p]]++;
            out_idx[q] = static_cast<index_t>(o);
            out_edge_ids[q] = identity ? p : edge_ids[p];
        }
    }
}

constexpr int64_t kInsertionSortMax = 32;

/// Stable sort of cols[0..n) with ids following, by column.
void sort_row(index_t *cols, index_t *ids, int64_t n, std::vector<std::pair<index_t, index_t>> &buf) {
    if (n <= kInsertionSortMax) {
        for (int64_t i = 1; i < n; i++) {
            const index_t c = cols[i], e = ids[i];
            int64_t j = i;
            while (j > 0 && cols[j - 1] > c) {
                cols[j] = cols[j - 1];
                ids[j] = ids[j - 1];
                j--;
            }
            cols[j] = c;
            ids[j] = e;
        }
        return;
    }
    buf.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; i++) buf[i] = {cols[i], ids[i]};
    std::stable_sort(buf.begin(), buf.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    for (int64_t i = 0; i < n; i++) {
        cols[i] = buf[i].first;
        ids[i] = buf[i].second;
    }
}

void check_row_ptr_size(const CSR &csr, const char *fn) {
    if (csr.num_rows < 0 || static_cast<int64_t>(csr.row_ptr.size()) != csr.num_rows + 1)
        fail<GraphError>(fn, ": CSR row_ptr has ", csr.row_ptr.size(), " entries, expected num_rows + 1 = ",
                         csr.num_rows + 1);
}

}  // namespace

CSR coo_to_csr(const COO &coo) {
    validate_structure(coo, "COO");
    CSR out;
    out.num_rows = coo.num_rows;
    out.num_cols = coo.num_cols;
    const size_t nnz = coo.row.size();
    out.row_ptr.assign(static_cast<size_t>(coo.num_rows) + 1, 0);
    for (size_t i = 0; i < nnz; i++) out.row_ptr[static_cast<size_t>(coo.row[i]) + 1]++;
    for (int64_t r = 0; r < coo.num_rows; r++) out.row_ptr[r + 1] += out.row_ptr[r];
    if (std::is_sorted(coo.row.begin(), coo.row.end())) {
        // Already grouped by row: positions do not move.
        out.col_idx = coo.col;
        out.edge_ids = coo.edge_ids;
        return out;
    }
    std::vector<index_t> next(out.row_ptr.begin(), out.row_ptr.end() - 1);
    out.col_idx.resize(nnz);
    out.edge_ids.resize(nnz);
    const bool identity = coo.edge_ids.empty();
    for (size_t i = 0; i < nnz; i++) {
        const index_t q = next[coo.row[i]]++;
        out.col_idx[q] = coo.col[i];
        out.edge_ids[q] = identity ? static_cast<index_t>(i) : coo.edge_ids[i];
    }
    return out;
}

COO csr_to_coo(const CSR &csr) {
    validate_structure(csr, "CSR");
    COO out;
    out.num_rows = csr.num_rows;
    out.num_cols = csr.num_cols;
    const size_t nnz = csr.col_idx.size();
    out.row.resize(nnz);
    out.col.resize(nnz);
    out.edge_ids.resize(csr.edge_ids.size());
    // Chunks of the nonzeros; each writes the rows of its range (found in row_ptr) and copies its
    // part of the columns and edge ids.
    parallel_chunks(nnz, host_threads(nnz), [&](size_t, size_t begin, size_t end) {
        if (begin == end) return;
        auto r = static_cast<int64_t>(std::upper_bound(csr.row_ptr.begin(), csr.row_ptr.end(), int64_t(begin)) -
                                      csr.row_ptr.begin()) - 1;
        for (size_t i = begin; i < end; r++) {
            const size_t stop = std::min<size_t>(end, static_cast<size_t>(csr.row_ptr[r + 1]));
            std::fill(out.row.begin() + std::ptrdiff_t(i), out.row.begin() + std::ptrdiff_t(stop), static_cast<index_t>(r));
            i = stop;
        }
        std::copy(csr.col_idx.begin() + std::ptrdiff_t(begin), csr.col_idx.begin() + std::ptrdiff_t(end),
                  out.col.begin() + std::ptrdiff_t(begin));
        if (!csr.edge_ids.empty())
            std::copy(csr.edge_ids.begin() + std::ptrdiff_t(begin), csr.edge_ids.begin() + std::ptrdiff_t(end),
                      out.edge_ids.begin() + std::ptrdiff_t(begin));
    });
    return out;
}

COO group_by_source_tiles(const COO &by_dst, int64_t tile) {
    if (tile < 1) fail<GraphError>("source tile ", tile, " must be >= 1");
    if (by_dst.edge_ids.size() != by_dst.col.size())
        fail<GraphError>("group_by_source_tiles needs the edge id of every position");
    // A counting sort over the tiles, stable (each tile keeps the destination order), in parallel:
    // every chunk of the input counts its tiles, a chunk's slots in a tile follow those of the
    // chunks before it, and each chunk scatters its edges into its own slots. Power-of-two tiles
    // shift instead of dividing.
    const size_t n = by_dst.col.size();
    const auto tiles = static_cast<size_t>(by_dst.num_cols / tile + 1);
    int shift = -1;
    if ((tile & (tile - 1)) == 0) shift = static_cast<int>(std::log2(static_cast<double>(tile)) + 0.5);
    auto tile_of = [&](index_t c) {
        return shift >= 0 ? static_cast<size_t>(c) >> shift : static_cast<size_t>(c / tile);
    };
    // Per-chunk counters cost chunks x tiles: fewer chunks for many small tiles.
    const size_t chunks = std::max<size_t>(1, std::min(host_threads(n), n / std::max<size_t>(1, 4 * tiles)));
    std::vector<std::vector<int64_t>> slot(chunks, std::vector<int64_t>(tiles, 0));
    parallel_chunks(n, chunks, [&](size_t k, size_t begin, size_t end) {
        std::vector<int64_t> &count = slot[k];
        for (size_t i = begin; i < end; i++) count[tile_of(by_dst.col[i])]++;
    });
    int64_t at = 0;
    for (size_t t = 0; t < tiles; t++)
        for (size_t k = 0; k < chunks; k++) {
            const int64_t c = slot[k][t];
            slot[k][t] = at;
            at += c;
        }
    COO out;
    out.num_rows = by_dst.num_rows;
    out.num_cols = by_dst.num_cols;
    out.row.resize(n);
    out.col.resize(n);
    out.edge_ids.resize(n);
    parallel_chunks(n, chunks, [&](size_t k, size_t begin, size_t end) {
        std::vector<int64_t> &next = slot[k];
        for (size_t i = begin; i < end; i++) {
            const auto q = static_cast<size_t>(next[tile_of(by_dst.col[i])]++);
            out.row[q] = by_dst.row[i];
            out.col[q] = by_dst.col[i];
            out.edge_ids[q] = by_dst.edge_ids[i];
        }
    });
    return out;
}

CSC csr_to_csc(const CSR &csr) {
    validate_structure(csr, "CSR");
    CSC out;
    out.num_rows = csr.num_rows;
    out.num_cols = csr.num_cols;
    recompress(csr.num_rows, csr.num_cols, csr.row_ptr, csr.col_idx, csr.edge_ids, out.col_ptr, out.row_idx,
               out.edge_ids);
    return out;
}

CSR csc_to_csr(const CSC &csc) {
    validate_structure(csc, "CSC");
    CSR out;
    out.num_rows = csc.num_rows;
    out.num_cols = csc.num_cols;
    recompress(csc.num_cols, csc.num_rows, csc.col_ptr, csc.row_idx, csc.edge_ids, out.row_ptr, out.col_idx,
               out.edge_ids);
    return out;
}

CSR transpose(const CSR &csr) {
    CSC csc = csr_to_csc(csr);
    CSR out;
    out.num_rows = csc.num_cols;
    out.num_cols = csc.num_rows;
    out.row_ptr = std::move(csc.col_ptr);
    out.col_idx = std::move(csc.row_idx);
    out.edge_ids = std::move(csc.edge_ids);
    return out;
}

COO coo_in_edge_order(const CSR &csr) {
    validate_structure(csr, "CSR");
    if (csr.identity_edge_ids()) return csr_to_coo(csr);
    const int64_t nnz = csr.nnz();
    validate_permutation(csr.edge_ids, nnz, "CSR edge_ids");
    COO out;
    out.num_rows = csr.num_rows;
    out.num_cols = csr.num_cols;
    out.row.resize(static_cast<size_t>(nnz));
    out.col.resize(static_cast<size_t>(nnz));
    for (int64_t r = 0; r < csr.num_rows; r++) {
        for (index_t p = csr.row_ptr[r]; p < csr.row_ptr[r + 1]; p++) {
            const index_t e = csr.edge_ids[p];
            out.row[e] = static_cast<index_t>(r);
            out.col[e] = csr.col_idx[p];
        }
    }
    return out;
}

void sort_rows(CSR &csr) {
    validate_structure(csr, "CSR");
    std::vector<std::pair<index_t, index_t>> buf;
    for (int64_t r = 0; r < csr.num_rows; r++) {
        const index_t b = csr.row_ptr[r], e = csr.row_ptr[r + 1];
        if (std::is_sorted(csr.col_idx.begin() + b, csr.col_idx.begin() + e)) continue;
        if (csr.edge_ids.empty()) {
            csr.edge_ids.resize(csr.col_idx.size());
            std::iota(csr.edge_ids.begin(), csr.edge_ids.end(), 0);
        }
        sort_row(csr.col_idx.data() + b, csr.edge_ids.data() + b, e - b, buf);
    }
}

std::vector<index_t> balanced_index(const CSR &csr) {
    check_row_ptr_size(csr, "balanced_index");
    const int64_t n = csr.num_rows;
    // Stable LSD radix sort of the row ids on key = max_len - len (ascending key = longest first);
    // starting from ascending ids keeps ties in ascending id order.
    std::vector<uint32_t> key(static_cast<size_t>(n));
    int64_t max_len = 0;
    for (int64_t r = 0; r < n; r++) {
        const int64_t len = static_cast<int64_t>(csr.row_ptr[r + 1]) - csr.row_ptr[r];
        if (len < 0)
            fail<GraphError>("balanced_index: CSR row_ptr[", r + 1, "] = ", csr.row_ptr[r + 1], " is less than row_ptr[",
                             r, "] = ", csr.row_ptr[r], " (row_ptr must be non-decreasing)");
        max_len = std::max(max_len, len);
    }
    for (int64_t r = 0; r < n; r++)
        key[r] = static_cast<uint32_t>(max_len - (static_cast<int64_t>(csr.row_ptr[r + 1]) - csr.row_ptr[r]));
    std::vector<index_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::vector<index_t> tmp(static_cast<size_t>(n));
    const uint64_t max_key = static_cast<uint64_t>(max_len);
    for (int shift = 0; shift < 32 && (max_key >> shift) != 0; shift += 16) {
        const uint64_t buckets = std::min<uint64_t>((max_key >> shift) + 1, 1u << 16);
        std::vector<int64_t> count(buckets + 1, 0);
        for (int64_t i = 0; i < n; i++) count[((key[order[i]] >> shift) & 0xFFFF) + 1]++;
        for (uint64_t b = 0; b < buckets; b++) count[b + 1] += count[b];
        for (int64_t i = 0; i < n; i++) tmp[count[(key[order[i]] >> shift) & 0xFFFF]++] = order[i];
        order.swap(tmp);
    }
    return order;
}

GraphStats compute_stats(const CSR &csr) {
    check_row_ptr_size(csr, "compute_stats");
    GraphStats s;
    s.num_rows = csr.num_rows;
    s.num_cols = csr.num_cols;
    s.nnz = csr.row_ptr.back();
    if (s.num_rows > 0) {
        const double mean = static_cast<double>(s.nnz) / static_cast<double>(s.num_rows);
        s.avg_row_length = mean;
        double sq = 0;
        for (int64_t r = 0; r < s.num_rows; r++) {
            const int64_t len = static_cast<int64_t>(csr.row_ptr[r + 1]) - csr.row_ptr[r];
            s.max_row_length = std::max(s.max_row_length, len);
            if (len == 0) s.empty_rows++;
            const double d = static_cast<double>(len) - mean;
            sq += d * d;
        }
        s.row_length_cov = mean > 0 ? std::sqrt(sq / static_cast<double>(s.num_rows)) / mean : 0.0;
    }
    // Column lengths (out-degrees); out-of-range entries are left to validation.
    if (s.num_cols > 0) {
        std::vector<index_t> count(static_cast<size_t>(s.num_cols), 0);
        const int64_t nnz = std::min<int64_t>(s.nnz, static_cast<int64_t>(csr.col_idx.size()));
        for (int64_t p = 0; p < nnz; p++) {
            const index_t u = csr.col_idx[p];
            if (u >= 0 && u < s.num_cols) count[u]++;
        }
        const double col_mean = static_cast<double>(s.nnz) / static_cast<double>(s.num_cols);
        double col_sq = 0;
        for (index_t c : count) {
            s.max_col_length = std::max<int64_t>(s.max_col_length, c);
            if (c == 0) s.empty_cols++;
            const double d = static_cast<double>(c) - col_mean;
            col_sq += d * d;
        }
        s.col_length_cov = col_mean > 0 ? std::sqrt(col_sq / static_cast<double>(s.num_cols)) / col_mean : 0.0;
    }
    return s;
}

}  // namespace gsparse
