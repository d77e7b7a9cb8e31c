// k-nearest-neighbour graphs, as built on point clouds: `nodes` uniform random points in
// [0,1]^dim, row v lists the k points nearest to v (Euclidean distance, ties by id, never v).
//
// The points are bucketed into a grid of G^dim cells with ~k points per cell and numbered cell by
// cell (cells in row-major order, dimension 0 fastest), so ids are spatially local, as in a
// voxelized point cloud. The search is exact: a point scans the block of cells within r of its own
// cell (r = 1, 2, ...) until it has k candidates and the k-th nearest is closer than any point
// outside the block can be. Every row has exactly k entries; out-degrees vary (hubs in sparse
// regions). No self-loops, no duplicates; the graph is not symmetric.
#include <cmath>

#include "zoo/common.h"
#include "zoo/families.h"

namespace gsparse::datasets::zoo {

namespace {

struct Candidate {
    double dist;
    index_t id;
    bool operator<(const Candidate &o) const { return dist < o.dist || (dist == o.dist && id < o.id); }
};

}  // namespace

void validate(const KnnSpec &s) {
    if (s.nodes < 2 || s.nodes > kIndexMax)
        fail<Error>("knn: nodes = ", s.nodes, " is out of range: it must be in [2, ", kIndexMax, "]");
    if (s.k < 1 || s.k >= s.nodes)
        fail<Error>("knn: k = ", s.k, " is out of range: it must be in [1, nodes - 1 = ", s.nodes - 1, "]");
    if (s.dim < 1 || s.dim > 4) fail<Error>("knn: dim = ", s.dim, " is out of range: it must be in [1, 4]");
    if (s.nodes * s.k > kIndexMax)
        fail<Error>("knn: nodes * k = ", s.nodes * s.k, " edges exceed ", kIndexMax, " (int32 indices)");
}

namespace {

/// The grid: G cells per dimension, cell strides.
struct Cells {
    int64_t G = 1, count = 1;
    int64_t stride[4] = {1, 1, 1, 1};
    int64_t coord(double x) const { return std::min<int64_t>(G - 1, static_cast<int64_t>(x * static_cast<double>(G))); }
};

Cells cells_of(const KnnSpec &s) {
    Cells c;
    c.G = std::max<int64_t>(1, static_cast<int64_t>(std::floor(
                                   std::pow(static_cast<double>(s.nodes) / static_cast<double>(s.k), 1.0 / s.dim) + 1e-9)));
    for (int64_t j = 0; j < s.dim; j++) c.stride[j] = c.count, c.count *= c.G;
    return c;
}

/// The points in id order (numbered cell by cell) and the first id of every cell.
std::vector<double> points(const KnnSpec &s, const Cells &cells, uint64_t seed, int threads,
                           std::vector<int64_t> &cell_start) {
    const int64_t n = s.nodes, d = s.dim;
    std::vector<double> pos(static_cast<size_t>(n * d));
    cell_start.assign(static_cast<size_t>(cells.count) + 1, 0);
    std::vector<double> raw(static_cast<size_t>(n * d));
    std::vector<index_t> cell_of(static_cast<size_t>(n));
    std::vector<int> workers(static_cast<size_t>(worker_count(threads, (n + 4095) / 4096)));
    parallel_for(n, 4096, workers, [&](int, int64_t p) {
        Rng rng = stream(seed, Family::knn, 1, static_cast<uint64_t>(p));
        int64_t c = 0;
        for (int64_t j = 0; j < d; j++) {
            raw[p * d + j] = rng.uniform();
            c += cells.coord(raw[p * d + j]) * cells.stride[j];
        }
        cell_of[p] = static_cast<index_t>(c);
    });
    for (int64_t p = 0; p < n; p++) cell_start[cell_of[p] + 1]++;
    for (int64_t c = 0; c < cells.count; c++) cell_start[c + 1] += cell_start[c];
    std::vector<int64_t> next(cell_start.begin(), cell_start.end() - 1);
    for (int64_t p = 0; p < n; p++) {
        const int64_t id = next[cell_of[p]]++;
        for (int64_t j = 0; j < d; j++) pos[id * d + j] = raw[p * d + j];
    }
    return pos;
}

}  // namespace

std::vector<double> knn_points(const KnnSpec &s, uint64_t seed) {
    validate(s);
    std::vector<int64_t> cell_start;
    return points(s, cells_of(s), seed, 0, cell_start);
}

CSR generate_knn(const KnnSpec &s, uint64_t seed, int threads) {
    validate(s);
    const int64_t n = s.nodes, k = s.k, d = s.dim;
    const Cells cells = cells_of(s);
    const int64_t G = cells.G;
    const int64_t *stride = cells.stride;
    auto cell_coord = [&](double x) { return cells.coord(x); };
    std::vector<int64_t> cell_start;
    const std::vector<double> pos = points(s, cells, seed, threads, cell_start);

    std::vector<index_t> length(static_cast<size_t>(n), static_cast<index_t>(k));
    std::vector<index_t> perm;
    if (s.shuffle) {
        Rng rng = stream(seed, Family::knn, 3, 0);
        perm = detail::random_permutation<index_t>(n, rng);
    }
    const double side = 1.0 / static_cast<double>(G);
    return build_csr(
        n, n, length, perm, threads, [&] { return std::vector<Candidate>(static_cast<size_t>(k) + 1); },
        [&](std::vector<Candidate> &best, int64_t v, index_t *row) {
            const double *x = &pos[v * d];
            int64_t own[4] = {0, 0, 0, 0};
            for (int64_t j = 0; j < d; j++) own[j] = cell_coord(x[j]);
            int64_t found = 0;  // best[0, found) ascending, found <= k
            auto consider = [&](double dist, index_t q) {
                const Candidate c{dist, q};
                if (found == k && !(c < best[k - 1])) return;
                int64_t i = found < k ? found++ : k - 1;
                for (; i > 0 && c < best[i - 1]; i--) best[i] = best[i - 1];
                best[i] = c;
            };
            // Rings of cells at Chebyshev distance r from the point's cell, r = 0, 1, ...: a ring's
            // cells are skipped when they cannot hold a point nearer than the k-th found so far.
            for (int64_t r = 0;; r++) {
                int64_t lo[4], hi[4], at[4];
                bool whole = true;
                double bound = INFINITY;  // distance from the point to the nearest unscanned cell
                for (int64_t j = 0; j < d; j++) {
                    lo[j] = std::max<int64_t>(0, own[j] - r);
                    hi[j] = std::min<int64_t>(G - 1, own[j] + r);
                    at[j] = lo[j];
                    if (lo[j] > 0) bound = std::min(bound, x[j] - static_cast<double>(lo[j]) * side), whole = false;
                    if (hi[j] < G - 1) bound = std::min(bound, static_cast<double>(hi[j] + 1) * side - x[j]), whole = false;
                }
                for (;;) {
                    int64_t c = 0, ring = 0;
                    double gap = 0;  // squared distance from the point to the cell
                    for (int64_t j = 0; j < d; j++) {
                        c += at[j] * stride[j];
                        ring = std::max(ring, std::abs(at[j] - own[j]));
                        const double t = std::max({0.0, static_cast<double>(at[j]) * side - x[j],
                                                   x[j] - static_cast<double>(at[j] + 1) * side});
                        gap += t * t;
                    }
                    if (ring == r && (found < k || gap < best[k - 1].dist)) {
                        for (int64_t q = cell_start[c]; q < cell_start[c + 1]; q++) {
                            if (q == v) continue;
                            double dist = 0;
                            for (int64_t j = 0; j < d; j++) {
                                const double t = pos[q * d + j] - x[j];
                                dist += t * t;
                            }
                            consider(dist, static_cast<index_t>(q));
                        }
                    }
                    int64_t j = 0;
                    while (j < d && ++at[j] > hi[j]) at[j] = lo[j], j++;
                    if (j == d) break;
                }
                if (whole || (found == k && best[k - 1].dist < bound * bound)) break;
            }
            for (int64_t i = 0; i < k; i++) row[i] = best[i].id;
        });
}

}  // namespace gsparse::datasets::zoo
