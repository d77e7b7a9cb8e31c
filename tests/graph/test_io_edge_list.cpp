#include <gtest/gtest.h>

#include <random>

#include "graph/convert.h"
#include "graph/io.h"
#include "graph/validate.h"
#include "graph_test_util.h"
#include "support/random_graph.h"

namespace gsparse::test {
namespace {

TEST(EdgeList, CommentsBlankLinesAndNodeCount) {
    ScratchDir dir;
    const std::string p = dir.write("g.el",
                                    "# a comment\n"
                                    "% another comment\n"
                                    "\n"
                                    "0 1\n"
                                    "   \t\n"
                                    "  2\t0\r\n"
                                    "    # indented comment\n"
                                    "4 1\n"
                                    "1 1");
    const LoadedGraph g = load_edge_list(p);
    EXPECT_EQ(g.csr.num_rows, 5);  // max id 4
    EXPECT_EQ(g.csr.num_cols, 5);
    EXPECT_EQ(g.csr.nnz(), 4);
    // Edge k is the k-th edge line, src -> dst (row = dst).
    const EdgeMap expected = {{1, 0}, {0, 2}, {1, 4}, {1, 1}};
    EXPECT_EQ(edges_of(g.csr), expected);
    EXPECT_EQ(g.csr.row_ptr, (std::vector<index_t>{0, 1, 4, 4, 4, 4}));
    EXPECT_EQ(g.csr.col_idx, (std::vector<index_t>{2, 0, 1, 4}));  // sorted row
    EXPECT_EQ(explicit_ids(g.csr), (std::vector<index_t>{1, 0, 3, 2}));
    EXPECT_TRUE(g.values.empty());
}

TEST(EdgeList, Weights) {
    ScratchDir dir;
    const std::string p = dir.write("g.txt", "0 1 0.5\n1 0 -3\n2 2 1e-2\n");
    const LoadedGraph g = load_edge_list(p);
    EXPECT_EQ(g.csr.num_rows, 3);
    EXPECT_EQ(g.values, (std::vector<float>{0.5f, -3.0f, 0.01f}));
}

TEST(EdgeList, EmptyFile) {
    ScratchDir dir;
    const LoadedGraph g = load_edge_list(dir.write("g.el", "# nothing\n"));
    EXPECT_EQ(g.csr.num_rows, 0);
    EXPECT_EQ(g.csr.nnz(), 0);
    EXPECT_NO_THROW(validate(g.csr));
    const LoadedGraph h = load_edge_list(dir.write("h.el", ""), 4);
    EXPECT_EQ(h.csr.num_rows, 4);
    EXPECT_EQ(h.csr.row_ptr, (std::vector<index_t>{0, 0, 0, 0, 0}));
}

TEST(EdgeList, ExplicitNodeCount) {
    ScratchDir dir;
    const std::string p = dir.write("g.el", "0 1\n2 0\n");
    const LoadedGraph g = load_edge_list(p, 10);
    EXPECT_EQ(g.csr.num_rows, 10);
    EXPECT_EQ(g.csr.num_cols, 10);
    EXPECT_EQ(g.csr.nnz(), 2);
    EXPECT_TRUE(throws_with<GraphError>([&] { load_edge_list(p, 2); },
                                        {p, ":2:", "source id 2 is out of range [0, 2)", "2 nodes"}));
    EXPECT_TRUE(throws_with<GraphError>([&] { load_edge_list(p, 1); }, {":1:", "destination id 1"}));
    EXPECT_TRUE(throws_with<GraphError>([&] { load_edge_list(p, -4); }, {"num_nodes = -4"}));
    EXPECT_TRUE(throws_with<GraphError>([&] { load_edge_list(p, int64_t{1} << 33); }, {"num_nodes = 8589934592"}));
}

TEST(EdgeList, HeaderGivesBipartiteShape) {
    ScratchDir dir;
    const std::string p = dir.write("g.el", "#!gsparse num_dst=5 num_src=3\n2 4\n0 0\n");
    const LoadedGraph g = load_edge_list(p);
    EXPECT_EQ(g.csr.num_rows, 5);
    EXPECT_EQ(g.csr.num_cols, 3);
    EXPECT_EQ(edges_of(g.csr), (EdgeMap{{4, 2}, {0, 0}}));
    // An explicit count overrides the header.
    EXPECT_EQ(load_edge_list(p, 7).csr.num_cols, 7);
    const std::string q = dir.write("q.el", "#!gsparse num_dst=5 num_src=3\n3 1\n");
    EXPECT_TRUE(throws_with<GraphError>([&] { load_edge_list(q); }, {":2:", "source id 3 is out of range [0, 3)"}));
}

TEST(EdgeList, HeaderErrors) {
    ScratchDir dir;
    struct Case {
        std::string content;
        std::string part;
    };
    const std::vector<Case> cases = {
        {"#!gsparse num_dst=5\n0 0\n", "malformed header"},
        {"#!gsparse num_dst=5 num_src=x\n0 0\n", "num_src 'x' is not an integer"},
        {"#!gsparse num_dst=5 num_src=-1\n0 0\n", "num_src = -1 is out of range"},
        {"#!gsparse nodes=5 num_src=3\n0 0\n", "invalid header field 'nodes=5'"},
        {"0 0\n#!gsparse num_dst=5 num_src=3\n", "must come before the first edge (line 1)"},
        {"#!gsparse num_dst=5 num_src=3\n#!gsparse num_dst=5 num_src=3\n", "a second #!gsparse header"},
    };
    for (const Case &c : cases) {
        const std::string p = dir.write("h.el", c.content);
        EXPECT_TRUE(throws_with<FormatError>([&] { load_edge_list(p); }, {c.part})) << c.content;
    }
}

TEST(EdgeList, LineErrors) {
    ScratchDir dir;
    struct Case {
        std::string content;
        std::vector<std::string> parts;
    };
    const std::vector<Case> cases = {
        {"0 1\n1 2 0.5\n", {":2:", "has 3 values but line 1 has 2", "mixed"}},
        {"0 1 3\n\n1 2\n", {":3:", "has 2 values but line 1 has 3"}},
        {"0 1\n5\n", {":2:", "line has 1 values"}},
        {"0 1 2 3\n", {":1:", "line has 4 values"}},
        {"0 1\nx 2\n", {":2:", "source id 'x' is not an integer"}},
        {"0 1\n2 1.0\n", {":2:", "destination id '1.0' is not an integer"}},
        {"0 1 w\n", {":1:", "weight 'w' is not a real number"}},
    };
    for (const Case &c : cases) {
        const std::string p = dir.write("l.el", c.content);
        try {
            load_edge_list(p);
            ADD_FAILURE() << "no exception for " << c.content;
        } catch (const FormatError &e) {
            for (const std::string &part : c.parts)
                EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
        } catch (const std::exception &e) {
            ADD_FAILURE() << "wrong exception type: " << e.what();
        }
    }
}

TEST(EdgeList, BadIdsAreGraphErrors) {
    ScratchDir dir;
    const std::string a = dir.write("a.el", "0 1\n-1 2\n");
    EXPECT_TRUE(throws_with<GraphError>([&] { load_edge_list(a); }, {":2:", "source id -1 is out of range"}));
    const std::string b = dir.write("b.el", "0 2147483647\n");
    EXPECT_TRUE(throws_with<GraphError>([&] { load_edge_list(b); }, {"destination id 2147483647", "INT32_MAX"}));
    const std::string c = dir.write("c.el", "0 99999999999999999999999\n");
    EXPECT_TRUE(throws_with<GraphError>([&] { load_edge_list(c); }, {"destination id 99999999999999999999999"}));
}

TEST(EdgeList, GarbageAndTruncatedFiles) {
    ScratchDir dir;
    std::mt19937 rng(3);
    for (int t = 0; t < 20; t++) {
        std::string bytes(100 + t * 7, '\0');
        for (char &c : bytes) c = static_cast<char>(rng() % 256);
        bytes[0] = 'Z';  // never a comment-only file
        const std::string p = dir.write("garbage.el", bytes);
        EXPECT_THROW(load_edge_list(p), FormatError);
    }
    EXPECT_THROW(load_edge_list(dir.path("missing.el")), FormatError);
    EXPECT_THROW(load_edge_list(dir.write("nul.el", std::string(64, '\0'))), FormatError);
    EXPECT_THROW(load_edge_list(dir.write("nul2.el", "0 1\n" + std::string(3, '\0') + "\n")), FormatError);
    // Truncation mid-line: the last line loses its weight or its destination.
    const std::string full = "0 1 2.5\n1 2 3.5\n";
    EXPECT_THROW(load_edge_list(dir.write("t1.el", full.substr(0, full.size() - 4))), FormatError);
    EXPECT_THROW(load_edge_list(dir.write("t2.el", full.substr(0, full.size() - 6))), FormatError);
}

TEST(EdgeList, RandomEditsNeverCrashOrAcceptInvalidGraphs) {
    ScratchDir dir;
    const std::string base = "#!gsparse num_dst=6 num_src=6\n# c\n0 1 0.5\n2 3 1\n5 5 -2\n4 0 3e2\n";
    const std::string alphabet = "0123456789 -+.e\n#%\t";
    std::mt19937 rng(29);
    int loaded = 0;
    for (int t = 0; t < 500; t++) {
        std::string s = base;
        const int edits = 1 + static_cast<int>(rng() % 3);
        for (int k = 0; k < edits; k++) {
            const size_t pos = rng() % s.size();
            const char c = alphabet[rng() % alphabet.size()];
            switch (rng() % 3) {
                case 0: s[pos] = c; break;
                case 1: s.insert(s.begin() + static_cast<std::ptrdiff_t>(pos), c); break;
                default: s.erase(pos, 1); break;
            }
        }
        const std::string p = dir.write("edit.el", s);
        try {
            const LoadedGraph g = load_edge_list(p);
            ASSERT_NO_THROW(validate(g.csr)) << s;
            ASSERT_TRUE(g.values.empty() || g.values.size() == static_cast<size_t>(g.csr.nnz())) << s;
            loaded++;
        } catch (const Error &) {
        }
    }
    EXPECT_GT(loaded, 0);
    EXPECT_LT(loaded, 500);
}

TEST(EdgeList, RoundTrip) {
    ScratchDir dir;
    for (uint64_t seed = 5; seed <= 8; seed++) {
        SCOPED_TRACE(seed);
        RandomGraphOptions opt;
        if (seed % 2) opt.num_src = 50;  // bipartite, with isolated nodes likely
        const CSR g = random_graph(seed, opt).csr();
        std::vector<float> vals(static_cast<size_t>(g.nnz()));
        for (size_t i = 0; i < vals.size(); i++) vals[i] = static_cast<float>(i) * 0.37f - 11.0f;
        const std::string p = dir.path("rt.el");
        save_edge_list(p, g, vals);
        const LoadedGraph back = load_edge_list(p);
        CSR sorted = g;
        sort_rows(sorted);
        EXPECT_EQ(back.csr.num_rows, g.num_rows);
        EXPECT_EQ(back.csr.num_cols, g.num_cols);
        EXPECT_EQ(back.csr.row_ptr, sorted.row_ptr);
        EXPECT_EQ(back.csr.col_idx, sorted.col_idx);
        EXPECT_EQ(edges_of(back.csr), edges_of(g));
        EXPECT_EQ(back.values, vals);

        save_graph(dir.path("rt2.edges"), g);
        const LoadedGraph back2 = load_graph(dir.path("rt2.edges"));
        EXPECT_EQ(edges_of(back2.csr), edges_of(g));
        EXPECT_TRUE(back2.values.empty());
    }
}

TEST(EdgeList, RoundTripKeepsTrailingIsolatedNodes) {
    ScratchDir dir;
    const CSR g = make_csr(6, 6, {0, 1, 1, 1, 1, 1, 1}, {1});
    const std::string p = dir.path("iso.txt");
    save_edge_list(p, g);
    const LoadedGraph back = load_edge_list(p);
    EXPECT_EQ(back.csr.num_rows, 6);
    EXPECT_EQ(back.csr.num_cols, 6);
    expect_same_csr(back.csr, g);
}

}  // namespace
}  // namespace gsparse::test
