// Broadcasting rules and their canonical form.
#include <gtest/gtest.h>

#include "core/error.h"
#include "ops/broadcast.h"

namespace gsparse {
namespace {

TEST(Broadcast, SameShapeMergesIntoOneDim) {
    FeatureLayout l = plan_features(BinaryOp::Mul, {8, 16}, {8, 16});
    EXPECT_EQ(l.out_shape, (std::vector<int64_t>{8, 16}));
    EXPECT_EQ(l.extents, (std::vector<int64_t>{128}));
    EXPECT_EQ(l.lhs_varies, (std::vector<bool>{true}));
    EXPECT_EQ(l.rhs_varies, (std::vector<bool>{true}));
}

TEST(Broadcast, MultiHeadEdgeScalar) {
    // N x H x F with E x H x 1.
    FeatureLayout l = plan_features(BinaryOp::Mul, {8, 16}, {8, 1});
    EXPECT_EQ(l.out_shape, (std::vector<int64_t>{8, 16}));
    EXPECT_EQ(l.extents, (std::vector<int64_t>{16, 8}));
    EXPECT_EQ(l.lhs_varies, (std::vector<bool>{true, true}));
    EXPECT_EQ(l.rhs_varies, (std::vector<bool>{false, true}));
    EXPECT_EQ(l.lhs_extents(), (std::vector<int64_t>{16, 8}));
    EXPECT_EQ(l.rhs_extents(), (std::vector<int64_t>{1, 8}));
}

TEST(Broadcast, LeftPaddingAndScalar) {
    FeatureLayout l = plan_features(BinaryOp::Add, {3, 5}, {1});
    EXPECT_EQ(l.out_shape, (std::vector<int64_t>{3, 5}));
    EXPECT_EQ(l.extents, (std::vector<int64_t>{15}));
    EXPECT_EQ(l.rhs_extents(), (std::vector<int64_t>{1}));
}

TEST(Broadcast, DotReducesLastDim) {
    FeatureLayout l = plan_features(BinaryOp::Dot, {4, 32}, {4, 32});
    EXPECT_EQ(l.out_shape, (std::vector<int64_t>{4, 1}));
    EXPECT_EQ(l.reduce_len, 32);
    EXPECT_EQ(l.extents, (std::vector<int64_t>{4}));
    EXPECT_EQ(l.lhs_extents(), (std::vector<int64_t>{32, 4}));
}

TEST(Broadcast, DotOfVectorsHasOneScalarPerEdge) {
    FeatureLayout l = plan_features(BinaryOp::Dot, {64}, {64});
    EXPECT_EQ(l.out_shape, (std::vector<int64_t>{1}));
    EXPECT_EQ(l.extents, (std::vector<int64_t>{1}));
    EXPECT_EQ(l.out_len(), 1);
}

TEST(Broadcast, CopyTakesOneOperandShape) {
    EXPECT_EQ(plan_features(BinaryOp::CopyLhs, {2, 7}, {99}).out_shape, (std::vector<int64_t>{2, 7}));
    EXPECT_EQ(plan_features(BinaryOp::CopyRhs, {99}, {5}).out_shape, (std::vector<int64_t>{5}));
}

TEST(Broadcast, KeysDifferByPattern) {
    EXPECT_NE(plan_features(BinaryOp::Mul, {8, 16}, {8, 1}).key(), plan_features(BinaryOp::Mul, {8, 16}, {1, 16}).key());
    EXPECT_EQ(plan_features(BinaryOp::Mul, {128}, {128}).key(), plan_features(BinaryOp::Mul, {8, 16}, {8, 16}).key());
}

TEST(Broadcast, IncompatibleShapesNameBoth) {
    try {
        plan_features(BinaryOp::Add, {4, 6}, {3, 6});
        FAIL() << "expected ShapeError";
    } catch (const ShapeError &e) {
        EXPECT_NE(std::string(e.what()).find("[4, 6]"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("[3, 6]"), std::string::npos) << e.what();
    }
    EXPECT_THROW(plan_features(BinaryOp::Dot, {4, 6}, {4, 5}), ShapeError);
    EXPECT_THROW(plan_features(BinaryOp::Add, {0}, {1}), ShapeError);
}

}  // namespace
}  // namespace gsparse
