// Chung-Lu power-law graphs and rectangular bipartite (user-item) graphs: one generator with
// expected in-degrees for the rows and expected out-degrees for the sources.
//
//  1. Expected degrees: power_law_degrees (common.h) for the rows (in-exponent) and the sources
//     (out-exponent), each capped at what a simple graph allows, dealt to the node ids by
//     independent random permutations.
//  2. Row lengths: `edges` draws of a row by its expected in-degree (alias table), counted: the
//     multinomial in-degrees of the Chung-Lu multigraph with exactly `edges` edges.
//  3. Sources: each row draws its sources by expected out-degree, distinct, never the row itself in
//     square graphs (fill_distinct), so the graph is simple with exactly `edges` edges.
#include <cmath>
#include <string>

#include "twin/alias_table.h"
#include "zoo/common.h"
#include "zoo/families.h"

namespace gsparse::datasets::zoo {

namespace {

using detail::AliasTables;

struct PowerLaw {
    const char *family;
    Family tag;
    int64_t rows, cols, edges;
    double in_exponent, out_exponent, max_in, max_out;
    bool square;  ///< rows and columns are the same nodes: no self-loops
    bool allow_uniform;
};

void check_exponent(const PowerLaw &p, const char *name, double x) {
    if (!std::isfinite(x) || (p.allow_uniform ? !(x == 0 || (x > 1 && x <= 10)) : !(x > 1 && x <= 10)))
        fail<Error>(p.family, ": ", name, " = ", x, " is out of range: it must be > 1 and <= 10",
                    p.allow_uniform ? ", or 0 for uniform" : "");
}

void check(const PowerLaw &p, const char *rows_name, const char *cols_name) {
    if (p.rows < 1 || p.rows > kIndexMax)
        fail<Error>(p.family, ": ", rows_name, " = ", p.rows, " is out of range: it must be in [1, ", kIndexMax, "]");
    if (p.cols < 1 || p.cols > kIndexMax)
        fail<Error>(p.family, ": ", cols_name, " = ", p.cols, " is out of range: it must be in [1, ", kIndexMax, "]");
    if (p.edges < 0 || p.edges > kIndexMax)
        fail<Error>(p.family, ": edges = ", p.edges, " is out of range: it must be in [0, ", kIndexMax, "]");
    const double row_cap = static_cast<double>(p.cols - (p.square ? 1 : 0));
    // A simple graph's rows hold at most row_cap entries; half of that keeps the redraws cheap.
    if (static_cast<double>(p.edges) > 0.5 * static_cast<double>(p.rows) * row_cap)
        fail<Error>(p.family, ": edges = ", p.edges, " is too dense: at most half of the ",
                    static_cast<int64_t>(static_cast<double>(p.rows) * row_cap), " possible edges");
    check_exponent(p, "in-exponent", p.in_exponent);
    check_exponent(p, "out-exponent", p.out_exponent);
    const double avg_in = static_cast<double>(p.edges) / static_cast<double>(p.rows);
    const double avg_out = static_cast<double>(p.edges) / static_cast<double>(p.cols);
    if (!std::isfinite(p.max_in) || p.max_in < 0 || (p.max_in > 0 && p.max_in <= avg_in))
        fail<Error>(p.family, ": max-in-degree = ", p.max_in,
                    " is out of range: it must be 0 (no limit) or above the average in-degree ", avg_in);
    if (!std::isfinite(p.max_out) || p.max_out < 0 || (p.max_out > 0 && p.max_out <= avg_out))
        fail<Error>(p.family, ": max-out-degree = ", p.max_out,
                    " is out of range: it must be 0 (no limit) or above the average out-degree ", avg_out);
}

/// Alias table over n nodes by expected degree; node ids dealt by a random permutation.
AliasTables dealt_table(int64_t n, double total, double exponent, double max_degree, double cap, uint64_t seed,
                        Family tag, uint64_t purpose) {
    std::vector<double> w = power_law_degrees(n, total, exponent, max_degree, cap);
    Rng rng = stream(seed, tag, purpose, 0);
    const std::vector<index_t> ids = detail::random_permutation<index_t>(n, rng);
    return AliasTables(w, {0, n}, ids);
}

CSR generate(const PowerLaw &p, uint64_t seed, int threads) {
    const int64_t row_cap = p.cols - (p.square ? 1 : 0);
    const int64_t col_cap = p.rows - (p.square ? 1 : 0);
    std::vector<index_t> length;
    {
        const AliasTables in = dealt_table(p.rows, static_cast<double>(p.edges), p.in_exponent, p.max_in,
                                           static_cast<double>(row_cap), seed, p.tag, 1);
        length = draw_row_lengths(p.rows, p.edges, row_cap, seed, p.tag, 2, threads,
                                  [&](Rng &rng) { return static_cast<int64_t>(in.sample(0, rng.next())); });
    }
    const AliasTables out = dealt_table(p.cols, static_cast<double>(p.edges), p.out_exponent, p.max_out,
                                        static_cast<double>(std::max<int64_t>(col_cap, 1)), seed, p.tag, 4);
    return build_csr(
        p.rows, p.cols, length, {}, threads, [&] { return ColumnMarks(p.cols); },
        [&](ColumnMarks &marks, int64_t v, index_t *row) {
            Rng rng = stream(seed, p.tag, 5, static_cast<uint64_t>(v));
            fill_distinct(row, length[v], p.cols, p.square ? v : -1, marks, rng,
                          [&](Rng &r) { return static_cast<int64_t>(out.sample(0, r.next())); });
        });
}

PowerLaw model(const ChungLuSpec &s) {
    return {"chung-lu", Family::chung_lu, s.nodes, s.nodes, s.edges, s.in_exponent, s.out_exponent,
            s.max_in_degree, s.max_out_degree, true, false};
}

PowerLaw model(const BipartiteSpec &s) {
    return {"bipartite", Family::bipartite, s.dst_nodes, s.src_nodes, s.edges, s.in_exponent, s.out_exponent,
            s.max_in_degree, s.max_out_degree, false, true};
}

}  // namespace

void validate(const ChungLuSpec &s) {
    if (s.nodes < 2 || s.nodes > kIndexMax)
        fail<Error>("chung-lu: nodes = ", s.nodes, " is out of range: it must be in [2, ", kIndexMax, "]");
    check(model(s), "nodes", "nodes");
}

void validate(const BipartiteSpec &s) { check(model(s), "dst-nodes", "src-nodes"); }

CSR generate_chung_lu(const ChungLuSpec &s, uint64_t seed, int threads) {
    validate(s);
    return generate(model(s), seed, threads);
}

CSR generate_bipartite(const BipartiteSpec &s, uint64_t seed, int threads) {
    validate(s);
    return generate(model(s), seed, threads);
}

}  // namespace gsparse::datasets::zoo
