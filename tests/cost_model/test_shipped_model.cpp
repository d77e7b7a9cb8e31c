// The cost model shipped in autotune/models loads in this build and ranks a gpu_spmm space.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "autotune/cost_model.h"
#include "autotune/features.h"
#include "autotune/search_space.h"
#include "support/random_graph.h"

namespace gsparse::autotune {
namespace {

TEST(ShippedModel, LoadsAndRanksAGpuSpace) {
    if (!CostModel::available()) GTEST_SKIP() << "built without LibTorch";
    CostModel model = CostModel::load(std::string(GSPARSE_SOURCE_DIR) + "/autotune/models/h100_spmm");
    // The model reads its features by name: features appended after it was trained (the last
    // gpu_sddmm metrics) leave it usable.
    const auto &names = feature_names();
    EXPECT_LT(model.feature_names().size(), names.size());
    for (const auto &n : model.feature_names())
        EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
    TuningProblem p;
    p.device = Device::CUDA;  // features only: nothing is allocated or run
    p.graph = test::random_graph(3);
    p.lhs_feat = p.rhs_feat = {64};
    p.layout = plan_features(BinaryOp::CopyLhs, {64}, {64});
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

}  // namespace
}  // namespace gsparse::autotune
