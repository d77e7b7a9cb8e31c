#include <random>

#include "support/compare.h"

namespace gsparse::test {

Tensor random_tensor(std::vector<int64_t> shape, uint64_t seed, DType dtype, double lo, double hi) {
    Tensor t = Tensor::empty(std::move(shape), dtype);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> dist(lo, hi);
    for (int64_t i = 0; i < t.numel(); i++) {
        if (dtype == DType::F64) t.data_as<double>()[i] = dist(rng);
        else t.data_as<float>()[i] = static_cast<float>(dist(rng));
    }
    return t;
}

}  // namespace gsparse::test
