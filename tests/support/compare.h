// Comparison of kernel outputs with the C++ reference.
#pragma once

#include <gtest/gtest.h>

#include <cmath>

#include "core/tensor.h"
#include "ops/reference.h"

namespace gsparse::test {

/// Values agree within rtol * (Σ|message| of the element) + atol (sums in fp32 against an fp64
/// reference); max/min values and their arg ids agree exactly.
inline ::testing::AssertionResult matches_reference(const Tensor &out, const ReferenceResult &ref, double rtol,
                                                    double atol = 1e-6, const Tensor *arg_u = nullptr,
                                                    const Tensor *arg_e = nullptr) {
    if (out.shape() != ref.shape)
        return ::testing::AssertionFailure() << "shape " << shape_str(out.shape()) << " != " << shape_str(ref.shape);
    const int64_t n = out.numel();
    for (int64_t i = 0; i < n; i++) {
        double got = out.dtype() == DType::F64 ? out.data_as<double>()[i] : out.data_as<float>()[i];
        double tol = rtol * ref.magnitude[i] + atol;
        if (!(std::fabs(got - ref.out[i]) <= tol))
            return ::testing::AssertionFailure() << "element " << i << ": got " << got << ", reference "
                                                 << ref.out[i] << " (tolerance " << tol << ")";
    }
    for (auto [t, want, name] : {std::tuple{arg_u, &ref.arg_u, "arg_u"}, std::tuple{arg_e, &ref.arg_e, "arg_e"}}) {
        if (!t) continue;
        if (t->numel() != static_cast<int64_t>(want->size()))
            return ::testing::AssertionFailure() << name << " has " << t->numel() << " elements, reference "
                                                 << want->size();
        for (int64_t i = 0; i < t->numel(); i++)
            if (t->data_as<int32_t>()[i] != (*want)[i])
                return ::testing::AssertionFailure() << name << "[" << i << "] = " << t->data_as<int32_t>()[i]
                                                     << ", reference " << (*want)[i];
    }
    return ::testing::AssertionSuccess();
}

/// A tensor of the given shape filled with values in [lo, hi) from seed (dtype f32 or f64).
Tensor random_tensor(std::vector<int64_t> shape, uint64_t seed, DType dtype = DType::F32, double lo = -1.0,
                     double hi = 1.0);

}  // namespace gsparse::test
