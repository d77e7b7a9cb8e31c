#include "twin/row_lengths.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace gsparse::datasets::detail {

double normal_quantile(double p) {
    if (!(p > 0.0 && p < 1.0)) fail<Error>("normal_quantile: p = ", p, " is outside (0, 1)");
    // Rational approximation of the central region and of the tails (relative error ~1e-9) ...
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                               1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                               6.680131188771972e+01,  -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                               -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                               3.754408661907416e+00};
    const double p_low = 0.02425;
    double x;
    if (p < p_low) {
        const double q = std::sqrt(-2.0 * std::log(p));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
    } else if (p <= 1.0 - p_low) {
        const double q = p - 0.5, r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
    } else {
        const double q = std::sqrt(-2.0 * std::log1p(-p));
        x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
    }
    // ... refined by one Halley step on the exact CDF.
    const double cdf_minus_p = x < 0 ? 0.5 * std::erfc(-x / std::sqrt(2.0)) - p
                                     : (1.0 - p) - 0.5 * std::erfc(x / std::sqrt(2.0));
    const double u = cdf_minus_p * 2.5066282746310002 * std::exp(0.5 * x * x);
    return x - u / (1.0 + 0.5 * x * u);
}

namespace {

/// Continuous row lengths of one sigma: y_r = min(cap, f * exp(sigma * z_r)) with f chosen so that
/// sum y == edges. z is ascending, so the capped rows are a suffix.
class CappedLognormal {
public:
    CappedLognormal(int64_t rows, int64_t edges, int64_t cap) : rows_(rows), edges_(edges), cap_(cap), z_(rows) {
        for (int64_t r = 0; r < rows; r++) z_[r] = normal_quantile((static_cast<double>(r) + 0.5) / rows);
        x_.resize(rows);
        prefix_.resize(rows + 1);
    }

    /// Fills y (ascending) for sigma and returns its COV.
    double evaluate(double sigma, std::vector<double> &y) {
        const double zmax = z_.back();
        prefix_[0] = 0;
        for (int64_t r = 0; r < rows_; r++) {
            x_[r] = std::exp(sigma * (z_[r] - zmax));
            prefix_[r + 1] = prefix_[r] + x_[r];
        }
        // Smallest count k of capped top rows such that the uncapped rest fits under the cap.
        const double cap = static_cast<double>(cap_);
        int64_t k = 0;
        double f = 0;
        for (;; k++) {
            const int64_t free_rows = rows_ - k;
            if (free_rows == 0) break;
            const double rest = static_cast<double>(edges_) - cap * static_cast<double>(k);
            f = rest / prefix_[free_rows];
            if (f * x_[free_rows - 1] <= cap) break;
        }
        y.resize(rows_);
        const double mean = static_cast<double>(edges_) / rows_;
        double ss = 0;
        for (int64_t r = 0; r < rows_; r++) {
            y[r] = r >= rows_ - k ? cap : f * x_[r];
            ss += (y[r] - mean) * (y[r] - mean);
        }
        return mean > 0 ? std::sqrt(ss / rows_) / mean : 0.0;
    }

private:
    int64_t rows_, edges_, cap_;
    std::vector<double> z_, x_, prefix_;
};

/// Integer lengths with the exact total: cumulative rounding of y, then any rounding slack moved
/// between rows so that every length stays in [0, cap].
std::vector<int64_t> round_lengths(const std::vector<double> &y, int64_t edges, int64_t cap) {
    const int64_t rows = static_cast<int64_t>(y.size());
    double total = 0;
    for (double v : y) total += v;
    std::vector<int64_t> len(rows, 0);
    if (total > 0) {
        double acc = 0;
        int64_t prev = 0;
        for (int64_t r = 0; r < rows; r++) {
            acc += y[r];
            const int64_t cur = r + 1 == rows ? edges : std::llround(acc / total * static_cast<double>(edges));
            len[r] = std::clamp<int64_t>(cur - prev, 0, cap);
            prev += len[r];
        }
    }
    int64_t sum = 0;
    for (int64_t v : len) sum += v;
    // Deficit: one more entry for the longest rows with room; surplus: one less for the longest.
    while (sum < edges) {
        for (int64_t r = rows - 1; r >= 0 && sum < edges; r--)
            if (len[r] < cap) len[r]++, sum++;
    }
    while (sum > edges) {
        for (int64_t r = rows - 1; r >= 0 && sum > edges; r--)
            if (len[r] > 0) len[r]--, sum--;
    }
    std::sort(len.begin(), len.end());
    return len;
}

}  // namespace

RowLengthProfile row_length_profile(int64_t rows, int64_t edges, double cov, int64_t cap) {
    if (rows < 1) fail<Error>("row_length_profile: rows = ", rows, " must be >= 1");
    if (cap < 0 || edges < 0 || edges > rows * cap)
        fail<Error>("row_length_profile: ", edges, " edges do not fit ", rows, " rows of at most ", cap);
    if (!(cov >= 0) || !std::isfinite(cov)) fail<Error>("row_length_profile: cov = ", cov, " must be >= 0");
    RowLengthProfile out;
    if (edges == 0 || rows == 1) {
        out.lengths.assign(rows, edges / rows);
        return out;
    }
    CappedLognormal model(rows, edges, cap);
    std::vector<double> y;
    // The COV grows with sigma; solve cov(sigma) = target by the Illinois variant of regula falsi.
    const double target = cov;
    double lo = 0, hi = std::sqrt(std::log1p(target * target));
    double g_lo = model.evaluate(lo, y) - target;
    double g_hi = model.evaluate(hi, y) - target;
    while (g_hi < 0 && hi < 12) {
        lo = hi, g_lo = g_hi;
        hi = std::min(12.0, hi * 1.5 + 0.25);
        g_hi = model.evaluate(hi, y) - target;
    }
    double best = std::abs(g_lo) < std::abs(g_hi) ? lo : hi;
    if (g_lo < 0 && g_hi > 0) {
        int side = 0;
        for (int it = 0; it < 60; it++) {
            const double s = (lo * g_hi - hi * g_lo) / (g_hi - g_lo);
            const double g = model.evaluate(s, y) - target;
            best = s;
            if (std::abs(g) <= 1e-6 * std::max(target, 1e-3) || hi - lo < 1e-12) break;
            if (g < 0) {
                lo = s, g_lo = g;
                if (side == -1) g_hi *= 0.5;
                side = -1;
            } else {
                hi = s, g_hi = g;
                if (side == 1) g_lo *= 0.5;
                side = 1;
            }
        }
    }
    out.sigma = best;
    out.model_cov = model.evaluate(best, y);
    out.lengths = round_lengths(y, edges, cap);
    return out;
}

}  // namespace gsparse::datasets::detail
