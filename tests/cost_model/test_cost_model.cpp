// The cost model: Pearson correlation, training on a synthetic ranking with graphs held out, save /
// load, and the errors for bad input. Training tests skip when gsparse is built without LibTorch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "autotune/cost_model.h"
#include "autotune/features.h"
#include "core/error.h"
#include "ops/broadcast.h"
#include "schedules/schedule.h"

namespace gsparse::autotune {
namespace {

TEST(Pearson, KnownValues) {
    EXPECT_NEAR(pearson({1, 2, 3, 4}, {2, 4, 6, 8}), 1.0, 1e-12);
    EXPECT_NEAR(pearson({1, 2, 3, 4}, {8, 6, 4, 2}), -1.0, 1e-12);
    // sxy = 6, sxx = 10, syy = 6: r = 6 / sqrt(60)
    EXPECT_NEAR(pearson({1, 2, 3, 4, 5}, {2, 4, 5, 4, 5}), 6 / std::sqrt(60.0), 1e-12);
    EXPECT_NEAR(pearson({1, 2, 3}, {1, 3, 2}), 0.5, 1e-12);
    EXPECT_EQ(pearson({1, 1, 1}, {1, 2, 3}), 0.0);  // constant input
    EXPECT_EQ(pearson({1}, {2}), 0.0);
    EXPECT_EQ(pearson({}, {}), 0.0);
    EXPECT_THROW(pearson({1, 2}, {1, 2, 3}), Error);
}

std::string temp_prefix(const std::string &name) {
    auto dir = std::filesystem::temp_directory_path() /
               ("gsparse_cost_model_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir);
    return (dir / name).string();
}

size_t feature_index(const std::string &name) {
    const auto &names = feature_names();
    for (size_t i = 0; i < names.size(); i++)
        if (names[i] == name) return i;
    ADD_FAILURE() << "no feature " << name;
    return 0;
}

/// Records of gpu_spmm candidates on synthetic graphs "g0".."g{n-1}" whose log time is a fixed
/// function of a few features, plus a per-problem offset and noise.
std::vector<MeasurementRecord> synthetic_records(int graphs, int points_per_problem, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u01(0, 1);
    std::normal_distribution<double> noise(0, 0.05);
    const SpmmScheduleDef def = spmm_schedule("gpu_spmm");
    const size_t i_pen = feature_index("gpu_block_size_penalty"), i_mem = feature_index("gpu_mem_efficiency"),
                 i_waves = feature_index("gpu_waves"), i_intra = feature_index("gpu_intra_block_imbalance"),
                 i_tile = feature_index("gpu_smem_tile_waste");
    std::vector<MeasurementRecord> out;
    for (int g = 0; g < graphs; g++) {
        GraphStats s;
        s.num_rows = s.num_cols = static_cast<int64_t>(std::exp(std::log(2e3) + u01(rng) * std::log(500.0)));
        s.avg_row_length = std::exp(std::log(2.0) + u01(rng) * std::log(100.0));
        s.nnz = static_cast<int64_t>(s.avg_row_length * s.num_rows);
        s.max_row_length = static_cast<int64_t>(s.avg_row_length * (4 + 200 * u01(rng)));
        s.row_length_cov = 0.3 + 3 * u01(rng);
        for (int64_t feat : {16, 64, 256}) {
            Problem p{plan_features(BinaryOp::CopyLhs, {feat}, {feat}), s};
            // Distinct valid points drawn at random (the space has far more points than a test needs).
            ScheduleSpace space = def.space(p);
            std::uniform_int_distribution<size_t> pick(0, space.size() - 1);
            std::set<size_t> seen;
            std::vector<ScheduleParams> valid;
            for (int tries = 0; static_cast<int>(valid.size()) < points_per_problem && tries < 100 * points_per_problem;
                 tries++) {
                const size_t i = pick(rng);
                if (!seen.insert(i).second) continue;
                ScheduleParams pt = space.at(i);
                if (!def.invalid_reason(pt, p)) valid.push_back(std::move(pt));
            }
            const double offset = 3 * u01(rng);
            for (const auto &pt : valid) {
                MeasurementRecord r;
                r.features = candidate_features(p, true, pt);
                const auto &f = r.features;
                double log_t = offset + 0.8 * std::log1p(f[i_pen]) - 2.0 * std::log1p(f[i_mem]) +
                               0.5 * std::log1p(f[i_waves]) + 0.4 * std::log1p(f[i_intra]) +
                               0.6 * f[i_tile] + noise(rng);
                r.time_ms = std::exp(log_t);
                r.schedule = pt;
                r.device = "synthetic";
                r.op = "spmm copy_u_sum";
                r.graph = "g" + std::to_string(g);
                r.graph_fingerprint = 1000 + g;
                r.feat = feat;
                out.push_back(std::move(r));
            }
        }
    }
    return out;
}

std::vector<std::vector<float>> features_of(const std::vector<MeasurementRecord> &records) {
    std::vector<std::vector<float>> f;
    for (const auto &r : records) f.push_back(r.features);
    return f;
}

#define REQUIRE_TORCH() \
    if (!CostModel::available()) GTEST_SKIP() << "gsparse was built without LibTorch"

TEST(CostModel, LearnsASyntheticRankingOnHeldOutGraphs) {
    REQUIRE_TORCH();
    auto records = synthetic_records(8, 100, 11);
    TrainOptions o;
    o.epochs = 60;
    o.seed = 3;
    o.holdout_graphs = {"g6", "g7"};
    TrainReport rep;
    CostModel m = CostModel::train(records, o, &rep);
    EXPECT_EQ(rep.groups_train, 18u);
    EXPECT_EQ(rep.groups_holdout, 6u);
    EXPECT_EQ(rep.n_train + rep.n_holdout + rep.n_dropped, records.size());
    EXPECT_EQ(rep.holdout_graphs, (std::vector<std::string>{"g6", "g7"}));
    EXPECT_EQ(rep.epochs, 60);
    EXPECT_TRUE(std::isfinite(rep.final_loss));
    std::printf("pearson train %.4f, holdout %.4f (%zu / %zu records)\n", rep.pearson_train, rep.pearson_holdout,
                rep.n_train, rep.n_holdout);
    EXPECT_GT(rep.pearson_train, 0.9);
    EXPECT_GT(rep.pearson_holdout, 0.8);

    // Lower prediction = faster: the predicted fastest candidate of a held-out problem is among the
    // truly fast ones.
    std::vector<MeasurementRecord> problem;
    for (const auto &r : records)
        if (r.graph == "g7" && r.feat == 64) problem.push_back(r);
    ASSERT_GT(problem.size(), 10u);
    auto order = m.rank(features_of(problem));
    ASSERT_EQ(order.size(), problem.size());
    std::vector<double> times;
    for (const auto &r : problem) times.push_back(r.time_ms);
    std::sort(times.begin(), times.end());
    EXPECT_LE(problem[order.front()].time_ms, times[times.size() / 4]);
}

TEST(CostModel, TrainingIsDeterministicForASeed) {
    REQUIRE_TORCH();
    auto records = synthetic_records(3, 40, 5);
    TrainOptions o;
    o.epochs = 5;
    o.holdout_fraction = 0.3;
    TrainReport r1, r2;
    CostModel a = CostModel::train(records, o, &r1), b = CostModel::train(records, o, &r2);
    EXPECT_EQ(a.predict(features_of(records)), b.predict(features_of(records)));
    EXPECT_EQ(r1.n_holdout, r2.n_holdout);
    EXPECT_GT(r1.groups_holdout, 0u);
    EXPECT_EQ(r1.groups_train + r1.groups_holdout, 9u);
}

TEST(CostModel, SaveLoadRoundTripPredictsTheSame) {
    REQUIRE_TORCH();
    auto records = synthetic_records(3, 40, 9);
    TrainOptions o;
    o.epochs = 5;
    TrainReport rep;
    CostModel m = CostModel::train(records, o, &rep);
    EXPECT_EQ(rep.n_holdout, 0u);
    EXPECT_TRUE(std::isnan(rep.pearson_holdout));
    const std::string prefix = temp_prefix("model");
    m.save(prefix);
    EXPECT_TRUE(std::filesystem::exists(prefix + ".pt"));
    EXPECT_TRUE(std::filesystem::exists(prefix + ".json"));
    for (const std::string &path : {prefix, prefix + ".pt", prefix + ".json"}) {
        CostModel back = CostModel::load(path);
        EXPECT_EQ(back.feature_names(), feature_names());
        auto f = features_of(records);
        auto p1 = m.predict(f), p2 = back.predict(f);
        ASSERT_EQ(p1.size(), p2.size());
        for (size_t i = 0; i < p1.size(); i++) EXPECT_NEAR(p1[i], p2[i], 1e-6 * (1 + std::fabs(p1[i])));
        EXPECT_EQ(back.report().n_train, rep.n_train);
        EXPECT_NEAR(back.report().pearson_train, rep.pearson_train, 1e-12);
    }
    // One vector at a time gives the same as a batch (evaluation-mode batch norm).
    auto one = m.predict({records[3].features});
    EXPECT_NEAR(one[0], m.predict(features_of(records))[3], 1e-5);
}

TEST(CostModel, TrainsOnASubsetOfFeaturesAndKeepsItThroughSaveAndLoad) {
    REQUIRE_TORCH();
    // The synthetic times depend on gpu_* metrics only; a model of those metrics alone (and one
    // shape entry) learns them as well, reads its columns by name, and knows its schedule.
    auto records = synthetic_records(6, 60, 21);
    TrainOptions o;
    o.epochs = 40;
    o.seed = 2;
    o.holdout_graphs = {"g5"};
    o.features = {"gpu_*", "shape_reduce_len"};
    TrainReport rep;
    CostModel m = CostModel::train(records, o, &rep);
    const std::vector<size_t> cols = select_features(o.features);
    ASSERT_EQ(m.feature_names().size(), cols.size());
    for (size_t i = 0; i < cols.size(); i++) EXPECT_EQ(m.feature_names()[i], feature_names()[cols[i]]);
    // In the features' order (gpu_row_tails, appended later, comes after the shape entries).
    const auto &picked = m.feature_names();
    EXPECT_EQ(std::count_if(picked.begin(), picked.end(), [](const std::string &n) { return n.rfind("shape_", 0) == 0; }), 1);
    EXPECT_NE(std::find(picked.begin(), picked.end(), "shape_reduce_len"), picked.end());
    EXPECT_GT(rep.pearson_holdout, 0.8);
    EXPECT_EQ(rep.schedules, std::vector<std::string>{"gpu_spmm"});
    ASSERT_EQ(rep.holdout_per_problem.size(), 3u);  // g5 at three feature lengths
    for (const auto &[key, r] : rep.holdout_per_problem) {
        EXPECT_NE(key.find("g5"), std::string::npos) << key;
        EXPECT_GT(r, 0.5) << key;
    }
    EXPECT_TRUE(m.knows_schedule("gpu_spmm"));
    EXPECT_FALSE(m.knows_schedule("gpu_sddmm"));

    // Entries outside the model's inputs do not change its predictions.
    auto f = features_of(records);
    auto noisy = f;
    const auto &names = feature_names();
    const size_t other = size_t(std::find(names.begin(), names.end(), "shape_rows") - names.begin());
    for (auto &v : noisy) v[other] *= 7;
    EXPECT_EQ(m.predict(f), m.predict(noisy));

    const std::string prefix = temp_prefix("subset");
    m.save(prefix);
    CostModel back = CostModel::load(prefix);
    EXPECT_EQ(back.feature_names(), m.feature_names());
    EXPECT_EQ(back.report().schedules, rep.schedules);
    EXPECT_EQ(back.report().holdout_per_problem.size(), 3u);
    auto p1 = m.predict(f), p2 = back.predict(f);
    for (size_t i = 0; i < p1.size(); i++) EXPECT_NEAR(p1[i], p2[i], 1e-6 * (1 + std::fabs(p1[i])));

    o.features = {"no_such_feature*"};
    try {
        CostModel::train(records, o);
        FAIL() << "trained on a pattern that names no feature";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("no_such_feature*"), std::string::npos) << e.what();
    }
}

TEST(CostModel, LoadRejectsOtherFeaturesAndMissingFiles) {
    REQUIRE_TORCH();
    auto records = synthetic_records(2, 20, 4);
    TrainOptions o;
    o.epochs = 2;
    CostModel m = CostModel::train(records, o);
    const std::string prefix = temp_prefix("model");
    m.save(prefix);
    nlohmann::json j;
    std::ifstream(prefix + ".json") >> j;
    j["feature_names"][5] = "renamed_feature";
    std::ofstream(prefix + ".json") << j.dump();
    try {
        CostModel::load(prefix);
        FAIL() << "load accepted other feature names";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("renamed_feature"), std::string::npos) << e.what();
    }
    j["feature_names"].erase(5);
    std::ofstream(prefix + ".json") << j.dump();
    try {
        CostModel::load(prefix);
        FAIL() << "load accepted parameters of more features than its sidecar lists";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("do not match its sidecar"), std::string::npos) << e.what();
    }
    EXPECT_THROW(CostModel::load(temp_prefix("absent")), Error);
    std::filesystem::remove(prefix + ".pt");
    m.save(prefix);
    std::filesystem::remove(prefix + ".pt");
    EXPECT_THROW(CostModel::load(prefix), Error);
    EXPECT_THROW(m.save("/nonexistent/dir/model"), Error);
}

TEST(CostModel, BadInputThrows) {
    REQUIRE_TORCH();
    TrainOptions o;
    o.epochs = 1;
    EXPECT_THROW(CostModel::train({}, o), Error);
    auto records = synthetic_records(2, 10, 1);
    auto bad = records;
    bad[4].features.pop_back();
    EXPECT_THROW(CostModel::train(bad, o), Error);
    TrainOptions both = o;
    both.holdout_fraction = 0.2;
    both.holdout_graphs = {"g0"};
    EXPECT_THROW(CostModel::train(records, both), Error);
    TrainOptions unknown = o;
    unknown.holdout_graphs = {"nope"};
    EXPECT_THROW(CostModel::train(records, unknown), Error);
    TrainOptions all = o;
    all.holdout_graphs = {"g0", "g1"};
    EXPECT_THROW(CostModel::train(records, all), Error);

    CostModel m = CostModel::train(records, o);
    EXPECT_THROW(m.predict({std::vector<float>(3, 0.0f)}), Error);
    EXPECT_TRUE(m.predict({}).empty());
    EXPECT_THROW(CostModel().predict({records[0].features}), Error);
}

TEST(CostModel, WithoutLibTorchTrainAndLoadExplain) {
    if (CostModel::available()) GTEST_SKIP() << "built with LibTorch";
    try {
        CostModel::train(synthetic_records(1, 5, 1), TrainOptions{});
        FAIL();
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("without LibTorch"), std::string::npos);
    }
    EXPECT_THROW(CostModel::load("/tmp/none"), Error);
}

}  // namespace
}  // namespace gsparse::autotune
