// R-MAT / Kronecker graphs (Chakrabarti, Zhan and Faloutsos' recursive matrix model, with the
// Graph500 initiator a = 0.57, b = 0.19, c = 0.19, d = 0.05 by default).
//
// An edge descends the 2^L x 2^L adjacency matrix (rows = sources, columns = destinations, as in
// Graph500), taking quadrant a (source bit 0, destination bit 0), b (0, 1), c (1, 0) or d (1, 1)
// at each of the L levels independently. The destination bits are therefore independent with
// P(1) = b + d, and given the destination, the source bits are independent with P(1 | dst bit 0)
// = c / (a + c) and P(1 | dst bit 1) = d / (b + d). That lets the CSR be built row by row:
//  1. Row lengths: `edges` destinations drawn (multinomial), 8 levels per alias-table draw.
//  2. Each row draws its sources from the conditional distribution given its own bits, also 8
//     levels per draw (256 tables of 256 entries, one per destination byte).
// Ids >= nodes (when nodes is not a power of two) are redrawn. simple: self-loops and repeated
// sources are redrawn (fill_distinct), so the graph has exactly `edges` distinct edges; otherwise
// they are kept. shuffle: a random permutation of the ids (Graph500 permutes vertex labels).
#include <cmath>

#include "twin/alias_table.h"
#include "zoo/common.h"
#include "zoo/families.h"

namespace gsparse::datasets::zoo {

namespace {

using detail::AliasTables;

/// The alias tables of the destination and conditional source bit groups.
class RmatTables {
public:
    RmatTables(const RmatSpec &s, int64_t levels) : levels_(levels), partial_(static_cast<int>(levels % 8)) {
        const double d = 1 - s.a - s.b - s.c;
        const double dst1 = s.b + d;
        const double src1[2] = {s.c / (s.a + s.c), d / (s.b + d)};
        std::vector<double> w;
        std::vector<int64_t> bounds{0};
        auto table = [&](int width, auto weight) {
            for (int x = 0; x < (1 << width); x++) w.push_back(weight(x));
            bounds.push_back(static_cast<int64_t>(w.size()));
        };
        auto bit = [](int x, int j) { return (x >> j) & 1; };
        for (int width : {8, partial_}) {
            if (width == 0) continue;
            dst_slice_[width == 8 ? 0 : 1] = static_cast<int64_t>(bounds.size()) - 1;
            table(width, [&](int x) {
                double p = 1;
                for (int j = 0; j < width; j++) p *= bit(x, j) ? dst1 : 1 - dst1;
                return p;
            });
            src_slice_[width == 8 ? 0 : 1] = static_cast<int64_t>(bounds.size()) - 1;
            for (int t = 0; t < (1 << width); t++)
                table(width, [&](int x) {
                    double p = 1;
                    for (int j = 0; j < width; j++) p *= bit(x, j) ? src1[bit(t, j)] : 1 - src1[bit(t, j)];
                    return p;
                });
        }
        tables_ = AliasTables(w, bounds);
        bounds_ = std::move(bounds);
    }

    /// A destination in [0, 2^levels).
    int64_t destination(Rng &rng) const {
        int64_t id = 0;
        int shift = 0;
        for (; shift + 8 <= levels_; shift += 8) id |= bits(dst_slice_[0], rng) << shift;
        if (partial_) id |= bits(dst_slice_[1], rng) << shift;
        return id;
    }

    /// A source in [0, 2^levels) for destination t.
    int64_t source(int64_t t, Rng &rng) const {
        int64_t id = 0;
        int shift = 0;
        for (; shift + 8 <= levels_; shift += 8) id |= bits(src_slice_[0] + ((t >> shift) & 255), rng) << shift;
        if (partial_) id |= bits(src_slice_[1] + ((t >> shift) & ((1 << partial_) - 1)), rng) << shift;
        return id;
    }

private:
    /// One group of bits: an index within table `slice` (the tables return indices of the shared array).
    int64_t bits(int64_t slice, Rng &rng) const { return tables_.sample(slice, rng.next()) - bounds_[slice]; }

    int64_t levels_;
    int partial_;
    int64_t dst_slice_[2] = {0, 0}, src_slice_[2] = {0, 0};
    AliasTables tables_{{1.0}, {0, 1}};
    std::vector<int64_t> bounds_;
};

}  // namespace

void validate(const RmatSpec &s) {
    if (s.nodes < 2 || s.nodes > kIndexMax)
        fail<Error>("rmat: nodes = ", s.nodes, " is out of range: it must be in [2, ", kIndexMax, "]");
    if (s.edges < 0 || s.edges > kIndexMax)
        fail<Error>("rmat: edges = ", s.edges, " is out of range: it must be in [0, ", kIndexMax, "]");
    for (auto [name, x] : {std::pair<const char *, double>{"a", s.a}, {"b", s.b}, {"c", s.c}})
        if (!(x > 0 && x < 1)) fail<Error>("rmat: ", name, " = ", x, " is out of range: it must be in (0, 1)");
    if (!(s.a + s.b + s.c < 1))
        fail<Error>("rmat: a + b + c = ", s.a + s.b + s.c, " must be < 1 (d = 1 - a - b - c > 0)");
    if (s.simple && static_cast<double>(s.edges) > 0.5 * static_cast<double>(s.nodes) * static_cast<double>(s.nodes - 1))
        fail<Error>("rmat: edges = ", s.edges, " is too dense for a simple graph: at most half of the ",
                    s.nodes * (s.nodes - 1), " possible edges");
}

CSR generate_rmat(const RmatSpec &s, uint64_t seed, int threads) {
    validate(s);
    int64_t levels = 0;
    while ((int64_t{1} << levels) < s.nodes) levels++;
    const RmatTables tables(s, levels);
    const int64_t n = s.nodes;
    const std::vector<index_t> length =
        draw_row_lengths(n, s.edges, s.simple ? n - 1 : s.edges, seed, Family::rmat, 1, threads, [&](Rng &rng) {
            int64_t v;
            while ((v = tables.destination(rng)) >= n) {}
            return v;
        });
    std::vector<index_t> perm;
    if (s.shuffle) {
        Rng rng = stream(seed, Family::rmat, 3, 0);
        perm = detail::random_permutation<index_t>(n, rng);
    }
    auto draw_source = [&](int64_t v, Rng &rng) {
        const int64_t u = tables.source(v, rng);
        return u < n ? u : -1;
    };
    return build_csr(
        n, n, length, perm, threads, [&] { return ColumnMarks(s.simple ? n : 0); },
        [&](ColumnMarks &marks, int64_t v, index_t *row) {
            Rng rng = stream(seed, Family::rmat, 4, static_cast<uint64_t>(v));
            if (s.simple) {
                fill_distinct(row, length[v], n, v, marks, rng, [&](Rng &r) { return draw_source(v, r); });
            } else {
                for (int64_t k = 0; k < length[v]; k++) {
                    int64_t u;
                    while ((u = draw_source(v, rng)) < 0) {}
                    row[k] = static_cast<index_t>(u);
                }
            }
        });
}

}  // namespace gsparse::datasets::zoo
