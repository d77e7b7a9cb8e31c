// Operators on the real graphs of datasets/real against the reference.
#include <gtest/gtest.h>

#include <filesystem>

#include "api/gsparse.h"
#include "support/compare.h"
#include "support/random_graph.h"

namespace gsparse {
namespace {

class RealGraphOps : public ::testing::TestWithParam<std::string> {};

TEST_P(RealGraphOps, SpmmAndSddmmMatchReference) {
    const std::string path = test::real_graph_path(GetParam());
    ASSERT_TRUE(std::filesystem::exists(path)) << "missing real graph " << path;
    Graph g = Graph::load(path);
    ASSERT_GT(g.num_edges(), 0);
    Tensor x = test::random_tensor({g.num_src(), 37}, 1);
    for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max}) {
        SpmmSpec spec{BinaryOp::CopyLhs, r};
        SpmmResult got = gspmm(g, spec, x, {});
        const bool args = has_arg_outputs(r);
        EXPECT_TRUE(test::matches_reference(got.out, reference_spmm(g, spec, x, {}), 1e-5, 1e-6,
                                            args ? &got.arg_u : nullptr, args ? &got.arg_e : nullptr))
            << spec.name();
    }
    if (g.has_values()) {
        // Edge weights from the file as a scalar edge feature.
        Tensor w = Tensor::from_vector(g.values(), {g.num_edges(), 1});
        SpmmSpec spec{BinaryOp::Mul, ReduceOp::Sum};
        EXPECT_TRUE(test::matches_reference(gspmm(g, spec, x, w).out, reference_spmm(g, spec, x, w), 1e-5));
    }
    SddmmSpec dot{BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst};
    Tensor y = test::random_tensor({g.num_dst(), 37}, 2);
    EXPECT_TRUE(test::matches_reference(gsddmm(g, dot, x, y), reference_sddmm(g, dot, x, y), 1e-5));
}

INSTANTIATE_TEST_SUITE_P(Real, RealGraphOps, ::testing::ValuesIn(test::real_graph_names()),
                         [](const auto &info) {
                             std::string n = info.param;
                             for (char &c : n)
                                 if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                             return n;
                         });

}  // namespace
}  // namespace gsparse
