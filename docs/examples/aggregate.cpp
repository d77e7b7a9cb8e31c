// A runnable example of the gsparse C++ API: load a graph, aggregate neighbour features with
// g-SpMM (mean and max), score every edge with g-SDDMM (dot), and check one value by hand.
//
//   ./build/docs/examples/gsparse-example-aggregate datasets/real/cora.mtx
#include <cmath>
#include <cstdio>
#include <vector>

#include "api/gsparse.h"

int main(int argc, char **argv) {
    try {
        // 1. A graph: from a file, or a small one built from an edge list (edge i: src[i] -> dst[i]).
        gsparse::Graph g = argc > 1 ? gsparse::Graph::load(argv[1])
                                    : gsparse::Graph::from_edges(4, {0, 1, 2, 3, 3}, {1, 2, 0, 0, 2});
        const auto &s = g.stats();
        std::printf("graph: %lld nodes, %lld edges, max in-degree %lld\n", static_cast<long long>(s.num_rows),
                    static_cast<long long>(s.nnz), static_cast<long long>(s.max_row_length));

        // 2. Node features N x F, in the application's own memory, wrapped without a copy.
        const int64_t F = 16;
        std::vector<float> x(static_cast<size_t>(g.num_src() * F));
        for (size_t i = 0; i < x.size(); i++) x[i] = std::sin(0.01f * static_cast<float>(i));
        gsparse::Tensor xt = gsparse::Tensor::wrap(x.data(), {g.num_src(), F}, gsparse::DType::F32);

        // 3. g-SpMM: mean and max of in-neighbour features (max also returns the arg ids).
        gsparse::Tensor h = gsparse::gspmm(g, "copy_lhs", "mean", xt, {}).out;
        gsparse::SpmmResult m = gsparse::gspmm(g, "copy_lhs", "max", xt, {});

        // 4. g-SDDMM: one score per edge, <x[u], h[v]> for the edge u -> v.
        gsparse::Tensor score = gsparse::gsddmm(g, "dot", xt, h, "u", "v");

        // 5. Check node 0's first mean feature and edge 0's score by hand.
        const gsparse::CSR &csr = g.csr();
        double mean0 = 0;
        for (int32_t p = csr.row_ptr[0]; p < csr.row_ptr[1]; p++) mean0 += x[csr.col_idx[p] * F];
        if (csr.row_length(0) > 0) mean0 /= csr.row_length(0);
        const gsparse::COO &coo = g.coo();
        double dot0 = 0;
        if (g.num_edges() > 0)
            for (int64_t f = 0; f < F; f++) dot0 += x[coo.col[0] * F + f] * h.data_as<float>()[coo.row[0] * F + f];
        const double got_mean = h.data_as<float>()[0];
        const double got_dot = g.num_edges() ? score.data_as<float>()[0] : 0.0;
        std::printf("mean[0][0] = %.6f (by hand %.6f)\n", got_mean, mean0);
        std::printf("score[edge 0] = %.6f (by hand %.6f), shape %s\n", got_dot, dot0,
                    gsparse::shape_str(score.shape()).c_str());
        std::printf("max[0][0] = %.6f from source %d via edge %d\n", m.out.data_as<float>()[0],
                    m.arg_u.data_as<int32_t>()[0], m.arg_e.data_as<int32_t>()[0]);
        const bool ok = std::fabs(got_mean - mean0) <= 1e-5 * (1 + std::fabs(mean0)) &&
                        std::fabs(got_dot - dot0) <= 1e-4 * (1 + std::fabs(dot0));
        std::printf("%s\n", ok ? "OK" : "MISMATCH");
        return ok ? 0 : 1;
    } catch (const gsparse::Error &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 2;
    }
}
