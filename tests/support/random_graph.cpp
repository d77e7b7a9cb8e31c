#include "support/random_graph.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "graph/formats.h"

namespace gsparse::test {

EdgeList random_edges(uint64_t seed, const RandomGraphOptions &opt) {
    std::mt19937_64 rng(seed);
    EdgeList el;
    el.num_dst = opt.num_nodes;
    el.num_src = opt.num_src >= 0 ? opt.num_src : opt.num_nodes;
    if (el.num_dst == 0 || el.num_src == 0) return el;
    std::uniform_int_distribution<index_t> pick_src(0, static_cast<index_t>(el.num_src - 1));
    std::uniform_real_distribution<double> coin(0.0, 1.0);
    std::poisson_distribution<int64_t> degree(opt.avg_degree);

    const int64_t long_row_len = opt.long_row >= 0 ? opt.long_row : 8 * el.num_src;
    const index_t long_row = static_cast<index_t>(rng() % el.num_dst);
    for (index_t v = 0; v < el.num_dst; v++) {
        int64_t len = v == long_row ? long_row_len : (coin(rng) < opt.empty_row_share ? 0 : degree(rng));
        size_t row_start = el.src.size();
        for (int64_t k = 0; k < len; k++) {
            index_t u;
            if (k > 0 && coin(rng) < opt.duplicate_share)
                u = el.src[row_start + rng() % (el.src.size() - row_start)];
            else if (coin(rng) < opt.self_loop_share && v < el.num_src)
                u = v;
            else
                u = pick_src(rng);
            el.src.push_back(u);
            el.dst.push_back(v);
        }
    }
    if (opt.shuffle_edge_ids) {
        std::vector<size_t> perm(el.src.size());
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng);
        EdgeList shuffled = el;
        for (size_t i = 0; i < perm.size(); i++) {
            shuffled.src[i] = el.src[perm[i]];
            shuffled.dst[i] = el.dst[perm[i]];
        }
        el = std::move(shuffled);
    }
    return el;
}

Graph random_graph(uint64_t seed, const RandomGraphOptions &opt) {
    EdgeList el = random_edges(seed, opt);
    COO coo;
    coo.num_rows = el.num_dst;
    coo.num_cols = el.num_src;
    coo.row = el.dst;
    coo.col = el.src;
    return Graph::from_coo(coo);
}

std::string real_graph_path(const std::string &name) {
    return std::string(GSPARSE_REAL_DATA_DIR) + "/" + name + ".mtx";
}

std::vector<std::string> real_graph_names() {
    return {"cora", "citeseer", "pubmed", "ca-CondMat", "p2p-Gnutella31"};
}

}  // namespace gsparse::test
