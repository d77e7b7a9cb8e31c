// The building blocks of the twin model: normal quantiles, alias tables and row-length profiles.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "core/error.h"
#include "twin/alias_table.h"
#include "twin/rng.h"
#include "twin/row_lengths.h"

namespace gsparse::datasets::detail {
namespace {

TEST(NormalQuantile, InvertsTheCdf) {
    for (double p : {1e-12, 1e-6, 0.001, 0.02425, 0.1, 0.3, 0.5, 0.7, 0.9, 0.97575, 0.999, 1 - 1e-9}) {
        const double x = normal_quantile(p);
        const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
        EXPECT_NEAR(cdf, p, 1e-12 + 1e-9 * p) << p;
    }
    EXPECT_DOUBLE_EQ(normal_quantile(0.5), 0.0);
    EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, 1e-12);
    EXPECT_NEAR(normal_quantile(0.025), -1.959963984540054, 1e-12);
    EXPECT_THROW(normal_quantile(0.0), Error);
    EXPECT_THROW(normal_quantile(1.0), Error);
}

TEST(AliasTables, ProbabilitiesFollowTheWeights) {
    std::vector<double> w = {5, 0, 1, 1, 3, 0.5, 0.5, 9, 0, 0, 0, 2};
    // Three tables: [0, 5), [5, 8), [8, 11) (all zero: uniform) and [11, 12).
    const std::vector<int64_t> bounds = {0, 5, 8, 11, 12};
    AliasTables t(w, bounds);
    ASSERT_EQ(t.num_tables(), 4);
    for (int64_t k = 0; k < 4; k++) {
        double total = 0, sum_p = 0;
        for (int64_t i = bounds[k]; i < bounds[k + 1]; i++) total += w[i];
        for (int64_t i = bounds[k]; i < bounds[k + 1]; i++) {
            const double expect = total > 0 ? w[i] / total : 1.0 / (bounds[k + 1] - bounds[k]);
            EXPECT_NEAR(t.probability(k, i), expect, 1e-8) << "table " << k << " index " << i;
            sum_p += t.probability(k, i);
        }
        EXPECT_NEAR(sum_p, 1.0, 1e-8);
    }
    // Sampling stays inside the table and matches the probabilities.
    Rng rng(42, Stream::row, 0);
    std::vector<int64_t> count(w.size(), 0);
    const int draws = 200000;
    for (int d = 0; d < draws; d++) {
        const int32_t i = t.sample(0, rng.next());
        ASSERT_GE(i, 0);
        ASSERT_LT(i, 5);
        count[i]++;
    }
    EXPECT_EQ(count[1], 0);
    EXPECT_NEAR(count[0] / double(draws), 0.5, 0.01);
    EXPECT_NEAR(count[4] / double(draws), 0.3, 0.01);
    for (int d = 0; d < 1000; d++) EXPECT_EQ(t.sample(3, rng.next()), 11);
}

TEST(AliasTables, RejectsBadInput) {
    EXPECT_THROW(AliasTables({1, -1}, {0, 2}), Error);
    EXPECT_THROW(AliasTables({1, 1}, {0, 1}), Error);
    EXPECT_THROW(AliasTables({1, 1}, {0, 2, 1, 2}), Error);
}

TEST(Rng, StreamsDependOnSeedStreamAndIndex) {
    EXPECT_EQ(Rng(1, Stream::row, 5).next(), Rng(1, Stream::row, 5).next());
    EXPECT_NE(Rng(1, Stream::row, 5).next(), Rng(2, Stream::row, 5).next());
    EXPECT_NE(Rng(1, Stream::row, 5).next(), Rng(1, Stream::row, 6).next());
    EXPECT_NE(Rng(1, Stream::row, 5).next(), Rng(1, Stream::relabel, 5).next());
    Rng rng(3, Stream::relabel, 0);
    auto p = random_permutation<int32_t>(1000, rng);
    std::vector<int32_t> sorted = p;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < 1000; i++) ASSERT_EQ(sorted[i], i);
    EXPECT_NE(sorted, p);
}

double cov_of(const std::vector<int64_t> &len) {
    const double mean = std::accumulate(len.begin(), len.end(), 0.0) / len.size();
    double ss = 0;
    for (int64_t l : len) ss += (l - mean) * (l - mean);
    return std::sqrt(ss / len.size()) / mean;
}

TEST(RowLengthProfile, ExactTotalCapAndCov) {
    struct Case {
        int64_t rows, edges, cap;
        double cov;
    };
    for (const Case c : {Case{10000, 500000, 10000, 1.63}, Case{5000, 250000, 300, 1.0}, Case{100000, 5000000, 100000, 1.88},
                         Case{1000, 1000, 1000, 0.0}, Case{777, 12345, 777, 3.0}, Case{3, 7, 3, 1.0}}) {
        const RowLengthProfile p = row_length_profile(c.rows, c.edges, c.cov, c.cap);
        ASSERT_EQ(static_cast<int64_t>(p.lengths.size()), c.rows);
        EXPECT_EQ(std::accumulate(p.lengths.begin(), p.lengths.end(), int64_t{0}), c.edges);
        EXPECT_TRUE(std::is_sorted(p.lengths.begin(), p.lengths.end()));
        EXPECT_GE(p.lengths.front(), 0);
        EXPECT_LE(p.lengths.back(), c.cap);
        if (c.rows >= 1000 && c.cov > 0 && c.cap > 1000) {
            EXPECT_NEAR(cov_of(p.lengths), c.cov, 0.01 * c.cov) << c.rows << " rows";
        }
    }
    // Zero COV: all rows equal.
    const RowLengthProfile flat = row_length_profile(1000, 50000, 0.0, 1000);
    EXPECT_EQ(flat.lengths.front(), 50);
    EXPECT_EQ(flat.lengths.back(), 50);
    // A cap tighter than the tail: the COV is the closest reachable, never above the bound.
    const RowLengthProfile capped = row_length_profile(5000, 250000, 5.0, 100);
    EXPECT_EQ(capped.lengths.back(), 100);
    EXPECT_LE(cov_of(capped.lengths), 1.0 + 1e-9);  // sqrt((cap - mean) / mean)
    EXPECT_THROW(row_length_profile(10, 101, 1.0, 10), Error);
    EXPECT_THROW(row_length_profile(0, 0, 1.0, 10), Error);
}

}  // namespace
}  // namespace gsparse::datasets::detail
