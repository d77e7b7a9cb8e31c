// The default selector's sweep data as cost-model records (autotune/sweep_data.h): one record per
// graph, feature length and point, features from the stored statistics, errors naming the field; and
// the committed zoo data reads in full.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "autotune/features.h"
#include "autotune/sweep_data.h"
#include "core/error.h"
#include "ops/broadcast.h"
#include "schedules/schedule.h"

namespace gsparse::autotune {
namespace {

std::string write_temp(const std::string &name, const std::string &text) {
    auto dir = std::filesystem::temp_directory_path() /
               ("gsparse_sweep_data_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir);
    auto p = dir / name;
    std::ofstream(p) << text;
    return p.string();
}

const char *kStats =
    R"("stats": {"num_dst": 1000, "num_src": 2000, "edges": 8000, "avg_in_degree": 8, "max_in_degree": 90,
                 "in_degree_cov": 1.5, "empty_rows": 12, "empty_row_share": 0.012, "avg_out_degree": 4,
                 "max_out_degree": 30, "out_degree_cov": 0.7, "empty_cols": 5, "empty_col_share": 0.0025,
                 "square": false})";

std::string sweep_data(const std::string &op, const std::string &stats, const std::string &cases) {
    return R"({"device": "cuda:TEST GPU", "op": ")" + op + R"(", "graphs": {"bip-a": {"split": "train",
             "family": "bipartite", )" + stats + R"(}}, "cases": )" + cases + "}";
}

const char *kCases =
    R"([{"graph": "bip-a", "feat": 8, "default": "x", "times": {
          "gpu_spmm{kMTile=4, kNRegTile=1, kNTile=8, kNnzLanes=1, kNnzTile=16, kNnzUnroll=1, kRowSplit=0, kSrcTile=0, kVecWidth=1, rowBalance=0, smemColIdx=0}": 0.5,
          "gpu_spmm{kMTile=32, kNRegTile=1, kNTile=1, kNnzLanes=8, kNnzTile=16, kNnzUnroll=1, kRowSplit=0, kSrcTile=0, kVecWidth=1, rowBalance=0, smemColIdx=0}": 0.25}},
        {"graph": "bip-a", "feat": 64, "times": {
          "gpu_spmm{kMTile=4, kNRegTile=2, kNTile=16, kNnzLanes=1, kNnzTile=16, kNnzUnroll=1, kRowSplit=256, kSrcTile=0, kVecWidth=2, rowBalance=1, smemColIdx=0}": 1.5}}])";

TEST(SweepData, OneRecordPerGraphFeatureLengthAndPoint) {
    std::vector<SweepDataGraph> graphs;
    auto records = records_from_sweep_data(write_temp("d.json", sweep_data("spmm copy_u_sum", kStats, kCases)), &graphs);
    ASSERT_EQ(records.size(), 3u);
    ASSERT_EQ(graphs.size(), 1u);
    EXPECT_EQ(graphs[0].name, "bip-a");
    EXPECT_EQ(graphs[0].split, "train");
    EXPECT_EQ(graphs[0].family, "bipartite");
    GraphStats stats;
    stats.num_rows = 1000;
    stats.num_cols = 2000;
    stats.nnz = 8000;
    stats.avg_row_length = 8.0;
    stats.max_row_length = 90;
    stats.empty_rows = 12;
    stats.row_length_cov = 1.5;
    stats.max_col_length = 30;
    stats.empty_cols = 5;
    stats.col_length_cov = 0.7;
    const SpmmSpec spec{BinaryOp::CopyLhs, ReduceOp::Sum};
    std::set<double> times;
    for (const auto &r : records) {
        EXPECT_EQ(r.device, "cuda:TEST GPU");
        EXPECT_EQ(r.op, "spmm copy_u_sum");
        EXPECT_EQ(r.graph, "bip-a");
        EXPECT_EQ(r.graph_fingerprint, records[0].graph_fingerprint);
        EXPECT_EQ(r.schedule.schedule, "gpu_spmm");
        times.insert(r.time_ms);
        // The features of the point on a graph with these statistics, as the tuner computes them.
        const Problem p = spmm_problem(spec, plan_features(spec.op, {r.feat}, {r.feat}), stats);
        EXPECT_EQ(r.features, candidate_features(p, true, r.schedule)) << r.schedule.str();
    }
    EXPECT_EQ(times, (std::set<double>{0.25, 0.5, 1.5}));
    EXPECT_EQ(records[2].feat, 64);
    EXPECT_EQ(records[2].schedule.get("kVecWidth"), 2);
    // Feature lengths change the features of one point.
    EXPECT_NE(records[0].features, records[2].features);
}

std::string error_of(const std::string &text) {
    try {
        records_from_sweep_data(write_temp("bad.json", text));
    } catch (const Error &e) {
        return e.what();
    }
    return "no error";
}

TEST(SweepData, ErrorsNameTheProblem) {
    EXPECT_NE(error_of("{not json").find("malformed JSON"), std::string::npos);
    EXPECT_NE(error_of(sweep_data("sddmm u_dot_v", kStats, kCases)).find("not a g-SpMM operator"), std::string::npos);
    EXPECT_NE(error_of(sweep_data("spmm u_frob_e_sum", kStats, kCases)).find("unknown g-SpMM operator 'u_frob_e_sum'"),
              std::string::npos);
    EXPECT_NE(error_of(sweep_data("spmm copy_u_sum", R"("stats": {"num_dst": 3})", kCases)).find("'num_src'"),
              std::string::npos);
    EXPECT_NE(error_of(sweep_data("spmm copy_u_sum", kStats, R"([{"graph": "other", "feat": 8, "times": {}}])"))
                  .find("graph 'other' is not in 'graphs'"),
              std::string::npos);
    EXPECT_NE(error_of(sweep_data("spmm copy_u_sum", kStats, R"([{"graph": "bip-a", "feat": 0, "times": {}}])"))
                  .find("not a feature length"),
              std::string::npos);
    EXPECT_NE(error_of(sweep_data("spmm copy_u_sum", kStats,
                                  R"([{"graph": "bip-a", "feat": 8, "times": {"gpu_spmm{kMTile=4}": -1}}])"))
                  .find("not a positive number"),
              std::string::npos);
    // A longest row beyond the edge count is no graph's statistics.
    std::string stats = kStats;
    stats.replace(stats.find("\"max_in_degree\": 90"), 19, "\"max_in_degree\": 9000");
    EXPECT_NE(error_of(sweep_data("spmm copy_u_sum", stats, kCases)).find("inconsistent statistics"), std::string::npos);
    EXPECT_NE(error_of("{}").find("'device'"), std::string::npos);
}

TEST(SweepData, TheCommittedZooDataReads) {
    const std::string path = std::string(GSPARSE_SOURCE_DIR) + "/autotune/selector/data/h100-zoo-train-2026-11-26.json.gz";
    std::vector<SweepDataGraph> graphs;
    const auto records = records_from_sweep_data(path, &graphs);
    EXPECT_EQ(graphs.size(), 24u);
    for (const auto &g : graphs) EXPECT_EQ(g.split, "train") << g.name;
    EXPECT_GT(records.size(), 40000u);
    for (const auto &r : records) ASSERT_EQ(r.features.size(), feature_names().size());
}

}  // namespace
}  // namespace gsparse::autotune
