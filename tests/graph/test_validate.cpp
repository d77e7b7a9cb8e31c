#include <gtest/gtest.h>

#include <limits>

#include "graph/validate.h"
#include "graph_test_util.h"

namespace gsparse::test {
namespace {

// 4 rows, 5 columns, 6 edges; row 1 empty.
CSR good_csr() { return make_csr(4, 5, {0, 2, 2, 5, 6}, {1, 4, 0, 2, 3, 0}, {5, 0, 3, 1, 4, 2}); }

TEST(ValidateCSR, AcceptsValidGraphs) {
    EXPECT_NO_THROW(validate(good_csr()));
    CSR identity = good_csr();
    identity.edge_ids.clear();
    EXPECT_NO_THROW(validate(identity));
    EXPECT_NO_THROW(validate(make_csr(0, 0, {0}, {})));
    EXPECT_NO_THROW(validate(make_csr(3, 0, {0, 0, 0, 0}, {})));
}

TEST(ValidateCSR, NegativeOrHugeSizes) {
    CSR g = good_csr();
    g.num_rows = -1;
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(g); }, {"num_rows = -1", "negative"}));
    g = good_csr();
    g.num_cols = -7;
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(g); }, {"num_cols = -7", "negative"}));
    g = good_csr();
    g.num_rows = int64_t{1} << 31;
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(g); }, {"num_rows = 2147483648", "INT32_MAX"}));
    g = good_csr();
    g.num_cols = int64_t{3} << 32;
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(g); }, {"num_cols = 12884901888", "INT32_MAX"}));
}

TEST(ValidateCSR, RowPtrWrongSize) {
    CSR g = good_csr();
    g.row_ptr.pop_back();
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(g); },
                                        {"row_ptr has 4 entries", "expected num_rows + 1 = 5"}));
    g = good_csr();
    g.row_ptr.push_back(6);
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(g); }, {"row_ptr has 6 entries"}));
    CSR empty;  // default: no row_ptr at all
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(empty); }, {"row_ptr has 0 entries", "= 1"}));
}

TEST(ValidateCSR, RowPtrNotStartingAtZero) {
    CSR g = good_csr();
    g.row_ptr[0] = 1;
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(g); }, {"row_ptr[0] = 1", "expected 0"}));
}

TEST(ValidateCSR, RowPtrDecreasing) {
    CSR g = good_csr();
    g.row_ptr = {0, 2, 1, 5, 6};
    EXPECT_TRUE(throws_with<GraphError>(
        [&] { validate(g); }, {"CSR row_ptr[2] = 1 is less than row_ptr[1] = 2 (row_ptr must be non-decreasing)"}));
}

TEST(ValidateCSR, RowPtrNotEndingAtNnz) {
    CSR g = good_csr();
    g.row_ptr.back() = 5;
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(g); }, {"row_ptr[4] = 5", "nnz = 6"}));
    g = good_csr();
    g.col_idx.push_back(0);
    g.edge_ids.push_back(6);
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(g); }, {"row_ptr[4] = 6", "nnz = 7"}));
}

TEST(ValidateCSR, ColumnOutOfRange) {
    CSR g = good_csr();
    g.col_idx[3] = -1;
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(g); }, {"col_idx[3] = -1", "out of range", "row 2"}));
    g = good_csr();
    g.col_idx[5] = 5;
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(g); }, {"col_idx[5] = 5", "num_cols = 5", "row 3"}));
}

TEST(ValidateCSR, EdgeIdsWrongSize) {
    CSR g = good_csr();
    g.edge_ids.pop_back();
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(g); }, {"edge_ids has 5 entries", "nnz = 6"}));
}

TEST(ValidateCSR, EdgeIdsNotAPermutation) {
    CSR g = good_csr();
    g.edge_ids[2] = 6;
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(g); }, {"edge_ids[2] = 6", "out of range [0, 6)"}));
    g = good_csr();
    g.edge_ids[4] = -3;
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(g); }, {"edge_ids[4] = -3", "out of range"}));
    g = good_csr();
    g.edge_ids[4] = 5;  // edge_ids[0] is 5 too
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(g); }, {"edge_ids[4] = 5 duplicates edge_ids[0] = 5"}));
}

TEST(ValidateCSR, StructureCheckSkipsPermutation) {
    CSR g = good_csr();
    g.edge_ids[4] = 5;
    EXPECT_NO_THROW(validate_structure(g));
    g.col_idx[0] = 9;
    EXPECT_TRUE(throws_with<GraphError>([&] { validate_structure(g); }, {"col_idx[0] = 9"}));
}

TEST(ValidateCSR, WhatPrefixesTheMessage) {
    CSR g = good_csr();
    g.col_idx[1] = 42;
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(g, "graph.mtx"); }, {"graph.mtx col_idx[1] = 42"}));
}

TEST(ValidateCSC, Errors) {
    CSC g;
    g.num_rows = 3;
    g.num_cols = 2;
    g.col_ptr = {0, 2, 3};
    g.row_idx = {0, 2, 1};
    EXPECT_NO_THROW(validate(g));
    CSC bad = g;
    bad.col_ptr = {0, 3, 2};
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(bad); },
                                        {"CSC col_ptr[2] = 2 is less than col_ptr[1] = 3"}));
    bad = g;
    bad.row_idx[1] = 3;
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(bad); }, {"row_idx[1] = 3", "num_rows = 3", "column 0"}));
    bad = g;
    bad.col_ptr.pop_back();
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(bad); }, {"col_ptr has 2 entries", "num_cols + 1 = 3"}));
    bad = g;
    bad.edge_ids = {0, 0, 1};
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(bad); }, {"edge_ids[1] = 0 duplicates edge_ids[0]"}));
}

TEST(ValidateCOO, Errors) {
    COO g;
    g.num_rows = 3;
    g.num_cols = 4;
    g.row = {0, 2, 1};
    g.col = {3, 0, 1};
    EXPECT_NO_THROW(validate(g));
    COO bad = g;
    bad.col.pop_back();
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(bad); }, {"col has 2 entries but row has 3"}));
    bad = g;
    bad.edge_ids = {0, 1};
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(bad); }, {"edge_ids has 2 entries", "nnz = 3"}));
    bad = g;
    bad.row[2] = 3;
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(bad); }, {"row[2] = 3", "num_rows = 3"}));
    bad = g;
    bad.col[1] = -2;
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(bad); }, {"col[1] = -2", "num_cols = 4"}));
    bad = g;
    bad.num_rows = -5;
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(bad); }, {"num_rows = -5"}));
    bad = g;
    bad.edge_ids = {2, 1, 2};
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(bad); }, {"edge_ids[2] = 2 duplicates edge_ids[0] = 2"}));
    bad = g;
    bad.edge_ids = {0, 1, 3};
    EXPECT_TRUE(throws_with<GraphError>([&] { validate(bad); }, {"edge_ids[2] = 3", "out of range [0, 3)"}));
}

TEST(ValidatePermutation, AcceptsPermutations) {
    EXPECT_NO_THROW(validate_permutation({2, 0, 1}, 3, "balancedIdx"));
    EXPECT_NO_THROW(validate_permutation({}, 0, "balancedIdx"));
}

TEST(ValidatePermutation, Errors) {
    EXPECT_TRUE(throws_with<GraphError>([] { validate_permutation({0, 1}, 3, "balancedIdx"); },
                                        {"balancedIdx has 2 entries, expected n = 3"}));
    EXPECT_TRUE(throws_with<GraphError>([] { validate_permutation({0, 3, 1}, 3, "balancedIdx"); },
                                        {"balancedIdx[1] = 3 is out of range [0, 3)"}));
    EXPECT_TRUE(throws_with<GraphError>([] { validate_permutation({0, -1, 1}, 3, "balancedIdx"); },
                                        {"balancedIdx[1] = -1"}));
    EXPECT_TRUE(throws_with<GraphError>([] { validate_permutation({1, 2, 1}, 3, "balancedIdx"); },
                                        {"balancedIdx[2] = 1 duplicates balancedIdx[0] = 1"}));
    EXPECT_TRUE(throws_with<GraphError>([] { validate_permutation({}, -1, "perm"); }, {"n = -1"}));
    EXPECT_TRUE(throws_with<GraphError>([] { validate_permutation({}, int64_t{1} << 40, "perm"); },
                                        {"n = 1099511627776", "INT32_MAX"}));
}

TEST(ValidateSortedRows, DetectsUnsortedRow) {
    CSR g = make_csr(3, 5, {0, 2, 5, 5}, {1, 4, 0, 3, 2});
    EXPECT_TRUE(throws_with<GraphError>([&] { validate_sorted_rows(g); },
                                        {"col_idx[4] = 2 is less than col_idx[3] = 3", "row 1"}));
    g.col_idx = {1, 4, 0, 2, 2};  // duplicates are fine
    EXPECT_NO_THROW(validate_sorted_rows(g));
}

}  // namespace
}  // namespace gsparse::test
