#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "graph/convert.h"
#include "graph/io.h"
#include "graph/validate.h"
#include "graph_test_util.h"
#include "support/random_graph.h"

namespace gsparse::test {
namespace {

const char *kBanner = "%%MatrixMarket matrix coordinate pattern general\n";

TEST(MatrixMarket, PatternGeneral) {
    ScratchDir dir;
    const std::string p = dir.write("g.mtx", std::string(kBanner) +
                                                 "% a comment\n"
                                                 "3 4 4\n"
                                                 "2 1\n"
                                                 "1 4\n"
                                                 "2 3\n"
                                                 "3 3\n");
    const LoadedGraph g = load_matrix_market(p);
    EXPECT_EQ(g.csr.num_rows, 3);
    EXPECT_EQ(g.csr.num_cols, 4);
    EXPECT_EQ(g.csr.row_ptr, (std::vector<index_t>{0, 1, 3, 4}));
    EXPECT_EQ(g.csr.col_idx, (std::vector<index_t>{3, 0, 2, 2}));
    // Edge ids follow the file: entry k is edge k; entry (r, c) is the edge c -> r.
    EXPECT_EQ(explicit_ids(g.csr), (std::vector<index_t>{1, 0, 2, 3}));
    EXPECT_TRUE(g.values.empty());
    EXPECT_NO_THROW(validate(g.csr));
}

TEST(MatrixMarket, RowsAreSortedWithEdgeIdsFollowing) {
    ScratchDir dir;
    const std::string p = dir.write("g.mtx", std::string(kBanner) + "2 3 4\n1 3\n1 1\n2 2\n1 2\n");
    const LoadedGraph g = load_matrix_market(p);
    EXPECT_EQ(g.csr.row_ptr, (std::vector<index_t>{0, 3, 4}));
    EXPECT_EQ(g.csr.col_idx, (std::vector<index_t>{0, 1, 2, 1}));
    EXPECT_EQ(explicit_ids(g.csr), (std::vector<index_t>{1, 3, 0, 2}));
    EXPECT_NO_THROW(validate_sorted_rows(g.csr));
}

TEST(MatrixMarket, RealGeneralWithCrlfBlankLinesAndComments) {
    ScratchDir dir;
    const std::string p = dir.write("g.mtx",
                                    "%%MatrixMarket matrix coordinate real general\r\n"
                                    "% comment\r\n"
                                    "\r\n"
                                    "3 3 3\r\n"
                                    "1 2 1.5\r\n"
                                    "\r\n"
                                    "% comment between entries\r\n"
                                    "  3\t1   -2e-1  \r\n"
                                    "2 2 +4\r\n");
    const LoadedGraph g = load_matrix_market(p);
    EXPECT_EQ(g.csr.nnz(), 3);
    ASSERT_EQ(g.values.size(), 3u);
    EXPECT_FLOAT_EQ(g.values[0], 1.5f);
    EXPECT_FLOAT_EQ(g.values[1], -0.2f);
    EXPECT_FLOAT_EQ(g.values[2], 4.0f);
    const EdgeMap m = edges_of(g.csr);
    EXPECT_EQ(m[0], std::make_pair(index_t{0}, index_t{1}));
    EXPECT_EQ(m[1], std::make_pair(index_t{2}, index_t{0}));
    EXPECT_EQ(m[2], std::make_pair(index_t{1}, index_t{1}));
}

TEST(MatrixMarket, IntegerSymmetricExpandsOffDiagonalEntries) {
    ScratchDir dir;
    const std::string p = dir.write("g.mtx",
                                    "%%MatrixMarket matrix coordinate integer symmetric\n"
                                    "4 4 3\n"
                                    "2 1 7\n"
                                    "3 3 5\n"
                                    "4 2 -1\n");
    const LoadedGraph g = load_matrix_market(p);
    EXPECT_EQ(g.csr.nnz(), 5);  // two off-diagonal entries twice, the diagonal once
    const EdgeMap m = edges_of(g.csr);
    const EdgeMap expected = {{1, 0}, {0, 1}, {2, 2}, {3, 1}, {1, 3}};
    EXPECT_EQ(m, expected);
    EXPECT_EQ(g.values, (std::vector<float>{7, 7, 5, -1, -1}));
    EXPECT_EQ(g.csr.row_ptr, (std::vector<index_t>{0, 1, 3, 4, 5}));
    EXPECT_EQ(g.csr.col_idx, (std::vector<index_t>{1, 0, 3, 2, 1}));
}

TEST(MatrixMarket, PatternSymmetricAndCaseInsensitiveBanner) {
    ScratchDir dir;
    const std::string p = dir.write("g.mtx", "%%matrixmarket MATRIX Coordinate Pattern Symmetric\n3 3 2\n2 1\n3 2\n");
    const LoadedGraph g = load_matrix_market(p);
    EXPECT_EQ(g.csr.nnz(), 4);
    const CSR t = transpose(g.csr);
    EXPECT_EQ(t.row_ptr, g.csr.row_ptr);
    EXPECT_EQ(t.col_idx, g.csr.col_idx);
}

TEST(MatrixMarket, EmptyMatrix) {
    ScratchDir dir;
    const LoadedGraph g = load_matrix_market(dir.write("g.mtx", std::string(kBanner) + "0 0 0\n"));
    EXPECT_EQ(g.csr.num_rows, 0);
    EXPECT_EQ(g.csr.nnz(), 0);
    EXPECT_EQ(g.csr.row_ptr, (std::vector<index_t>{0}));
    const LoadedGraph h = load_matrix_market(dir.write("h.mtx", std::string(kBanner) + "5 2 0"));
    EXPECT_EQ(h.csr.num_rows, 5);
    EXPECT_EQ(h.csr.num_cols, 2);
}

struct BadFile {
    const char *content;
    std::vector<std::string> parts;
};

void expect_format_errors(const std::vector<BadFile> &cases) {
    ScratchDir dir;
    int i = 0;
    for (const BadFile &c : cases) {
        const std::string p = dir.write("bad" + std::to_string(i++) + ".mtx", c.content);
        SCOPED_TRACE(c.content);
        try {
            load_matrix_market(p);
            ADD_FAILURE() << "no exception";
        } catch (const FormatError &e) {
            const std::string msg = e.what();
            EXPECT_NE(msg.find(p), std::string::npos) << msg;
            for (const std::string &part : c.parts) EXPECT_NE(msg.find(part), std::string::npos) << msg;
        } catch (const std::exception &e) {
            ADD_FAILURE() << "wrong exception type: " << e.what();
        }
    }
}

TEST(MatrixMarket, BannerErrors) {
    expect_format_errors({
        {"", {"empty file"}},
        {"3 3 1\n1 1\n", {"missing %%MatrixMarket banner", "'3'"}},
        {"%MatrixMarket matrix coordinate pattern general\n1 1 0\n", {"missing %%MatrixMarket banner"}},
        {"%%MatrixMarket matrix coordinate pattern\n1 1 0\n", {":1:", "banner has 4 fields"}},
        {"%%MatrixMarket matrix coordinate pattern general extra\n1 1 0\n", {"banner has 6 fields"}},
        {"%%MatrixMarket vector coordinate pattern general\n1 1 0\n", {"unsupported object 'vector'"}},
        {"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", {"unsupported format 'array'"}},
        {"%%MatrixMarket matrix sparse real general\n1 1 0\n", {"invalid format 'sparse'"}},
        {"%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", {"unsupported field 'complex'"}},
        {"%%MatrixMarket matrix coordinate foo general\n1 1 0\n", {"invalid field 'foo'"}},
        {"%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n", {"unsupported symmetry 'hermitian'"}},
        {"%%MatrixMarket matrix coordinate real skew-symmetric\n1 1 0\n", {"unsupported symmetry 'skew-symmetric'"}},
        {"%%MatrixMarket matrix coordinate real diagonal\n1 1 0\n", {"invalid symmetry 'diagonal'"}},
    });
}

TEST(MatrixMarket, SizeLineErrors) {
    expect_format_errors({
        {"%%MatrixMarket matrix coordinate pattern general\n% only comments\n\n", {"missing size line"}},
        {"%%MatrixMarket matrix coordinate pattern general\n3 3\n", {":2:", "size line has 2 values, expected 3"}},
        {"%%MatrixMarket matrix coordinate pattern general\n%c\n3 3 1 5\n1 1\n", {":3:", "has 4 values"}},
        {"%%MatrixMarket matrix coordinate pattern general\n3 -3 1\n", {"cols = -3 is negative"}},
        {"%%MatrixMarket matrix coordinate pattern general\n-1 3 1\n", {"rows = -1 is negative"}},
        {"%%MatrixMarket matrix coordinate pattern general\n3 3 -2\n", {"entries = -2 is negative"}},
        {"%%MatrixMarket matrix coordinate pattern general\n3000000000 3 1\n1 1\n",
         {"rows = 3000000000 exceeds INT32_MAX"}},
        {"%%MatrixMarket matrix coordinate pattern general\n3 2147483648 1\n1 1\n",
         {"cols = 2147483648 exceeds INT32_MAX"}},
        {"%%MatrixMarket matrix coordinate pattern general\n3 3 99999999999999999999999\n1 1\n",
         {"entries = 99999999999999999999999 exceeds INT32_MAX"}},
        {"%%MatrixMarket matrix coordinate pattern general\n3 x 1\n1 1\n", {":2:", "cols 'x'", "not an integer"}},
        {"%%MatrixMarket matrix coordinate pattern general\n3 3.0 1\n1 1\n", {"cols '3.0'", "not an integer"}},
        {"%%MatrixMarket matrix coordinate pattern symmetric\n3 4 1\n1 1\n", {"must be square", "3 x 4"}},
    });
}

TEST(MatrixMarket, EntryErrors) {
    expect_format_errors({
        {"%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 1\n2 2\n",
         {"ends after 2 of the 3 entries declared on line 2", "truncated"}},
        {"%%MatrixMarket matrix coordinate pattern general\n3 3 2000000000\n1 1\n",
         {"ends after 1 of the 2000000000 entries"}},
        {"%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1\n2 2\n",
         {":4:", "more entries than the 1 declared on line 2"}},
        {"%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 1\n1 a\n", {":4:", "column index 'a'"}},
        {"%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1.5 2\n", {":3:", "row index '1.5'"}},
        {"%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2x\n", {":3:", "column index '2x'"}},
        {"%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1\n", {":3:", "has 3 values, expected 2"}},
        {"%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1\n", {":3:", "has 1 values, expected 2"}},
        {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1\n", {":3:", "has 2 values, expected 3"}},
        {"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n%\n2 2 abc\n", {":5:", "value 'abc'"}},
        {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1e999999\n", {"value '1e999999'"}},
        {"%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 2.5\n", {":3:", "value '2.5'", "integer"}},
    });
}

TEST(MatrixMarket, IndicesOutOfRangeAreGraphErrors) {
    ScratchDir dir;
    const std::string a = dir.write("a.mtx", std::string(kBanner) + "3 4 2\n1 1\n0 1\n");
    EXPECT_TRUE(throws_with<GraphError>([&] { load_matrix_market(a); },
                                        {a, ":4:", "row index 0 is out of range [1, 3]", "1-based"}));
    const std::string b = dir.write("b.mtx", std::string(kBanner) + "3 4 1\n3 5\n");
    EXPECT_TRUE(throws_with<GraphError>([&] { load_matrix_market(b); }, {":3:", "column index 5", "[1, 4]"}));
    const std::string c = dir.write("c.mtx", std::string(kBanner) + "3 4 1\n-2 1\n");
    EXPECT_TRUE(throws_with<GraphError>([&] { load_matrix_market(c); }, {"row index -2"}));
    const std::string d = dir.write("d.mtx", std::string(kBanner) + "3 4 1\n99999999999999999999 1\n");
    EXPECT_TRUE(throws_with<GraphError>([&] { load_matrix_market(d); }, {"row index 99999999999999999999"}));
}

TEST(MatrixMarket, MissingFile) {
    ScratchDir dir;
    const std::string p = dir.path("does-not-exist.mtx");
    EXPECT_TRUE(throws_with<FormatError>([&] { load_matrix_market(p); }, {"cannot open", p}));
}

TEST(MatrixMarket, GarbageBytes) {
    ScratchDir dir;
    std::mt19937 rng(7);
    for (int t = 0; t < 20; t++) {
        std::string bytes(200 + t * 13, '\0');
        for (char &c : bytes) c = static_cast<char>(rng());
        const std::string p = dir.write("garbage.mtx", bytes);
        EXPECT_THROW(load_matrix_market(p), FormatError);
        // A valid banner followed by garbage.
        const std::string q = dir.write("garbage2.mtx", std::string(kBanner) + bytes);
        EXPECT_THROW(load_matrix_market(q), Error);
    }
    const std::string nul = std::string(8, '\0');
    EXPECT_THROW(load_matrix_market(dir.write("nul.mtx", nul)), FormatError);
    EXPECT_THROW(load_matrix_market(dir.write("nul2.mtx", std::string(kBanner) + nul + "\n1 1 0\n")), FormatError);
    EXPECT_THROW(load_matrix_market(dir.write("nul3.mtx", std::string(kBanner) + "1 1 0\n" + nul)), FormatError);
}

TEST(MatrixMarket, TruncatedAtEveryByte) {
    ScratchDir dir;
    const std::string full =
        "%%MatrixMarket matrix coordinate real general\n% c\n4 4 4\n1 2 0.5\n3 4 -1.25\n4 4 2e3\n2 1 7\n";
    const size_t last_line = full.rfind("2 1 7");
    for (size_t cut = 0; cut < full.size(); cut++) {
        const std::string p = dir.write("cut.mtx", full.substr(0, cut));
        SCOPED_TRACE(cut);
        try {
            const LoadedGraph g = load_matrix_market(p);
            // Only a cut inside the last entry's value can still be a complete file.
            EXPECT_EQ(cut, last_line + 5);
            EXPECT_EQ(g.csr.nnz(), 4);
        } catch (const FormatError &) {
        }
    }
}

TEST(MatrixMarket, RandomEditsNeverCrashOrAcceptInvalidGraphs) {
    ScratchDir dir;
    const std::string base =
        "%%MatrixMarket matrix coordinate real symmetric\n% c\n5 5 6\n1 1 1\n2 1 0.5\n3 2 -2\n5 3 1e3\n"
        "4 4 7\n5 1 3\n";
    const std::string alphabet = "0123456789 -+.e\n%\t";
    std::mt19937 rng(17);
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
        const std::string p = dir.write("edit.mtx", s);
        try {
            const LoadedGraph g = load_matrix_market(p);
            ASSERT_NO_THROW(validate(g.csr)) << s;
            ASSERT_EQ(g.values.size(), static_cast<size_t>(g.csr.nnz())) << s;
            loaded++;
        } catch (const Error &) {
        }
    }
    EXPECT_GT(loaded, 0);
    EXPECT_LT(loaded, 500);
}

// Round trips through a written file.

void expect_round_trip_equal(const CSR &orig, const std::vector<float> &values, const LoadedGraph &back) {
    CSR sorted = orig;
    sort_rows(sorted);
    EXPECT_EQ(back.csr.num_rows, orig.num_rows);
    EXPECT_EQ(back.csr.num_cols, orig.num_cols);
    EXPECT_EQ(back.csr.row_ptr, sorted.row_ptr);
    EXPECT_EQ(back.csr.col_idx, sorted.col_idx);
    EXPECT_EQ(edges_of(back.csr), edges_of(orig));
    EXPECT_EQ(back.values, values);
    EXPECT_NO_THROW(validate(back.csr));
}

std::vector<float> random_values(int64_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> d(-100.0f, 100.0f);
    std::vector<float> v(static_cast<size_t>(n));
    for (float &x : v) x = d(rng);
    return v;
}

TEST(MatrixMarket, RoundTripRandomGraphs) {
    ScratchDir dir;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        SCOPED_TRACE(seed);
        RandomGraphOptions opt;
        if (seed % 2 == 0) opt.num_src = 77;
        const CSR g = random_graph(seed, opt).csr();
        const std::string p = dir.path("rt" + std::to_string(seed) + ".mtx");
        save_matrix_market(p, g);
        expect_round_trip_equal(g, {}, load_matrix_market(p));
        const std::vector<float> vals = random_values(g.nnz(), seed);
        save_matrix_market(p, g, vals);
        expect_round_trip_equal(g, vals, load_matrix_market(p));
    }
}

TEST(MatrixMarket, RoundTripKeepsExtremeValuesExactly) {
    ScratchDir dir;
    const CSR g = make_csr(2, 2, {0, 3, 5}, {0, 1, 1, 0, 1}, {4, 2, 0, 3, 1});
    const std::vector<float> vals = {1e-30f, -0.0f, std::numeric_limits<float>::max(),
                                     std::numeric_limits<float>::denorm_min(), 0.1f};
    const std::string p = dir.path("v.mtx");
    save_matrix_market(p, g, vals);
    const LoadedGraph back = load_matrix_market(p);
    ASSERT_EQ(back.values.size(), vals.size());
    for (size_t i = 0; i < vals.size(); i++) {
        EXPECT_EQ(back.values[i], vals[i]) << i;
        EXPECT_EQ(std::signbit(back.values[i]), std::signbit(vals[i])) << i;
    }
    expect_round_trip_equal(g, vals, back);
}

TEST(MatrixMarket, RoundTripEmptyGraphAndIsolatedNodes) {
    ScratchDir dir;
    const std::string p = dir.path("e.mtx");
    const CSR g = make_csr(6, 3, {0, 0, 0, 1, 1, 1, 1}, {2});
    save_matrix_market(p, g);
    expect_round_trip_equal(g, {}, load_matrix_market(p));
    save_matrix_market(p, make_csr(0, 0, {0}, {}));
    EXPECT_EQ(load_matrix_market(p).csr.num_rows, 0);
}

TEST(MatrixMarket, SaveRejectsInvalidInput) {
    ScratchDir dir;
    const std::string p = dir.path("x.mtx");
    const CSR g = make_csr(2, 2, {0, 1, 2}, {0, 1});
    EXPECT_TRUE(throws_with<GraphError>([&] { save_matrix_market(p, g, {1.0f}); },
                                        {"values has 1 entries", "nnz = 2"}));
    const CSR bad = make_csr(2, 2, {0, 1, 2}, {0, 2});
    EXPECT_TRUE(throws_with<GraphError>([&] { save_matrix_market(p, bad); }, {"col_idx[1] = 2"}));
    EXPECT_THROW(save_matrix_market(dir.path("no/such/dir/x.mtx"), g), Error);
}

TEST(MatrixMarket, LoadGraphDispatchesOnExtension) {
    ScratchDir dir;
    const std::string p = dir.write("G.MTX", std::string(kBanner) + "2 2 1\n2 1\n");
    const LoadedGraph g = load_graph(p);
    EXPECT_EQ(g.csr.num_rows, 2);
    EXPECT_EQ(edges_of(g.csr), (EdgeMap{{1, 0}}));
}

}  // namespace
}  // namespace gsparse::test
