// The C++ API rejects mismatched shapes, dtypes, ops and schedules with errors naming the problem.
#include <gtest/gtest.h>

#include "api/gsparse.h"
#include "support/compare.h"
#include "support/random_graph.h"

namespace gsparse {
namespace {

template <typename E, typename F>
void expect_error(F &&f, const std::string &needle) {
    try {
        f();
        ADD_FAILURE() << "expected an error containing '" << needle << "'";
    } catch (const E &e) {
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
}

class ApiErrors : public ::testing::Test {
protected:
    Graph g = test::random_graph(21);
    Tensor x = test::random_tensor({g.num_src(), 8}, 22);
    Tensor w = test::random_tensor({g.num_edges(), 8}, 23);
};

TEST_F(ApiErrors, WrongRowCounts) {
    Tensor bad = test::random_tensor({g.num_src() + 1, 8}, 1);
    expect_error<ShapeError>([&] { gspmm(g, "copy_lhs", "sum", bad, {}); }, std::to_string(g.num_src()) + " rows");
    Tensor bad_e = test::random_tensor({g.num_edges() - 1, 8}, 1);
    expect_error<ShapeError>([&] { gspmm(g, "mul", "sum", x, bad_e); }, "edges");
    expect_error<ShapeError>([&] { gsddmm(g, "dot", x, bad_e, "u", "e"); }, "edges");
}

TEST_F(ApiErrors, MissingOperand) {
    expect_error<ShapeError>([&] { gspmm(g, "mul", "sum", x, Tensor()); }, "undefined");
    expect_error<ShapeError>([&] { gspmm(g, "copy_rhs", "sum", x, Tensor()); }, "rhs");
}

TEST_F(ApiErrors, ShapesThatDoNotBroadcast) {
    Tensor w3 = test::random_tensor({g.num_edges(), 3}, 2);
    expect_error<ShapeError>([&] { gspmm(g, "add", "sum", x, w3); }, "do not broadcast");
}

TEST_F(ApiErrors, DtypeMismatchAndUnsupportedDtype) {
    Tensor wd = test::random_tensor({g.num_edges(), 8}, 3, DType::F64);
    expect_error<ShapeError>([&] { gspmm(g, "mul", "sum", x, wd); }, "different dtypes");
    Tensor xi = Tensor::zeros({g.num_src(), 8}, DType::I32);
    expect_error<ShapeError>([&] { gspmm(g, "copy_lhs", "sum", xi, {}); }, "i32");
}

TEST_F(ApiErrors, UnknownOpsAndDotInSpmm) {
    expect_error<ShapeError>([&] { gspmm(g, "pow", "sum", x, w); }, "unknown binary op 'pow'");
    expect_error<ShapeError>([&] { gspmm(g, "mul", "prod", x, w); }, "unknown reduce op 'prod'");
    expect_error<ShapeError>([&] { gspmm(g, "dot", "sum", x, w); }, "dot");
    expect_error<ShapeError>([&] { gsddmm(g, "dot", x, x, "u", "w"); }, "unknown operand target 'w'");
}

TEST_F(ApiErrors, WrongOutputTensors) {
    SpmmSpec spec{BinaryOp::CopyLhs, ReduceOp::Max};
    Tensor out = Tensor::empty({g.num_dst(), 8}, DType::F32);
    expect_error<ShapeError>([&] { gspmm_into(g, spec, x, {}, out); }, "arg_u");
    Tensor small = Tensor::empty({g.num_dst(), 7}, DType::F32);
    expect_error<ShapeError>([&] { gspmm_into(g, SpmmSpec{}, x, {}, small); }, "must be f32[");
}

TEST_F(ApiErrors, InvalidSchedules) {
    OpOptions o;
    o.schedule = ScheduleParams::parse("cpu_spmm{rows_per_task=4, vector_width=16}");  // 16 > F = 8
    expect_error<ScheduleError>([&] { gspmm(g, "copy_lhs", "sum", x, {}, o); }, "exceeds the innermost feature extent");
    o.schedule = ScheduleParams::parse("cpu_spmm{rows_per_task=4, vector_width=3}");
    expect_error<ScheduleError>([&] { gspmm(g, "copy_lhs", "sum", x, {}, o); }, "power of two");
    o.schedule = ScheduleParams::parse("cpu_spmm{rows_per_task=0, vector_width=4}");
    expect_error<ScheduleError>([&] { gspmm(g, "copy_lhs", "sum", x, {}, o); }, "rows_per_task");
    o.schedule = ScheduleParams::parse("cpu_spmm{vector_width=4}");
    expect_error<ScheduleError>([&] { gspmm(g, "copy_lhs", "sum", x, {}, o); }, "missing parameter 'rows_per_task'");
    o.schedule = ScheduleParams::parse("cpu_spmm{rows_per_task=4, vector_width=4, unroll=2}");
    expect_error<ScheduleError>([&] { gspmm(g, "copy_lhs", "sum", x, {}, o); }, "no parameter 'unroll'");
    o.schedule = ScheduleParams::parse("gpu_magic{a=1}");
    expect_error<ScheduleError>([&] { gspmm(g, "copy_lhs", "sum", x, {}, o); }, "unknown g-SpMM schedule 'gpu_magic'");
    o.schedule = ScheduleParams::parse("cpu_sddmm{vector_width=4, edges_per_task=64}");
    expect_error<ScheduleError>([&] { gspmm(g, "copy_lhs", "sum", x, {}, o); }, "unknown g-SpMM schedule");
    expect_error<ScheduleError>([] { ScheduleParams::parse("cpu_spmm{vector_width=four}"); }, "non-integer");
}

TEST_F(ApiErrors, NullDataForNonEmptyTensor) {
    expect_error<ShapeError>([&] { Tensor::wrap(nullptr, {3, 4}, DType::F32); }, "null data pointer");
}

TEST_F(ApiErrors, DefaultSchedulesFromFeatureShapesMatchTheTensorForm) {
    // gspmm_default_schedule from feature shapes (what gsparse-tune --show-default prints) is the
    // tensor form's choice, on both devices; shapes that do not broadcast are refused by name.
    Tensor x1 = test::random_tensor({g.num_src(), 1}, 24), w1 = test::random_tensor({g.num_edges(), 1}, 25);
    for (Device d : {Device::CPU, Device::CUDA}) {
        for (const auto &[spec, lhs, rhs] : {std::tuple{SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Sum}, x, Tensor()},
                                             std::tuple{SpmmSpec{BinaryOp::Mul, ReduceOp::Mean}, x, w1},
                                             std::tuple{SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Max}, x1, Tensor()}}) {
            const std::vector<int64_t> lf(lhs.shape().begin() + 1, lhs.shape().end());
            const std::vector<int64_t> rf = rhs.defined() ? std::vector<int64_t>(rhs.shape().begin() + 1, rhs.shape().end())
                                                          : std::vector<int64_t>{};
            EXPECT_EQ(gspmm_default_schedule(g, spec, lf, rf, DType::F32, d), gspmm_default_schedule(g, spec, lhs, rhs, d))
                << spec.name() << " " << device_name(d);
        }
        const ScheduleParams sd = gsddmm_default_schedule(g, SddmmSpec{}, {8}, {8}, DType::F32, d);
        EXPECT_EQ(sd.schedule, d == Device::CUDA ? "gpu_sddmm" : "cpu_sddmm") << sd.str();
    }
    expect_error<ShapeError>([&] { gspmm_default_schedule(g, SpmmSpec{BinaryOp::Add}, {8}, {3}, DType::F32, Device::CPU); },
                             "do not broadcast");
}

TEST(Api, WrapsCallerMemoryWithoutCopies) {
    Graph g = Graph::from_edges(3, {0, 1, 2, 2}, {1, 2, 0, 1});
    std::vector<float> x = {1, 10, 2, 20, 3, 30};  // 3 nodes x 2 features
    std::vector<float> out(6, -1.0f);
    Tensor xt = Tensor::wrap(x.data(), {3, 2}, DType::F32);
    Tensor ot = Tensor::wrap(out.data(), {3, 2}, DType::F32);
    gspmm_into(g, SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Sum}, xt, {}, ot);
    // node 0 <- 2; node 1 <- 0, 2; node 2 <- 1
    EXPECT_EQ(out, (std::vector<float>{3, 30, 4, 40, 2, 20}));
}

}  // namespace
}  // namespace gsparse
