// User-written g-SDDMM programs (dsl/user_sddmm.h): per-edge values against plain C++ loops over the
// edges in edge-id order on random graphs (empty rows, a very long row, duplicate edges,
// self-loops, shuffled edge ids, bipartite), F = 1, odd F and 4 heads; errors for incomplete
// programs and mismatched operands; the PTX a CUDA compilation emits.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "dsl/user_sddmm.h"
#include "support/compare.h"
#include "support/random_graph.h"
#include "support/throws_with.h"

namespace gsparse {
namespace {

using dsl::At;
using dsl::SddmmProgram;

std::vector<test::RandomGraphOptions> shapes() {
    std::vector<test::RandomGraphOptions> s(3);
    s[0].num_nodes = 150;
    s[0].long_row = 500;
    s[1].num_nodes = 150;
    s[1].num_src = 40;
    s[2].num_nodes = 150;
    s[2].shuffle_edge_ids = false;
    return s;
}

/// out[e, f] = value(f, u, v, e) over the edges in edge-id order.
void expect_edges(const Graph &g, const Tensor &out, int F,
                  const std::function<double(int, int64_t, int64_t, int64_t)> &value, const std::string &what) {
    const COO &coo = g.coo();
    ASSERT_EQ(out.size(0), coo.nnz()) << what;
    int64_t bad = 0;
    for (int64_t e = 0; e < coo.nnz(); ++e)
        for (int f = 0; f < F; ++f) {
            const double want = value(f, coo.col[e], coo.row[e], e), got = out.data_as<float>()[e * F + f];
            if (!(std::abs(got - want) <= 1e-5 * (1 + std::abs(want))) && bad++ < 5)
                ADD_FAILURE() << what << ": edge " << e << " feature " << f << " is " << got << ", expected " << want;
        }
    EXPECT_EQ(bad, 0) << what;
}

TEST(UserSddmm, AttentionScoresPerHead) {
    SddmmProgram p("gat_scores");
    Halide::Expr as = p.operand("a_src", At::Src);
    Halide::Expr ad = p.operand("a_dst", At::Dst);
    Halide::Expr s = as + ad;
    p.edge_value(Halide::select(s > 0, s, 0.2f * s));
    for (int H : {1, 4}) {
        dsl::SddmmKernel k = p.compile(H);
        for (size_t i = 0; i < shapes().size(); ++i) {
            Graph g = test::random_graph(10 + i, shapes()[i]);
            Tensor a = test::random_tensor({g.num_src(), H}, 1), b = test::random_tensor({g.num_dst(), H}, 2);
            Tensor out = Tensor::empty({g.num_edges(), H}, DType::F32);
            k.run(g, {{"a_src", a}, {"a_dst", b}}, out);
            expect_edges(g, out, H, [&](int f, int64_t u, int64_t v, int64_t) {
                const double x = double(a.data_as<float>()[u * H + f]) + b.data_as<float>()[v * H + f];
                return x > 0 ? x : 0.2 * x;
            }, "H=" + std::to_string(H) + " shape " + std::to_string(i));
        }
    }
}

TEST(UserSddmm, EdgeConditionedProductWithBroadcastGate) {
    SddmmProgram p("edge_product");
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr w = p.operand("w", At::Edge);
    Halide::Expr gate = p.operand("gate", At::Dst, true);
    p.edge_value(x * w + Halide::exp(gate));
    const int F = 7;
    dsl::SddmmKernel k = p.compile(F);
    for (size_t i = 0; i < shapes().size(); ++i) {
        Graph g = test::random_graph(20 + i, shapes()[i]);
        Tensor tx = test::random_tensor({g.num_src(), F}, 3), tw = test::random_tensor({g.num_edges(), F}, 4),
               tg = test::random_tensor({g.num_dst(), 1}, 5);
        Tensor out = Tensor::empty({g.num_edges(), F}, DType::F32);
        k.run(g, {{"x", tx}, {"w", tw}, {"gate", tg}}, out);
        expect_edges(g, out, F, [&](int f, int64_t u, int64_t v, int64_t e) {
            return double(tx.data_as<float>()[u * F + f]) * tw.data_as<float>()[e * F + f] +
                   std::exp(double(tg.data_as<float>()[v]));
        }, "shape " + std::to_string(i));
    }
}

TEST(UserSddmm, GraphViewsOfTheCooRunLikeTheGraph) {
    // The COO in edge-id order in caller memory (as dynamic graphs hold it) gives the same values;
    // a view without its COO, or on another device, is a GraphError.
    SddmmProgram p("viewed_edges");
    Halide::Expr x = p.operand("x", At::Src);
    p.edge_value(x * p.operand("w", At::Edge, true) + p.operand("d", At::Dst, true));
    const int F = 3;
    dsl::SddmmKernel k = p.compile(F);
    for (size_t i = 0; i < shapes().size(); ++i) {
        Graph g = test::random_graph(40 + i, shapes()[i]);
        const std::map<std::string, Tensor> ops = {{"x", test::random_tensor({g.num_src(), F}, 1)},
                                                   {"w", test::random_tensor({g.num_edges(), 1}, 2)},
                                                   {"d", test::random_tensor({g.num_dst(), 1}, 3)}};
        Tensor want = Tensor::empty({g.num_edges(), F}, DType::F32), got = Tensor::empty({g.num_edges(), F}, DType::F32);
        k.run(g, ops, want);
        const COO &coo = g.coo();
        GraphView view;
        view.num_src = g.num_src(), view.num_dst = g.num_dst(), view.num_edges = g.num_edges();
        view.coo_src = coo.col.data(), view.coo_dst = coo.row.data(), view.coo_len = coo.nnz();
        k.run(view, ops, got);
        for (int64_t j = 0; j < got.numel(); ++j)
            ASSERT_EQ(got.data_as<float>()[j], want.data_as<float>()[j]) << "shape " << i << " element " << j;
        if (g.num_edges() == 0) continue;
        GraphView no_coo = view;
        no_coo.coo_src = no_coo.coo_dst = nullptr;
        EXPECT_TRUE(test::throws_with<GraphError>([&] { k.run(no_coo, ops, got); }, {"COO"}));
        GraphView on_gpu = view;
        on_gpu.device = Device::CUDA;
        EXPECT_TRUE(test::throws_with<GraphError>([&] { k.run(on_gpu, ops, got); }, {"viewed_edges", "graph view"}));
    }
}

TEST(UserSddmm, ErrorsNameTheProblem) {
    EXPECT_TRUE(test::throws_with<Error>([] { SddmmProgram("no_value").compile(2); }, {"has no edge value"}));
    EXPECT_TRUE(test::throws_with<Error>([] { SddmmProgram("bad name"); }, {"not a C identifier"}));
    SddmmProgram p("checked_sddmm");
    Halide::Expr x = p.operand("x", At::Src);
    p.edge_value(x * p.operand("w", At::Edge, true));
    dsl::SddmmKernel k = p.compile(3);
    Graph g = test::random_graph(4);
    Tensor out = Tensor::empty({g.num_edges(), 3}, DType::F32);
    Tensor tx = test::random_tensor({g.num_src(), 3}, 1), tw = test::random_tensor({g.num_edges(), 1}, 2);
    EXPECT_TRUE(test::throws_with<Error>([&] { k.run(g, {{"x", tx}}, out); },
                                         {"operand 'w' (read at the edge) is not given"}));
    EXPECT_TRUE(test::throws_with<Error>([&] { k.run(g, {{"x", tw}, {"w", tw}}, out); }, {"operand 'x'"}));
    Tensor wrong = Tensor::empty({g.num_dst(), 3}, DType::F32);
    EXPECT_TRUE(test::throws_with<Error>([&] { k.run(g, {{"x", tx}, {"w", tw}}, wrong); }, {"out"}));
    dsl::SddmmKernel cuda = p.compile(3, Device::CUDA);
    EXPECT_TRUE(test::throws_with<ShapeError>([&] { cuda.run(g, {{"x", tx}, {"w", tw}}, out); },
                                              {"needs a CudaLaunch"}));
}

TEST(UserSddmm, CudaCompilationEmitsAKernelWithBoundedGathers) {
    SddmmProgram p("scores_cuda");
    Halide::Expr s = p.operand("a_src", At::Src) + p.operand("a_dst", At::Dst);
    p.edge_value(Halide::select(s > 0, s, 0.2f * s));
    dsl::SddmmKernel k = p.compile(4, Device::CUDA);
    const std::string stmt = k.lowered_stmt();
    EXPECT_NE(stmt.find("halide_cuda_run"), std::string::npos) << stmt;
    // The gathers through src_idx are bounded to [0, num_src): the source operand's required rows.
    EXPECT_NE(stmt.find("halide_error_access_out_of_bounds(\"Input buffer scores_cuda_a_src\", 1, 0, num_src + -1"),
              std::string::npos) << stmt;
    const std::string ptx = k.assembly();
    EXPECT_NE(ptx.find(".entry"), std::string::npos);
}

}  // namespace
}  // namespace gsparse
