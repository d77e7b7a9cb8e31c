// The cost models shipped in autotune/models load in this build, rank their schedule's space, and
// reproduce their held-out Pearson on the shipped records of the twin they did not train on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "autotune/cost_model.h"
#include "autotune/features.h"
#include "autotune/records.h"
#include "autotune/search_space.h"
#include "support/random_graph.h"

namespace gsparse::autotune {
namespace {

std::string source_path(const std::string &rel) { return std::string(GSPARSE_SOURCE_DIR) + "/" + rel; }

/// Per-problem centred Pearson of the model's predictions on a records file (features recomputed
/// from each record's shape, as gsparse-train-cost-model does).
/// Pooled per-problem-centred Pearson over the records of the files whose graph name contains
/// `graph` (all records when empty).
double held_out_pearson(const CostModel &model, const std::vector<std::string> &records_files,
                        const std::string &graph = "") {
    std::vector<MeasurementRecord> records;
    for (const auto &file : records_files)
        for (MeasurementRecord &r : read_records(source_path(file)))
            if (graph.empty() || r.graph.find(graph) != std::string::npos) records.push_back(std::move(r));
    EXPECT_GT(records.size(), 20u);
    std::vector<std::vector<float>> features;
    for (auto &r : records) features.push_back(refresh_features(r.features, r.schedule));
    const std::vector<double> pred = model.predict(features);
    std::map<std::string, std::vector<size_t>> groups;
    for (size_t i = 0; i < records.size(); i++) groups[problem_key(records[i])].push_back(i);
    std::vector<double> x, y;
    for (const auto &[key, members] : groups) {
        double mp = 0, mt = 0;
        for (size_t i : members) mp += pred[i], mt += std::log(records[i].time_ms);
        mp /= double(members.size());
        mt /= double(members.size());
        for (size_t i : members) x.push_back(pred[i] - mp), y.push_back(std::log(records[i].time_ms) - mt);
    }
    return pearson(x, y);
}

TuningProblem gpu_problem(OpKind kind) {
    TuningProblem p;
    p.kind = kind;
    p.device = Device::CUDA;  // features only: nothing is allocated or run
    p.graph = test::random_graph(3);
    p.lhs_feat = p.rhs_feat = {64};
    p.sddmm = {BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst};
    p.plan_layout();
    return p;
}

void expect_ranks_its_space(const CostModel &model, const TuningProblem &p) {
    SearchSpace space = build_search_space(p);
    ASSERT_GT(space.valid.size(), 10u);
    std::vector<std::vector<float>> features;
    for (size_t i = 0; i < 50; i++) features.push_back(candidate_features(p, space.valid[i * space.valid.size() / 50]));
    std::vector<double> scores = model.predict(features);
    ASSERT_EQ(scores.size(), features.size());
    double lo = scores[0], hi = scores[0];
    for (double s : scores) {
        EXPECT_TRUE(std::isfinite(s));
        lo = std::min(lo, s);
        hi = std::max(hi, s);
    }
    EXPECT_LT(lo, hi);  // it tells points apart
}

TEST(ShippedModel, SpmmLoadsRanksAndKeepsItsHeldOutScore) {
    if (!CostModel::available()) GTEST_SKIP() << "built without LibTorch";
    CostModel model = CostModel::load(source_path("autotune/models/h100_spmm"));
    const auto &names = feature_names();
    for (const auto &n : model.feature_names())
        EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
    // Its inputs: every feature, the row-length metrics and graph shape included (trained on the
    // graph zoo's 24 training graphs and the three twins: autotune/models/README.md), except
    // gpu_row_tails, appended after it was trained (its records hold no row-tail points).
    std::vector<std::string> trained_on;
    for (const auto &n : names)
        if (n != "gpu_row_tails") trained_on.push_back(n);
    EXPECT_EQ(model.feature_names(), trained_on);
    EXPECT_TRUE(model.knows_schedule("gpu_spmm"));
    EXPECT_FALSE(model.knows_schedule("gpu_sddmm"));
    expect_ranks_its_space(model, gpu_problem(OpKind::Spmm));
    // ogbn-proteins was held out; its sidecar reports the Pearson on its records in the training
    // command's twin files (the exhaustive sweeps at F = 8 to 512 and the tunes).
    std::vector<std::string> files;
    for (const auto &entry : std::filesystem::directory_iterator(source_path("autotune/models/records"))) {
        const std::string name = entry.path().filename().string();
        if (name.find("spmm") != std::string::npos) files.push_back("autotune/models/records/" + name);
    }
    ASSERT_EQ(files.size(), 20u);
    const double r = held_out_pearson(model, files, "ogbn-proteins");
    EXPECT_NEAR(r, model.report().pearson_holdout, 1e-3);
    EXPECT_GE(r, 0.95);
}

TEST(ShippedModel, SddmmLoadsRanksAndKeepsItsHeldOutScore) {
    if (!CostModel::available()) GTEST_SKIP() << "built without LibTorch";
    CostModel model = CostModel::load(source_path("autotune/models/h100_sddmm"));
    // Its inputs: the gpu_sddmm metrics and the feature length, no graph-level shape entries.
    for (const auto &n : model.feature_names())
        EXPECT_TRUE(n.rfind("sddmm_", 0) == 0 || n == "sched_gpu_sddmm" || n == "shape_reduce_len") << n;
    EXPECT_TRUE(model.knows_schedule("gpu_sddmm"));
    EXPECT_FALSE(model.knows_schedule("gpu_spmm"));
    expect_ranks_its_space(model, gpu_problem(OpKind::Sddmm));
    // ogbn-proteins was held out (F = 8, 32, 128 and 256).
    const double r = held_out_pearson(model, {"autotune/models/records/h100_proteins_sddmm_random_2026-11-22b.jsonl.gz"});
    EXPECT_NEAR(r, model.report().pearson_holdout, 1e-3);
    EXPECT_GE(r, 0.9);
}

}  // namespace
}  // namespace gsparse::autotune
