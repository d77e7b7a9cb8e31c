// A 2-layer GCN forward pass, Z = Â relu(Â X W1) W2 with Â = D^-1/2 (A + I) D^-1/2, whose sparse
// aggregations run on CPU kernels emitted by gsparse-compile (u_mul_e_sum: neighbour features
// times the edge's normalization weight, summed). Dense products are plain loops. Prints a checksum
// of Z and compares every value with a plain C++ evaluation of the same model (gcn_model.h).
//
//   gcn_forward GRAPH.mtx
#include "gcn_aggregate_hidden.h"
#include "gcn_aggregate_out.h"
#include "gcn_model.h"

int main(int argc, char **argv) {
    using namespace gcn;
    if (argc != 2) {
        std::fprintf(stderr, "usage: gcn_forward GRAPH.mtx\n");
        return 2;
    }
    Graph g;
    if (!load_graph(argv[1], g)) {
        std::fprintf(stderr, "cannot read %s as a square Matrix Market graph\n", argv[1]);
        return 2;
    }
    std::vector<float> x, w1, w2;
    make_inputs(g.n, x, w1, w2);

    // Layer 1: H = relu(Â (X W1)); layer 2: Z = Â (H W2).
    std::vector<float> xw, h(static_cast<size_t>(g.n) * kHidden), hw, z(static_cast<size_t>(g.n) * kOut);
    dense(x, g.n, kIn, w1, kHidden, xw);
    int rc = gsparse_kernels::gcn_aggregate_hidden(g.n, g.n, g.nnz, g.row_ptr.data(), g.col_idx.data(), nullptr,
                                                   xw.data(), g.norm.data(), h.data());
    if (rc != gsparse_kernels::kOk) {
        std::fprintf(stderr, "layer 1 kernel failed: %d\n", rc);
        return 1;
    }
    for (float &v : h) v = std::max(v, 0.f);
    dense(h, g.n, kHidden, w2, kOut, hw);
    rc = gsparse_kernels::gcn_aggregate_out(g.n, g.n, g.nnz, g.row_ptr.data(), g.col_idx.data(), nullptr, hw.data(),
                                            g.norm.data(), z.data());
    if (rc != gsparse_kernels::kOk) {
        std::fprintf(stderr, "layer 2 kernel failed: %d\n", rc);
        return 1;
    }
    return compare(g, z, reference(g, x, w1, w2)) ? 0 : 1;
}
