#include <gtest/gtest.h>

#include <filesystem>
#include <ostream>

#include "graph/convert.h"
#include "graph/graph.h"
#include "graph/io.h"
#include "graph/validate.h"
#include "graph_test_util.h"
#include "support/random_graph.h"

namespace gsparse::test {
namespace {

struct RealGraph {
    const char *name;
    int64_t nodes;
    int64_t stored;  // entries in the file
    bool symmetric;
};

void PrintTo(const RealGraph &g, std::ostream *os) { *os << g.name; }

// From datasets/real/README.md.
const RealGraph kRealGraphs[] = {
    {"cora", 2708, 5278, true},
    {"citeseer", 3327, 4552, true},
    {"pubmed", 19717, 44324, true},
    {"ca-CondMat", 23133, 93497, true},
    {"p2p-Gnutella31", 62586, 147892, false},
};

class RealGraphs : public ::testing::TestWithParam<RealGraph> {
protected:
    void SetUp() override {
        path_ = real_graph_path(GetParam().name);
        if (!std::filesystem::exists(path_)) GTEST_SKIP() << "missing " << path_;
    }
    std::string path_;
};

int64_t self_loops(const CSR &g) {
    int64_t n = 0;
    for (int64_t r = 0; r < g.num_rows; r++)
        for (index_t p = g.row_ptr[r]; p < g.row_ptr[r + 1]; p++) n += g.col_idx[p] == r;
    return n;
}

TEST_P(RealGraphs, LoadsWithExpectedCounts) {
    const RealGraph &rg = GetParam();
    const LoadedGraph g = load_matrix_market(path_);
    EXPECT_EQ(g.csr.num_rows, rg.nodes);
    EXPECT_EQ(g.csr.num_cols, rg.nodes);
    ASSERT_NO_THROW(validate(g.csr));
    ASSERT_NO_THROW(validate_sorted_rows(g.csr));
    if (rg.symmetric) {
        // Each off-diagonal entry gives two edges, each diagonal entry one.
        EXPECT_EQ(g.csr.nnz(), 2 * rg.stored - self_loops(g.csr));
        EXPECT_TRUE(g.values.empty());
        // The expanded graph is its own transpose.
        const CSR t = transpose(g.csr);
        EXPECT_EQ(t.row_ptr, g.csr.row_ptr);
        EXPECT_EQ(t.col_idx, g.csr.col_idx);
    } else {
        EXPECT_EQ(g.csr.nnz(), rg.stored);
        EXPECT_EQ(static_cast<int64_t>(g.values.size()), rg.stored);
    }
    const GraphStats s = compute_stats(g.csr);
    EXPECT_EQ(s.nnz, g.csr.nnz());
    EXPECT_GT(s.max_row_length, 0);
    EXPECT_GT(s.row_length_cov, 0.0);
    EXPECT_DOUBLE_EQ(s.avg_row_length, static_cast<double>(g.csr.nnz()) / static_cast<double>(rg.nodes));
}

TEST_P(RealGraphs, RoundTripThroughBinary) {
    ScratchDir dir;
    const LoadedGraph g = load_matrix_market(path_);
    const std::string p = dir.path(std::string(GetParam().name) + ".gcsr");
    save_binary_csr(p, g.csr, g.values);
    const LoadedGraph back = load_binary_csr(p);
    expect_same_csr(back.csr, g.csr);
    EXPECT_EQ(back.values, g.values);
    const Graph a = Graph::from_csr(g.csr, g.values);
    const Graph b = Graph::load(p);
    EXPECT_EQ(a.fingerprint(), b.fingerprint());
}

TEST_P(RealGraphs, RoundTripThroughTextFormats) {
    ScratchDir dir;
    const LoadedGraph g = load_matrix_market(path_);
    for (const char *ext : {".mtx", ".el"}) {
        SCOPED_TRACE(ext);
        const std::string p = dir.path(std::string("copy") + ext);
        save_graph(p, g.csr, g.values);
        const LoadedGraph back = load_graph(p);
        // Rows were sorted by the first load, and duplicates keep edge-id order, so the copy is exact.
        expect_same_csr(back.csr, g.csr);
        EXPECT_EQ(back.values, g.values);
    }
}

TEST_P(RealGraphs, GraphObjectDerivedLayouts) {
    const Graph g = Graph::load(path_);
    EXPECT_EQ(g.num_dst(), GetParam().nodes);
    EXPECT_EQ(edges_of(g.csc()), edges_of(g.csr()));
    const std::vector<index_t> &bal = g.balanced_idx();
    ASSERT_NO_THROW(validate_permutation(bal, g.num_dst(), "balancedIdx"));
    EXPECT_EQ(g.csr().row_length(bal.front()), g.max_row_length());
    EXPECT_EQ(g.reverse().num_edges(), g.num_edges());
}

INSTANTIATE_TEST_SUITE_P(All, RealGraphs, ::testing::ValuesIn(kRealGraphs),
                         [](const ::testing::TestParamInfo<RealGraph> &info) {
                             std::string n = info.param.name;
                             for (char &c : n)
                                 if (c == '-') c = '_';
                             return n;
                         });

TEST(RealGraphFiles, AllPresent) {
    for (const std::string &name : real_graph_names())
        EXPECT_TRUE(std::filesystem::exists(real_graph_path(name))) << real_graph_path(name);
}

TEST(RealGraphFiles, CoraHasNoSelfLoopsAnd10556Edges) {
    const std::string p = real_graph_path("cora");
    if (!std::filesystem::exists(p)) GTEST_SKIP() << "missing " << p;
    const LoadedGraph g = load_graph(p);
    EXPECT_EQ(self_loops(g.csr), 0);
    EXPECT_EQ(g.csr.nnz(), 10556);
}

}  // namespace
}  // namespace gsparse::test
