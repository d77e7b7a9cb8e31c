// What the tests of user programs share: the random graphs they run on (a very long row, shuffled
// and identity edge ids, bipartite, mostly empty) and an element-wise comparison of float outputs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "support/random_graph.h"

namespace gsparse::test {

struct Case {
    const char *name;
    RandomGraphOptions opt;
};

/// 120 nodes with a row of 400 neighbours, empty rows, duplicates and self-loops: edge ids shuffled
/// and in CSR order, a bipartite shape (45 sources) and a mostly empty one.
inline std::vector<Case> graphs() {
    RandomGraphOptions base;
    base.num_nodes = 120;
    base.long_row = 400;
    RandomGraphOptions identity = base;
    identity.shuffle_edge_ids = false;
    RandomGraphOptions bipartite = base;
    bipartite.num_src = 45;
    RandomGraphOptions sparse = base;
    sparse.avg_degree = 1.0;
    sparse.empty_row_share = 0.6;
    return {{"shuffled_ids", base}, {"identity_ids", identity}, {"bipartite", bipartite}, {"mostly_empty", sparse}};
}

/// Every element of got within tol * (1 + |want|) of want's (float32 tensors); names the first five
/// that are not.
inline void expect_close(const Tensor &got, const Tensor &want, double tol, const std::string &what) {
    ASSERT_EQ(got.numel(), want.numel()) << what;
    const float *a = got.data_as<float>(), *b = want.data_as<float>();
    int64_t bad = 0;
    for (int64_t i = 0; i < got.numel(); ++i) {
        const double err = std::abs(double(a[i]) - double(b[i]));
        if (!(err <= tol * (1.0 + std::abs(double(b[i]))))) {
            if (bad++ < 5) ADD_FAILURE() << what << ": element " << i << " is " << a[i] << ", expected " << b[i];
        }
    }
    EXPECT_EQ(bad, 0) << what;
}

}  // namespace gsparse::test
