// Power-law expected degrees for the zoo generators (see common.h).
#include "zoo/common.h"

#include <cmath>

namespace gsparse::datasets::zoo {

namespace {

/// sum_{i=1..n} (i + offset)^-beta: the first terms exactly, the tail by the midpoint integral.
double power_sum(int64_t n, double beta, double offset) {
    const int64_t head = std::min<int64_t>(n, 4096);
    double s = 0;
    for (int64_t i = 1; i <= head; i++) s += std::pow(static_cast<double>(i) + offset, -beta);
    if (n > head) {
        const double a = static_cast<double>(head) + 0.5 + offset, b = static_cast<double>(n) + 0.5 + offset;
        s += std::abs(beta - 1) < 1e-12 ? std::log(b / a) : (std::pow(b, 1 - beta) - std::pow(a, 1 - beta)) / (1 - beta);
    }
    return s;
}

}  // namespace

std::vector<double> power_law_degrees(int64_t n, double total, double gamma, double max_degree, double cap) {
    if (n < 1) fail<Error>("power_law_degrees: n = ", n, " must be >= 1");
    if (total > static_cast<double>(n) * cap * (1 + 1e-12))
        fail<Error>("power_law_degrees: ", total, " entries do not fit ", n, " nodes of at most ", cap);
    std::vector<double> w(static_cast<size_t>(n), 1.0);
    if (gamma != 0) {
        const double beta = 1.0 / (gamma - 1.0);
        auto largest = [&](double offset) { return total * std::pow(1 + offset, -beta) / power_sum(n, beta, offset); };
        double offset = 0;
        if (max_degree > 0 && largest(0) > max_degree) {
            double lo = 0, hi = 1;
            while (largest(hi) > max_degree && hi < 1e15) lo = hi, hi *= 2;
            for (int it = 0; it < 200 && hi - lo > 1e-9 * hi; it++) {
                const double mid = 0.5 * (lo + hi);
                (largest(mid) > max_degree ? lo : hi) = mid;
            }
            offset = hi;
        }
        for (int64_t i = 0; i < n; i++)
            w[i] = std::max(1e-300, std::exp(-beta * std::log((static_cast<double>(i) + 1 + offset) / (1 + offset))));
    }
    // Cap the largest at `cap` and scale the rest: the smallest count k of capped nodes for which the
    // scaled remainder stays under the cap.
    double rest = 0;
    for (double x : w) rest += x;
    int64_t k = 0;
    double scale = 0;
    for (; k < n; k++) {
        scale = (total - cap * static_cast<double>(k)) / rest;
        if (scale * w[k] <= cap) break;
        rest -= w[k];
        if (rest <= 0) rest = 1e-300;
    }
    for (int64_t i = 0; i < n; i++) w[i] = i < k ? cap : std::min(cap, scale * w[i]);
    return w;
}

}  // namespace gsparse::datasets::zoo
