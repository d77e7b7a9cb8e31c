// Erdős–Rényi G(n, m) graphs: exactly m distinct directed edges u -> v (u != v), every such edge
// set equally likely.
//
//  1. Row lengths: the m edges are placed one by one, each in a uniformly chosen free cell of the
//     adjacency matrix; only the row counts are kept. A row is proposed uniformly and accepted with
//     probability (free cells in the row) / (n - 1), which picks rows exactly in proportion to
//     their free cells (the multivariate hypergeometric row counts of a uniform m-subset).
//  2. Each row of length L takes a uniform L-subset of the other n - 1 nodes (Floyd's algorithm:
//     L draws, no retries).
// Requires m <= n (n - 1) / 2, so that step 1 accepts at least half of its proposals.
#include <cmath>

#include "zoo/common.h"
#include "zoo/families.h"

namespace gsparse::datasets::zoo {

void validate(const ErdosRenyiSpec &s) {
    if (s.nodes < 2 || s.nodes > kIndexMax)
        fail<Error>("erdos-renyi: nodes = ", s.nodes, " is out of range: it must be in [2, ", kIndexMax, "]");
    const double possible = static_cast<double>(s.nodes) * static_cast<double>(s.nodes - 1);
    if (s.edges < 0 || s.edges > kIndexMax || static_cast<double>(s.edges) > 0.5 * possible)
        fail<Error>("erdos-renyi: edges = ", s.edges, " is out of range: it must be in [0, ",
                    static_cast<int64_t>(std::min(0.5 * possible, static_cast<double>(kIndexMax))),
                    "] (at most half of the n (n - 1) possible edges)");
}

CSR generate_erdos_renyi(const ErdosRenyiSpec &s, uint64_t seed, int threads) {
    validate(s);
    const int64_t n = s.nodes, free_max = n - 1;
    std::vector<index_t> length(static_cast<size_t>(n), 0);
    Rng rng = stream(seed, Family::erdos_renyi, 1, 0);
    for (int64_t placed = 0; placed < s.edges;) {
        const int64_t v = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
        const int64_t used = length[v];
        if (used == 0 || static_cast<int64_t>(rng.below(static_cast<uint64_t>(free_max))) >= used) {
            length[v]++;
            placed++;
        }
    }
    return build_csr(
        n, n, length, {}, threads, [&] { return ColumnMarks(n - 1); },
        [&](ColumnMarks &marks, int64_t v, index_t *row) {
            Rng r = stream(seed, Family::erdos_renyi, 2, static_cast<uint64_t>(v));
            const int64_t len = length[v];
            // Floyd: a uniform len-subset of [0, n - 1), then values >= v shift up by one (skip v).
            for (int64_t j = free_max - len; j < free_max; j++) {
                int64_t t = static_cast<int64_t>(r.below(static_cast<uint64_t>(j) + 1));
                if (!marks.insert(t)) {
                    t = j;
                    marks.insert(t);
                }
                row[j - (free_max - len)] = static_cast<index_t>(t);
            }
            for (int64_t i = 0; i < len; i++) {
                marks.erase(row[i]);
                if (row[i] >= v) row[i]++;
            }
        });
}

}  // namespace gsparse::datasets::zoo
