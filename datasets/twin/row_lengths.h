// The row-length (in-degree) model of the twins: a discretized lognormal sample matched to a target
// mean and coefficient of variation (COV = standard deviation / mean).
//
// Instead of independent draws, row r of n (sorted ascending) takes the lognormal quantile at
// probability (r + 0.5) / n. This stratified sample has the shape of the distribution without the
// sampling noise of a heavy tail, so the achieved COV is reproducible even for small graphs. The
// lognormal's sigma is then calibrated (sigma^2 = ln(1 + cov^2) is only the starting point) so
// that the COV of the lengths after capping every row at `cap` and scaling the total to exactly
// `edges` matches the target; when the cap makes the target unreachable the closest reachable COV
// is taken.
#pragma once

#include <cstdint>
#include <vector>

namespace gsparse::datasets::detail {

/// The inverse of the standard normal CDF for 0 < p < 1 (absolute error below 1e-12).
double normal_quantile(double p);

struct RowLengthProfile {
    std::vector<int64_t> lengths;  ///< ascending; sum == edges; each in [0, cap]
    double sigma = 0;              ///< calibrated lognormal sigma
    double model_cov = 0;          ///< COV of the continuous (capped, scaled) lengths at sigma
};

/// Row lengths for `rows` rows with exactly `edges` entries in total, each at most `cap`
/// (requires rows >= 1, 0 <= edges <= rows * cap, cov >= 0).
RowLengthProfile row_length_profile(int64_t rows, int64_t edges, double cov, int64_t cap);

}  // namespace gsparse::datasets::detail
