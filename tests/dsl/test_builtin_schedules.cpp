// The built-in CUDA g-SpMM schedule written with the public directives (dsl/builtin_schedules.h)
// against the built-in schedule itself, without a GPU: at the points the built-in operator takes by
// default on graphs of several shapes (skewed rows, rows of varying length, short even rows, long
// skewed rows) and feature lengths 1, 32 and 128 (copy_lhs and u_mul_e), every point the port
// expresses compiles to PTX of the same form as the built-in kernel (the same number of kernels;
// warp shuffles, barriers and shared memory, 128-bit and 64-bit loads exactly where the built-in has
// them); the points it does not express are refused by name.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "dsl/builtin_programs.h"
#include "dsl/builtin_schedules.h"
#include "ops/spmm_algorithm.h"
#include "runtime/target.h"
#include "schedules/schedule.h"
#include "support/text_count.h"
#include "support/throws_with.h"

namespace gsparse {
namespace {

using test::count_of;

GraphStats stats(int64_t rows, int64_t nnz, int64_t longest, double cov) {
    GraphStats s;
    s.num_rows = s.num_cols = rows;
    s.nnz = nnz;
    s.avg_row_length = static_cast<double>(nnz) / static_cast<double>(rows);
    s.max_row_length = longest;
    s.row_length_cov = cov;
    return s;
}

/// The built-in kernel's PTX at point p (copy_lhs or u_mul_e + sum, F features in one dimension).
std::string builtin_ptx(const SpmmSpec &spec, int64_t F, const ScheduleParams &p, const Problem &problem) {
    const SpmmScheduleDef &def = spmm_schedule("gpu_spmm");
    check_schedule(def, p, problem);
    SpmmAlgorithm a = build_spmm_algorithm(spec, problem.layout, DType::F32, false);
    def.apply(a, p);
    Halide::Pipeline pipeline(a.out);
    for (const auto &pass : a.lowering_passes) pipeline.add_custom_lowering_pass(pass.get(), nullptr);
    Halide::Target t = jit_target(Device::CUDA);
    if (!a.large_buffers) t = t.without_feature(Halide::Target::LargeBuffers);
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("gsparse_builtin_ptx_" + std::to_string(::getpid()) + ".s")).string();
    pipeline.compile_to_assembly(path, a.arguments(), "spmm_ptx", t);
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::filesystem::remove(path);
    return text.str();
}

/// What the form of a kernel shows in its PTX.
struct Form {
    size_t kernels;
    bool shuffles, barriers, shared, v4, v2;
    bool operator==(const Form &o) const {
        return kernels == o.kernels && shuffles == o.shuffles && barriers == o.barriers && shared == o.shared &&
               v4 == o.v4 && v2 == o.v2;
    }
};

Form form_of(const std::string &ptx) {
    return {count_of(ptx, ".entry"), count_of(ptx, "shfl.sync") > 0, count_of(ptx, "bar.sync") > 0,
            count_of(ptx, ".shared") > 0, count_of(ptx, "ld.global.nc.v4.f32") > 0,
            count_of(ptx, "ld.global.nc.v2.f32") > 0};
}

std::string str(const Form &f) {
    return std::to_string(f.kernels) + " kernels" + (f.shuffles ? ", shuffles" : "") + (f.barriers ? ", barriers" : "") +
           (f.shared ? ", shared" : "") + (f.v4 ? ", v4 loads" : "") + (f.v2 ? ", v2 loads" : "");
}

TEST(BuiltinSchedules, DefaultPointsCompileToTheBuiltInForms) {
    // A skewed graph (a row of 20,000 among 100,000 of average 12), rows of varying length without a
    // long one (COV 1.5), short even rows (a lattice, average 3), a skewed graph of long rows (average
    // 150: source tiles and the relabeled graph at F = 1).
    const std::vector<std::pair<const char *, GraphStats>> graphs = {
        {"skewed", stats(100000, 1200000, 20000, 3.0)},
        {"varying", stats(100000, 1200000, 300, 1.5)},
        {"even", stats(100000, 300000, 6, 0.3)},
        {"wide", stats(400000, 60000000, 40000, 3.0)}};
    // (graph, u_mul_e, F): both operators at three F on the skewed graph, a sample elsewhere.
    const std::vector<std::tuple<size_t, bool, int64_t>> cases = {
        {0, false, 1}, {0, false, 32}, {0, false, 128}, {0, true, 1}, {0, true, 32}, {0, true, 128},
        {1, false, 1}, {1, false, 32}, {1, true, 128}, {2, false, 1}, {2, false, 32}, {2, true, 128},
        {3, false, 1}, {3, true, 1}};
    int expressed = 0, refused = 0;
    for (const auto &[gi, edge_weight, F] : cases) {
        const char *gname = graphs[gi].first;
        const GraphStats &st = graphs[gi].second;
        const SpmmSpec spec{edge_weight ? BinaryOp::Mul : BinaryOp::CopyLhs, ReduceOp::Sum};
        const std::vector<int64_t> lf = {F}, rf = edge_weight ? std::vector<int64_t>{1} : std::vector<int64_t>{};
        const FeatureLayout layout = plan_op_features(spec.op, lf, rf);
        const Problem problem = spmm_problem(spec, layout, st);
        const ScheduleParams p = default_spmm_schedule(Device::CUDA).default_params(problem);
        const std::string what = std::string(gname) + " " + spec.name() + " F=" + std::to_string(F) + " " + p.str();
        std::map<std::string, int64_t> point(p.values.begin(), p.values.end());
        if (!point.count("rowTails")) point["rowTails"] = 0;
        if (!point.count("kNnzUnroll")) point["kNnzUnroll"] = 1;
        if (!point.count("kSrcTile")) point["kSrcTile"] = 0;
        dsl::SpmmProgram prog = dsl::spmm_program(spec, lf, rf);
        std::optional<dsl::SpmmKernel> k;
        try {
            k = prog.compile(static_cast<int>(F), Device::CUDA, dsl::builtin_gpu_spmm_schedule(), point);
        } catch (const ScheduleError &e) {
            // Forms the port does not map: ids staged with split rows or source tiles.
            const std::string msg = e.what();
            EXPECT_TRUE(msg.find("does not combine with") != std::string::npos) << what << ": " << msg;
            refused++;
            continue;
        }
        const Form mine = form_of(k->assembly()), theirs = form_of(builtin_ptx(spec, F, p, problem));
        EXPECT_TRUE(mine == theirs) << what << ": user schedule " << str(mine) << ", built-in " << str(theirs);
        expressed++;
    }
    // At this commit every one of the 14 is expressed.
    EXPECT_GE(expressed, 13) << refused << " refused";
}

TEST(BuiltinSchedules, PointsItDoesNotExpressAreRefusedByName) {
    dsl::SpmmProgram p = dsl::spmm_program({BinaryOp::CopyLhs, ReduceOp::Sum}, {32}, {});
    const dsl::ScheduleDef &def = dsl::builtin_gpu_spmm_schedule();
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { p.compile(32, Device::CUDA, def, {{"rowTails", 1}}); }, {"rowTails = 1 cuts rows", "kRowSplit > 0"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { p.compile(32, Device::CUDA, def, {{"rowTails", 1}, {"kRowSplit", 128}, {"rowBalance", 3}}); },
        {"rowTails = 1 takes whole rows in order"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { p.compile(32, Device::CUDA, def, {{"smemColIdx", 1}, {"kRowSplit", 256}}); },
        {"stage_neighbours does not combine with split_rows"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>([&] { p.compile(32, Device::CPU, def); }, {"CUDA schedule"}));
}

}  // namespace
}  // namespace gsparse
