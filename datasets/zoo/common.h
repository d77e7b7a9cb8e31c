// Shared machinery of the zoo generators: keyed random streams, the set of columns already in a
// row, row-parallel CSR construction, rows of distinct sources, multinomial row lengths and
// power-law expected degrees.
//
// Every generator builds its CSR row by row: it first fixes the length of every row, then fills
// each row from a random stream keyed by (seed, family, purpose, row), so the graph depends on
// the seed and the parameters only, never on the thread count. Memory is O(nodes + edges) with
// int32 indices: the CSR itself, a few arrays per node and one bitset of columns per thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "core/error.h"
#include "graph/formats.h"
#include "twin/id_marks.h"
#include "twin/rng.h"

namespace gsparse::datasets::zoo {

using detail::Rng;
/// One per worker; rows leave it empty.
using ColumnMarks = detail::IdMarks;

/// Family tags: equal seeds give unrelated graphs in different families.
enum class Family : uint64_t { chung_lu = 1, rmat = 2, lattice = 3, knn = 4, erdos_renyi = 5, bipartite = 6, batch = 7 };

/// The random stream of (seed, family, purpose, index). `purpose` numbers the steps of a generator.
inline Rng stream(uint64_t seed, Family family, uint64_t purpose, uint64_t index) {
    return Rng(detail::mix64(seed) ^ (static_cast<uint64_t>(family) << 40),
               static_cast<detail::Stream>(16 + purpose), index);
}

constexpr int64_t kIndexMax = std::numeric_limits<index_t>::max();

/// Worker threads for `chunks` chunks of work: `threads` (0: all cores), at most one per chunk.
inline int worker_count(int threads, int64_t chunks) {
    const int hw = std::max(1u, std::thread::hardware_concurrency());
    return static_cast<int>(std::clamp<int64_t>(threads > 0 ? threads : hw, 1, std::max<int64_t>(1, chunks)));
}

/// Calls fn(states[w], i) for every i in [0, n), chunks of `chunk` items taken from a shared counter
/// by states.size() workers (worker w uses states[w]). The first exception is rethrown after every
/// worker has stopped.
template <typename State, typename Fn>
void parallel_for(int64_t n, int64_t chunk, std::vector<State> &states, Fn fn) {
    const int64_t chunks = (n + chunk - 1) / chunk;
    std::atomic<int64_t> next{0};
    std::exception_ptr error;
    std::mutex error_mutex;
    auto work = [&](State &state) {
        try {
            for (int64_t c; (c = next.fetch_add(1)) < chunks;)
                for (int64_t i = c * chunk, end = std::min(n, i + chunk); i < end; i++) fn(state, i);
        } catch (...) {
            std::lock_guard<std::mutex> lock(error_mutex);
            if (!error) error = std::current_exception();
            next.store(chunks);
        }
    };
    std::vector<std::thread> pool;
    for (size_t w = 1; w < states.size(); w++) pool.emplace_back(work, std::ref(states[w]));
    if (!states.empty()) work(states[0]);
    for (auto &t : pool) t.join();
    if (error) std::rethrow_exception(error);
}

/// Draws per entry before a row of distinct sources falls back to the next unused id.
constexpr int kMaxAttempts = 32;

/// Fills out[0, len) with distinct column ids in [0, cols), never `self` (-1: no exclusion), from
/// draw(rng), which returns a column id or -1 (a rejected draw). An entry that gets no new id in
/// kMaxAttempts draws takes the next unused id after a random start. Requires len <= the number of
/// allowed ids; marks is empty before and after.
template <typename Draw>
void fill_distinct(index_t *out, int64_t len, int64_t cols, int64_t self, ColumnMarks &marks, Rng &rng, Draw draw) {
    const int64_t allowed = cols - (self >= 0 ? 1 : 0);
    if (len >= allowed) {  // every allowed id
        int64_t k = 0;
        for (int64_t u = 0; u < cols; u++)
            if (u != self) out[k++] = static_cast<index_t>(u);
        return;
    }
    if (self >= 0) marks.insert(self);
    // One candidate per entry first (independent draws), then duplicates are redrawn in entry order.
    for (int64_t pos = 0; pos < len; pos++) out[pos] = static_cast<index_t>(draw(rng));
    int64_t cursor = -1;
    for (int64_t pos = 0; pos < len; pos++) {
        int64_t u = out[pos];
        if (u >= 0 && marks.insert(u)) continue;
        u = -1;
        for (int attempt = 0; attempt < kMaxAttempts && u < 0; attempt++) {
            const int64_t c = draw(rng);
            if (c >= 0 && marks.insert(c)) u = c;
        }
        if (u < 0) {
            if (cursor < 0) cursor = static_cast<int64_t>(rng.below(static_cast<uint64_t>(cols)));
            while (marks.contains(cursor)) cursor = cursor + 1 == cols ? 0 : cursor + 1;
            u = cursor;
            marks.insert(u);
        }
        out[pos] = static_cast<index_t>(u);
    }
    for (int64_t pos = 0; pos < len; pos++) marks.erase(out[pos]);
    if (self >= 0) marks.erase(self);
}

/// A CSR of rows x cols built row by row: row i of the model gets lengths[i] entries, written by
/// fill(state, i, out) as model column ids into out[0, lengths[i]). With a permutation `perm`
/// (square graphs only; empty: none) model node i becomes node perm[i], for rows and columns.
/// Rows are sorted; edge ids are the identity. One State per worker from make_state().
template <typename MakeState, typename Fill>
CSR build_csr(int64_t rows, int64_t cols, const std::vector<index_t> &lengths, const std::vector<index_t> &perm,
              int threads, MakeState make_state, Fill fill) {
    if (!perm.empty() && (rows != cols || static_cast<int64_t>(perm.size()) != rows))
        fail<Error>("internal: a node permutation needs a square graph and one entry per node");
    CSR csr;
    csr.num_rows = rows;
    csr.num_cols = cols;
    csr.row_ptr.assign(static_cast<size_t>(rows) + 1, 0);
    auto out_row = [&](int64_t i) { return perm.empty() ? i : static_cast<int64_t>(perm[i]); };
    for (int64_t i = 0; i < rows; i++) csr.row_ptr[out_row(i) + 1] = lengths[i];
    int64_t total = 0;
    for (int64_t v = 0; v < rows; v++) {
        total += csr.row_ptr[v + 1];
        if (total > kIndexMax) fail<Error>("the graph has more than ", kIndexMax, " edges (int32 indices)");
        csr.row_ptr[v + 1] = static_cast<index_t>(total);
    }
    csr.col_idx.resize(static_cast<size_t>(total));
    constexpr int64_t kChunk = 256;
    std::vector<decltype(make_state())> states;
    const int workers = worker_count(threads, (rows + kChunk - 1) / kChunk);
    for (int w = 0; w < workers; w++) states.push_back(make_state());
    parallel_for(rows, kChunk, states, [&](auto &state, int64_t i) {
        const int64_t len = lengths[i];
        if (len == 0) return;
        index_t *out = csr.col_idx.data() + csr.row_ptr[out_row(i)];
        fill(state, i, out);
        if (!perm.empty())
            for (int64_t k = 0; k < len; k++) out[k] = perm[out[k]];
        std::sort(out, out + len);
    });
    return csr;
}

/// Row lengths of `edges` entries whose rows are drawn independently by draw(rng) (a row in
/// [0, rows)): a multinomial sample, each row capped at `cap` (a draw that lands in a full row is
/// redrawn; after 64 such draws it takes the next row with room after a random start). Draws come
/// in blocks of 2^16 with a stream per block (purposes `purpose` and `purpose + 1`), so the
/// lengths do not depend on the thread count. Requires rows * cap >= edges.
template <typename Draw>
std::vector<index_t> draw_row_lengths(int64_t rows, int64_t edges, int64_t cap, uint64_t seed, Family family,
                                      uint64_t purpose, int threads, Draw draw) {
    if (static_cast<double>(rows) * static_cast<double>(cap) < static_cast<double>(edges))
        fail<Error>("internal: ", edges, " entries do not fit ", rows, " rows of at most ", cap);
    constexpr int64_t kBlock = int64_t{1} << 16;
    const int64_t blocks = (edges + kBlock - 1) / kBlock;
    const int workers = worker_count(threads, blocks);
    std::vector<std::vector<index_t>> counts(static_cast<size_t>(workers));
    for (auto &c : counts) c.assign(static_cast<size_t>(rows), 0);
    parallel_for(blocks, 1, counts, [&](std::vector<index_t> &count, int64_t b) {
        Rng rng = stream(seed, family, purpose, static_cast<uint64_t>(b));
        for (int64_t j = b * kBlock, end = std::min(edges, j + kBlock); j < end; j++) count[draw(rng)]++;
    });
    std::vector<index_t> length = std::move(counts[0]);
    for (size_t w = 1; w < counts.size(); w++) {
        for (int64_t v = 0; v < rows; v++) length[v] += counts[w][v];
        counts[w] = {};
    }
    int64_t excess = 0;
    for (int64_t v = 0; v < rows; v++)
        if (length[v] > cap) excess += length[v] - cap, length[v] = static_cast<index_t>(cap);
    Rng rng = stream(seed, family, purpose + 1, 0);
    for (; excess > 0; excess--) {
        int64_t v = -1;
        for (int attempt = 0; attempt < 64 && v < 0; attempt++) {
            const int64_t c = draw(rng);
            if (length[c] < cap) v = c;
        }
        if (v < 0) {
            v = static_cast<int64_t>(rng.below(static_cast<uint64_t>(rows)));
            while (length[v] >= cap) v = v + 1 == rows ? 0 : v + 1;
        }
        length[v]++;
    }
    return length;
}

/// Expected degrees of `n` nodes that sum to `total`: with exponent gamma > 1, a power law (the
/// i-th largest proportional to (i + offset)^(-1/(gamma-1)), i = 1..n, the degree distribution
/// P(k) ~ k^-gamma), with the offset chosen so that the largest is max_degree when max_degree > 0
/// (and the pure power law's largest is above it); gamma == 0: all equal. Then every degree is
/// capped at `cap` and the rest scaled up so that the sum stays `total` (requires total <= n * cap).
/// Descending.
std::vector<double> power_law_degrees(int64_t n, double total, double gamma, double max_degree, double cap);

}  // namespace gsparse::datasets::zoo
