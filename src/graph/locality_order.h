// Locality order of a CSR's rows: rows whose columns overlap are grouped (clustered by label
// propagation), and each group's rows run longest first. A g-SpMM whose blocks take rows in this
// order (bind_buffer, rowBalance = 2) has its concurrently running rows gather from a small set of
// source rows, which then stay in the L1 and L2 caches instead of being fetched again from DRAM;
// within a group the order is that of balancedIdx, so the rows of one block still end together.
//
// Clustering (deterministic for any thread count):
//  1. Every row's label starts as its hub: the column it reads that the most rows read (ties: the
//     smaller column id). Rows of one community share their community's hubs.
//  2. Square graphs (rows and columns are the same nodes): synchronous label propagation that
//     maximizes modularity (LPAm, Barber and Clark 2009). Each round, row v takes, among the labels
//     its columns hold (as rows), the label l with the largest count(l) - len(v) * vol(l) / nnz
//     (vol(l): the total length of the other rows labelled l), keeping its own label on a tie, else
//     taking the smallest. Rounds stop when fewer than 1 / 1000 of the rows change, after at most
//     kMaxRounds rounds.
//  3. The order: non-empty rows by (label, length descending, row id), then the empty rows.
// Non-square graphs keep the hub labels (step 1).
//
// This header depends only on the standard library: emitted CUDA kernels (gsparse_cuda.h) use it
// without the gsparse library.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <numeric>
#include <thread>
#include <vector>

namespace gsparse_locality {

constexpr int kMaxRounds = 8;

namespace detail {

/// Runs body(begin, end) over [0, n) in chunks of `chunk` taken by `threads` workers.
template <class Body>
void parallel_chunks(int64_t n, int threads, int64_t chunk, const Body &body) {
    if (threads <= 1 || n <= chunk) {
        for (int64_t b = 0; b < n; b += chunk) body(b, std::min(n, b + chunk));
        return;
    }
    std::atomic<int64_t> next{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++)
        pool.emplace_back([&] {
            for (int64_t b; (b = next.fetch_add(chunk)) < n;) body(b, std::min(n, b + chunk));
        });
    for (auto &th : pool) th.join();
}

/// Counts of labels in one row: an open-addressing table reused across rows.
template <class Index>
class LabelCounter {
public:
    void reset(int64_t expected) {
        size_t cap = 16;
        while (cap < static_cast<size_t>(2 * expected)) cap <<= 1;
        if (cap > keys_.size()) {
            keys_.assign(cap, -1);
            counts_.assign(cap, 0);
        }
        mask_ = keys_.size() - 1;
        for (size_t s : used_) keys_[s] = -1, counts_[s] = 0;
        used_.clear();
    }
    void add(Index label) {
        size_t s = (static_cast<uint64_t>(label) * 0x9E3779B97F4A7C15ull >> 17) & mask_;
        while (keys_[s] != -1 && keys_[s] != label) s = (s + 1) & mask_;
        if (keys_[s] == -1) keys_[s] = label, used_.push_back(s);
        counts_[s]++;
    }
    /// The label of the largest score(label, count), where count is how many times the label was
    /// added; `own` when it has the largest score, else the smallest label with it.
    template <class Score>
    Index best(Index own, const Score &score) const {
        Index best = -1;
        double best_score = 0, own_score = 0;
        bool has_own = false;
        for (size_t s : used_) {
            const double x = score(keys_[s], counts_[s]);
            if (keys_[s] == own) has_own = true, own_score = x;
            if (best < 0 || x > best_score || (x == best_score && keys_[s] < best)) best = keys_[s], best_score = x;
        }
        return has_own && own_score == best_score ? own : best;
    }

private:
    std::vector<Index> keys_;
    std::vector<int64_t> counts_;
    std::vector<size_t> used_;
    size_t mask_ = 0;
};

}  // namespace detail

/// The cluster label of every row (-1 for empty rows); see the header comment. row_ptr has rows + 1
/// entries, col_idx row_ptr[rows] entries in [0, cols). threads <= 0: hardware concurrency.
template <class Index>
std::vector<Index> cluster_rows(int64_t rows, int64_t cols, const Index *row_ptr, const Index *col_idx, int threads = 0) {
    if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int64_t nnz = rows > 0 ? static_cast<int64_t>(row_ptr[rows]) : 0;
    std::vector<std::atomic<int64_t>> uses(static_cast<size_t>(cols));
    for (auto &u : uses) u.store(0, std::memory_order_relaxed);
    detail::parallel_chunks(nnz, threads, int64_t(1) << 16, [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; p++) uses[static_cast<size_t>(col_idx[p])].fetch_add(1, std::memory_order_relaxed);
    });
    std::vector<Index> label(static_cast<size_t>(rows), -1);
    const int64_t chunk = 1024;
    detail::parallel_chunks(rows, threads, chunk, [&](int64_t b, int64_t e) {
        for (int64_t v = b; v < e; v++) {
            Index hub = -1;
            int64_t hub_uses = -1;
            for (int64_t p = row_ptr[v]; p < row_ptr[v + 1]; p++) {
                const Index u = col_idx[p];
                const int64_t n = uses[static_cast<size_t>(u)].load(std::memory_order_relaxed);
                if (n > hub_uses || (n == hub_uses && u < hub)) hub = u, hub_uses = n;
            }
            label[static_cast<size_t>(v)] = hub;
        }
    });
    if (rows != cols) return label;
    // Label propagation that maximizes modularity (LPAm): row v moves to the label l of its columns
    // with the largest count(l) - len(v) * vol(l) / nnz, where vol(l) is the total length of the
    // other rows labelled l. Without the volume term, labels of hubs that many communities read
    // would absorb whole groups of communities.
    std::vector<Index> next(label.size());
    std::vector<int64_t> vol(static_cast<size_t>(cols));
    for (int round = 0; round < kMaxRounds; round++) {
        std::fill(vol.begin(), vol.end(), 0);
        for (int64_t v = 0; v < rows; v++)
            if (label[static_cast<size_t>(v)] >= 0) vol[static_cast<size_t>(label[static_cast<size_t>(v)])] += row_ptr[v + 1] - row_ptr[v];
        std::atomic<int64_t> changed{0};
        detail::parallel_chunks(rows, threads, chunk, [&](int64_t b, int64_t e) {
            detail::LabelCounter<Index> counter;
            int64_t local = 0;
            for (int64_t v = b; v < e; v++) {
                const Index own = label[static_cast<size_t>(v)];
                const int64_t len = row_ptr[v + 1] - row_ptr[v];
                Index out = own;
                if (len > 0) {
                    counter.reset(len);
                    for (int64_t p = row_ptr[v]; p < row_ptr[v + 1]; p++) {
                        const Index l = label[static_cast<size_t>(col_idx[p])];
                        if (l >= 0) counter.add(l);
                    }
                    out = counter.best(own, [&](Index l, int64_t count) {
                        const int64_t other = vol[static_cast<size_t>(l)] - (l == own ? len : 0);
                        return static_cast<double>(count) - static_cast<double>(len) * static_cast<double>(other) / static_cast<double>(nnz);
                    });
                    if (out < 0) out = own;
                }
                next[static_cast<size_t>(v)] = out;
                local += out != own;
            }
            changed += local;
        });
        label.swap(next);
        if (changed.load() * 1000 < rows) break;
    }
    return label;
}

/// The locality order of the rows (a permutation of [0, rows)); see the header comment.
template <class Index>
std::vector<Index> locality_order(int64_t rows, int64_t cols, const Index *row_ptr, const Index *col_idx, int threads = 0) {
    const std::vector<Index> label = cluster_rows(rows, cols, row_ptr, col_idx, threads);
    std::vector<Index> order(static_cast<size_t>(rows));
    std::iota(order.begin(), order.end(), Index(0));
    std::sort(order.begin(), order.end(), [&](Index a, Index b) {
        const Index la = label[static_cast<size_t>(a)], lb = label[static_cast<size_t>(b)];
        if ((la < 0) != (lb < 0)) return lb < 0;  // empty rows last
        if (la != lb) return la < lb;
        const auto len_a = row_ptr[a + 1] - row_ptr[a], len_b = row_ptr[b + 1] - row_ptr[b];
        if (len_a != len_b) return len_a > len_b;
        return a < b;
    });
    return order;
}

}  // namespace gsparse_locality
