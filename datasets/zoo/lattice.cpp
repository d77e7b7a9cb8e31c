// Road-like lattices and meshes: a 2-D grid with a random subset of its 8-neighbour stencil.
//
// Node (x, y) of a grid `width` wide has id y * width + x (the last grid row may be partial). Its
// candidate undirected edges are the axis edges (right, down: average degree up to ~4) and the
// diagonals (down-right, down-left: up to ~8 with the axis edges). Exactly edges / 2 of them are
// kept: as many axis edges as fit, chosen uniformly (selection sampling, Knuth's Algorithm S: one
// pass, exactly k of m), then diagonals for the rest. Average degree 2-3 gives road-like graphs
// (long chains, a few junctions, many dead ends), 4 a square grid with a few diagonals, 6 a
// triangle-like mesh, 8 the full stencil. Both directions of every edge are stored, so in- and
// out-degrees are equal and at most 8; no self-loops, no duplicates.
#include <cmath>

#include "zoo/common.h"
#include "zoo/families.h"

namespace gsparse::datasets::zoo {

namespace {

enum : uint8_t { kRight = 1, kDown = 2, kDownRight = 4, kDownLeft = 8 };

struct Grid {
    int64_t n, w;
    /// The candidate edges that node id owns (to its right and below).
    uint8_t candidates(int64_t id) const {
        const int64_t x = id % w;
        uint8_t c = 0;
        if (x + 1 < w && id + 1 < n) c |= kRight;
        if (id + w < n) c |= kDown;
        if (x + 1 < w && id + w + 1 < n) c |= kDownRight;
        if (x > 0 && id + w - 1 < n) c |= kDownLeft;
        return c;
    }
};

/// Keeps exactly `keep` of the candidate edges of the kinds in `mask`, each subset equally likely.
void select(const Grid &g, uint8_t mask, int64_t keep, Rng rng, std::vector<uint8_t> &bits) {
    int64_t total = 0;
    for (int64_t id = 0; id < g.n; id++) total += __builtin_popcount(g.candidates(id) & mask);
    for (int64_t id = 0; id < g.n && keep > 0; id++) {
        const uint8_t c = g.candidates(id) & mask;
        for (uint8_t kind = 1; kind <= 8; kind <<= 1) {
            if (!(c & kind)) continue;
            if (rng.uniform() * static_cast<double>(total) < static_cast<double>(keep)) {
                bits[id] |= kind;
                keep--;
            }
            total--;
        }
    }
}

int64_t grid_width(const LatticeSpec &s) {
    return s.width > 0 ? s.width : static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(s.nodes))));
}

/// The candidate axis and diagonal edges of the grid (closed forms of counting Grid::candidates).
std::pair<int64_t, int64_t> candidate_counts(const Grid &g) {
    const int64_t n = g.n, w = g.w, full_rows = n / w, rest = n % w;
    const int64_t right = full_rows * (w - 1) + std::max<int64_t>(rest - 1, 0), down = std::max<int64_t>(0, n - w);
    // Down-right: ids below n - w - 1 outside the last column; down-left: below n - w + 1 outside the first.
    const int64_t dr_ids = std::max<int64_t>(0, n - w - 1), dl_ids = std::max<int64_t>(0, n - w + 1);
    const int64_t down_right = dr_ids - dr_ids / w, down_left = dl_ids - (dl_ids + w - 1) / w;
    return {right + down, down_right + down_left};
}

}  // namespace

void validate(const LatticeSpec &s) {
    if (s.nodes < 2 || s.nodes > kIndexMax)
        fail<Error>("lattice: nodes = ", s.nodes, " is out of range: it must be in [2, ", kIndexMax, "]");
    if (s.width < 0 || s.width > s.nodes)
        fail<Error>("lattice: width = ", s.width, " is out of range: it must be in [0, nodes = ", s.nodes,
                    "] (0: square)");
    if (s.edges < 0 || s.edges % 2 != 0 || s.edges > kIndexMax)
        fail<Error>("lattice: edges = ", s.edges, " must be even (both directions are stored) and in [0, ", kIndexMax,
                    "]");
    const int64_t w = grid_width(s);
    const auto [axis, diag] = candidate_counts(Grid{s.nodes, w});
    if (s.edges / 2 > axis + diag)
        fail<Error>("lattice: edges = ", s.edges, " (average degree ", static_cast<double>(s.edges) / s.nodes,
                    ") do not fit: a grid of ", s.nodes, " nodes, ", w, " wide, has ", 2 * (axis + diag),
                    " (average degree ", 2.0 * static_cast<double>(axis + diag) / s.nodes, ")");
}

CSR generate_lattice(const LatticeSpec &s, uint64_t seed, int threads) {
    validate(s);
    const int64_t w = grid_width(s);
    const Grid g{s.nodes, w};
    const auto [axis, diag] = candidate_counts(g);
    (void)diag;
    const int64_t keep = s.edges / 2;
    std::vector<uint8_t> bits(static_cast<size_t>(s.nodes), 0);
    select(g, kRight | kDown, std::min(keep, axis), stream(seed, Family::lattice, 1, 0), bits);
    select(g, kDownRight | kDownLeft, keep - std::min(keep, axis), stream(seed, Family::lattice, 2, 0), bits);

    // Neighbours of id in ascending id order: an edge exists when its upper (or left) end, which
    // owns it, has the edge's bit.
    auto for_each_neighbour = [&](int64_t id, auto fn) {
        const int64_t x = id % w;
        const bool up = id >= w, left = x > 0, right = x + 1 < w;
        if (up && left && (bits[id - w - 1] & kDownRight)) fn(id - w - 1);
        if (up && (bits[id - w] & kDown)) fn(id - w);
        if (up && right && (bits[id - w + 1] & kDownLeft)) fn(id - w + 1);
        if (left && (bits[id - 1] & kRight)) fn(id - 1);
        if (bits[id] & kRight) fn(id + 1);
        if (bits[id] & kDownLeft) fn(id + w - 1);
        if (bits[id] & kDown) fn(id + w);
        if (bits[id] & kDownRight) fn(id + w + 1);
    };
    std::vector<index_t> length(static_cast<size_t>(s.nodes), 0);
    for (int64_t id = 0; id < s.nodes; id++) for_each_neighbour(id, [&](int64_t) { length[id]++; });
    std::vector<index_t> perm;
    if (s.shuffle) {
        Rng rng = stream(seed, Family::lattice, 3, 0);
        perm = detail::random_permutation<index_t>(s.nodes, rng);
    }
    return build_csr(
        s.nodes, s.nodes, length, perm, threads, [] { return 0; },
        [&](int, int64_t id, index_t *row) {
            int64_t k = 0;
            for_each_neighbour(id, [&](int64_t u) { row[k++] = static_cast<index_t>(u); });
        });
}

}  // namespace gsparse::datasets::zoo
