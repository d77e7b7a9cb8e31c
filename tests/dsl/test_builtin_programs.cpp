// The built-in g-SpMM and g-SDDMM operators written as user programs (dsl/builtin_programs.h)
// against the built-in operators themselves (api/gsparse.h) on the CPU: every element-wise operator
// and every reduction, feature shapes that broadcast by DGL's rules (per-head weights, a scalar per
// edge, a vector per head, F = 1), on the random graphs (empty rows, a very long row, duplicates,
// self-loops, bipartite, shuffled edge ids); the same programs compile for CUDA; dot is refused.
#include <gtest/gtest.h>

#include <vector>

#include "api/gsparse.h"
#include "dsl/builtin_programs.h"
#include "support/compare.h"
#include "support/random_graph.h"
#include "support/throws_with.h"
#include "support/user_program_cases.h"

namespace gsparse {
namespace {

using Shape = std::vector<int64_t>;

int64_t numel(const Shape &s) {
    int64_t n = 1;
    for (int64_t x : s) n *= x;
    return n;
}

/// t [rows, ...] as the [rows, width] tensor a user program reads (the same memory).
Tensor rows_of(const Tensor &t, int64_t width) { return Tensor::wrap(t.data(), {t.size(0), width}, t.dtype()); }

struct Shapes {
    Shape lhs, rhs;
};

/// Feature shapes (lhs, rhs): equal rows, a weight an edge and head, a scalar per edge, one value
/// per source against edge rows, a vector per head over heads, F = 1.
std::vector<Shapes> shape_cases() {
    return {{{6}, {6}}, {{3, 4}, {3, 1}}, {{5}, {}}, {{1}, {7}}, {{2, 3}, {3}}, {{1}, {1}}};
}

TEST(BuiltinPrograms, SpmmMatchesTheBuiltInOperators) {
    const std::vector<BinaryOp> ops = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::CopyLhs,
                                       BinaryOp::CopyRhs};
    const std::vector<ReduceOp> reduces = {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min};
    // Every operator and reduction on equal rows, every operator on per-head weights (sum; max of
    // the product); on the other broadcast patterns one operator of each reduction (the kernels
    // compile one by one: CI time).
    int checked = 0;
    const std::vector<Shapes> shapes = shape_cases();
    for (size_t si = 0; si < shapes.size(); ++si)
        for (BinaryOp op : ops)
            for (ReduceOp reduce : reduces) {
                const Shapes &sh = shapes[si];
                if (si == 1 && reduce != ReduceOp::Sum && !(op == BinaryOp::Mul && reduce == ReduceOp::Max)) continue;
                if (si >= 2 && !((op == BinaryOp::Mul && reduce == ReduceOp::Sum) ||
                                 (op == BinaryOp::Div && reduce == ReduceOp::Mean) ||
                                 (op == BinaryOp::Sub && reduce == ReduceOp::Max) ||
                                 (op == BinaryOp::CopyRhs && reduce == ReduceOp::Min)))
                    continue;
                const SpmmSpec spec{op, reduce};
                const Shape lf = uses_lhs(op) ? sh.lhs : Shape{}, rf = uses_rhs(op) ? sh.rhs : Shape{};
                if ((op == BinaryOp::CopyLhs && lf.empty()) || (op == BinaryOp::CopyRhs && rf.empty() && sh.rhs.empty()))
                    continue;
                const int64_t F = dsl::program_features(op, lf, rf);
                dsl::SpmmKernel k = dsl::spmm_program(spec, lf, rf).compile(static_cast<int>(F));
                for (const test::Case &c : test::graphs()) {
                    Graph g = test::random_graph(40 + checked % 7, c.opt);
                    Shape ls = {g.num_src()}, rs = {g.num_edges()};
                    ls.insert(ls.end(), lf.begin(), lf.end());
                    rs.insert(rs.end(), rf.begin(), rf.end());
                    // Divisors away from 0.
                    Tensor lhs = test::random_tensor(ls, 1), rhs = test::random_tensor(rs, 2, DType::F32, 0.5, 1.5);
                    const Tensor want = gspmm(g, spec, lhs, rhs).out;
                    std::map<std::string, Tensor> operands;
                    if (uses_lhs(op)) operands["lhs"] = rows_of(lhs, numel(lf));
                    if (uses_rhs(op)) operands["rhs"] = rows_of(rhs, numel(rf));
                    Tensor got = Tensor::empty({g.num_dst(), F}, DType::F32);
                    k.run(g, operands, got);
                    test::expect_close(got, rows_of(want, F), 1e-5, spec.name() + " " + c.name);
                    checked++;
                }
            }
    EXPECT_GE(checked, 180);
}

TEST(BuiltinPrograms, SddmmMatchesTheBuiltInOperators) {
    const std::vector<BinaryOp> ops = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::CopyLhs,
                                       BinaryOp::CopyRhs};
    const std::vector<std::pair<OperandTarget, OperandTarget>> targets = {
        {OperandTarget::Src, OperandTarget::Dst}, {OperandTarget::Edge, OperandTarget::Src},
        {OperandTarget::Dst, OperandTarget::Edge}};
    const std::vector<Shapes> shapes = shape_cases();
    for (size_t si = 0; si < shapes.size(); ++si)
        for (BinaryOp op : ops)
            for (const auto &[lt, rt] : targets) {
                // Every operator and target pair on per-head weights; elsewhere mul and copy_rhs, one pair.
                if (si != 1 && !((op == BinaryOp::Mul || op == BinaryOp::CopyRhs) && lt == OperandTarget::Edge))
                    continue;
                const Shapes &sh = shapes[si];
                const SddmmSpec spec{op, lt, rt};
                const Shape lf = uses_lhs(op) ? sh.lhs : Shape{}, rf = uses_rhs(op) ? sh.rhs : Shape{};
                if ((op == BinaryOp::CopyLhs && lf.empty()) || (op == BinaryOp::CopyRhs && rf.empty())) continue;
                const int64_t F = dsl::program_features(op, lf, rf);
                dsl::SddmmKernel k = dsl::sddmm_program(spec, lf, rf).compile(static_cast<int>(F));
                for (const test::Case &c : test::graphs()) {
                    Graph g = test::random_graph(3, c.opt);
                    auto rows = [&](OperandTarget t) {
                        return t == OperandTarget::Src ? g.num_src() : t == OperandTarget::Dst ? g.num_dst() : g.num_edges();
                    };
                    Shape ls = {rows(lt)}, rs = {rows(rt)};
                    ls.insert(ls.end(), lf.begin(), lf.end());
                    rs.insert(rs.end(), rf.begin(), rf.end());
                    Tensor lhs = test::random_tensor(ls, 1), rhs = test::random_tensor(rs, 2, DType::F32, 0.5, 1.5);
                    const Tensor want = gsddmm(g, spec, lhs, rhs);
                    std::map<std::string, Tensor> operands;
                    if (uses_lhs(op)) operands["lhs"] = rows_of(lhs, numel(lf));
                    if (uses_rhs(op)) operands["rhs"] = rows_of(rhs, numel(rf));
                    Tensor got = Tensor::empty({g.num_edges(), F}, DType::F32);
                    k.run(g, operands, got);
                    test::expect_close(got, rows_of(want, F), 1e-6, spec.name() + " " + c.name);
                }
            }
}

TEST(BuiltinPrograms, OperandsAreDeclaredByHowTheyBroadcast) {
    // u_mul_e with a weight an edge and head: lhs a row of F, rhs one column a head.
    const dsl::SpmmProgram p = dsl::spmm_program({BinaryOp::Mul, ReduceOp::Sum}, {4, 8}, {4, 1});
    EXPECT_EQ(p.name(), "u_mul_e_sum");
    const std::vector<dsl::OperandInfo> info = p.operands();
    ASSERT_EQ(info.size(), 2u);
    EXPECT_EQ(info[0].name, "lhs");
    EXPECT_EQ(info[0].columns, 0);
    EXPECT_FALSE(info[0].broadcast);
    EXPECT_EQ(info[1].columns, 4);
    EXPECT_EQ(p.column_map("rhs", 32)[8], 1);
    EXPECT_EQ(p.column_map("rhs", 32)[31], 3);
    // A scalar per edge: broadcast.
    const dsl::SpmmProgram q = dsl::spmm_program({BinaryOp::Mul, ReduceOp::Sum}, {16}, {});
    EXPECT_TRUE(q.operands()[1].broadcast);
    // And for CUDA.
    EXPECT_NE(p.compile(32, Device::CUDA).assembly().find(".entry"), std::string::npos);
    EXPECT_TRUE(test::throws_with<ShapeError>(
        [] { dsl::sddmm_program({BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst}, {8}, {8}); }, {"dot"}));
    EXPECT_TRUE(test::throws_with<ShapeError>(
        [] { dsl::spmm_program({BinaryOp::Mul, ReduceOp::Sum}, {3, 4}, {2, 1}); }, {"3", "2"}));
}

}  // namespace
}  // namespace gsparse
