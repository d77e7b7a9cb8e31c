// Kernels on graph views (graph/graph_view.h: a graph over caller arrays, as the Python package
// builds them on the device) against the plain C++ reference, on fresh random graphs with empty
// rows, a very long row, duplicate edges, self-loops and edge ids that are not CSR positions; and
// the view's layout checks.
#include <gtest/gtest.h>

#include "api/gsparse.h"
#include "ops/reference.h"
#include "support/compare.h"
#include "support/graph_view_of.h"
#include "support/random_graph.h"

namespace gsparse {
namespace {

using test::HostView;
using test::view_of;

TEST(GraphView, SpmmMatchesReference) {
    const std::vector<std::pair<const char *, const char *>> cases = {
        {"copy_lhs", "sum"}, {"copy_lhs", "mean"}, {"mul", "sum"}, {"add", "max"}, {"sub", "min"},
        {"copy_rhs", "sum"}, {"div", "mean"}};
    for (uint64_t seed : {11u, 12u}) {
        test::RandomGraphOptions opt;
        opt.num_src = seed == 12 ? 170 : -1;  // one bipartite graph
        Graph g = test::random_graph(seed, opt);
        // The exact longest row, and the graph-blind bound (num_edges), give the same results.
        for (int64_t bound : {g.max_row_length(), int64_t{-1}}) {
            HostView h = view_of(g, bound);
            for (int64_t f : {1, 7, 32}) {
                for (auto [op, reduce] : cases) {
                    SpmmSpec spec{parse_binary_op(op), parse_reduce_op(reduce)};
                    const int64_t rf = spec.op == BinaryOp::Mul || spec.op == BinaryOp::Div ? 1 : f;
                    Tensor x = test::random_tensor({g.num_src(), f}, seed * 7 + f, DType::F32, 0.5, 1.5);
                    Tensor w = test::random_tensor({g.num_edges(), rf}, seed * 11 + f, DType::F32, 0.5, 1.5);
                    ReferenceResult ref = reference_spmm(g, spec, x, w);
                    Tensor out = Tensor::empty(ref.shape, DType::F32);
                    Tensor au = Tensor::empty(ref.shape, DType::I32), ae = Tensor::empty(ref.shape, DType::I32);
                    const bool args = has_arg_outputs(spec.reduce);
                    gspmm_into(h.view, spec, x, w, out, args ? &au : nullptr, args ? &ae : nullptr);
                    EXPECT_TRUE(test::matches_reference(out, ref, 1e-5, 1e-5, args ? &au : nullptr,
                                                        args ? &ae : nullptr))
                        << op << "/" << reduce << " F=" << f << " seed " << seed << " bound " << bound;
                }
            }
        }
    }
}

TEST(GraphView, SddmmMatchesReference) {
    Graph g = test::random_graph(13);
    HostView h = view_of(g);
    for (int64_t f : {1, 5, 32}) {
        for (const char *op : {"dot", "add", "mul", "copy_lhs"}) {
            SddmmSpec spec{parse_binary_op(op), OperandTarget::Src, OperandTarget::Dst};
            Tensor a = test::random_tensor({g.num_src(), f}, 3 + f);
            Tensor b = test::random_tensor({g.num_dst(), f}, 5 + f);
            ReferenceResult ref = reference_sddmm(g, spec, a, b);
            Tensor out = Tensor::empty(ref.shape, DType::F32);
            gsddmm_into(h.view, spec, a, b, out);
            EXPECT_TRUE(test::matches_reference(out, ref, 1e-5, 1e-5)) << op << " F=" << f;
        }
    }
}

TEST(GraphView, LayoutErrorsNameTheProblem) {
    Graph g = test::random_graph(14);
    Tensor x = test::random_tensor({g.num_src(), 4}, 1);
    Tensor out = Tensor::empty({g.num_dst(), 4}, DType::F32);
    SpmmSpec sum{BinaryOp::CopyLhs, ReduceOp::Sum};
    HostView h = view_of(g);
    h.view.row_ptr_len = g.num_dst();  // one short
    try {
        gspmm_into(h.view, sum, x, {}, out);
        ADD_FAILURE() << "a short row_ptr must be rejected";
    } catch (const GraphError &e) {
        EXPECT_NE(std::string(e.what()).find("row_ptr has"), std::string::npos) << e.what();
    }
    HostView no_coo = view_of(g);
    no_coo.view.coo_src = nullptr;
    Tensor s = Tensor::empty({g.num_edges(), 1}, DType::F32);
    try {
        gsddmm_into(no_coo.view, SddmmSpec{BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst}, x,
                    test::random_tensor({g.num_dst(), 4}, 2), s);
        ADD_FAILURE() << "g-SDDMM without COO arrays must be rejected";
    } catch (const GraphError &e) {
        EXPECT_NE(std::string(e.what()).find("COO"), std::string::npos) << e.what();
    }
    HostView cuda = view_of(g);
    cuda.view.device = Device::CUDA;
    try {
        gspmm_into(cuda.view, sum, x, {}, out);
        ADD_FAILURE() << "a CUDA view with host tensors must be rejected";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("cuda"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace gsparse
