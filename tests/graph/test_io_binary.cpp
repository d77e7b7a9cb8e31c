#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "graph/convert.h"
#include "graph/io.h"
#include "graph/validate.h"
#include "graph_test_util.h"
#include "support/random_graph.h"

namespace gsparse::test {
namespace {

template <typename T>
T read_le(const std::string &bytes, size_t offset) {
    T v{};
    std::memcpy(&v, bytes.data() + offset, sizeof(T));  // the test hosts are little-endian
    return v;
}

template <typename T>
void write_le(std::string &bytes, size_t offset, T v) {
    std::memcpy(&bytes[offset], &v, sizeof(T));
}

// 3 x 4 graph, unsorted row 0, permuted edge ids.
CSR sample() { return make_csr(3, 4, {0, 3, 3, 5}, {3, 0, 2, 1, 1}, {4, 2, 0, 1, 3}); }

TEST(BinaryCsr, LayoutByteByByte) {
    ScratchDir dir;
    const std::string p = dir.path("g.gcsr");
    const std::vector<float> vals = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f};
    save_binary_csr(p, sample(), vals);
    const std::string b = read_bytes(p);
    ASSERT_EQ(b.size(), 40u + 4 * 4 + 3 * 5 * 4);
    EXPECT_EQ(b.substr(0, 8), std::string("GSPCSR\0\1", 8));
    EXPECT_EQ(read_le<uint32_t>(b, 8), 1u);   // version
    EXPECT_EQ(read_le<uint32_t>(b, 12), 2u);  // flags: has values, explicit edge ids
    EXPECT_EQ(read_le<int64_t>(b, 16), 3);
    EXPECT_EQ(read_le<int64_t>(b, 24), 4);
    EXPECT_EQ(read_le<int64_t>(b, 32), 5);
    EXPECT_EQ(read_le<int32_t>(b, 40 + 4 * 1), 3);             // row_ptr[1]
    EXPECT_EQ(read_le<int32_t>(b, 56 + 4 * 0), 3);             // col_idx[0]
    EXPECT_EQ(read_le<int32_t>(b, 76 + 4 * 0), 4);             // edge_ids[0]
    EXPECT_EQ(read_le<float>(b, 96 + 4 * 4), 4.5f);            // values[4]
}

TEST(BinaryCsr, IdentityEdgeIdsAreNotStored) {
    ScratchDir dir;
    const std::string p = dir.path("g.gcsr");
    CSR g = sample();
    g.edge_ids.clear();
    save_binary_csr(p, g);
    const std::string b = read_bytes(p);
    EXPECT_EQ(b.size(), 40u + 4 * 4 + 5 * 4);
    EXPECT_EQ(read_le<uint32_t>(b, 12), 1u);
    const LoadedGraph back = load_binary_csr(p);
    EXPECT_TRUE(back.csr.identity_edge_ids());
    expect_same_csr(back.csr, g);
    EXPECT_TRUE(back.values.empty());
}

TEST(BinaryCsr, RoundTripIsExact) {
    ScratchDir dir;
    for (uint64_t seed = 40; seed <= 43; seed++) {
        SCOPED_TRACE(seed);
        RandomGraphOptions opt;
        if (seed % 2) opt.num_src = 31;
        const Graph graph = random_graph(seed, opt);
        const CSR &g = graph.csr();
        std::vector<float> vals(static_cast<size_t>(g.nnz()));
        for (size_t i = 0; i < vals.size(); i++) vals[i] = static_cast<float>(i % 97) / 7.0f;
        const std::string p = dir.path("rt.gcsr");
        save_binary_csr(p, g, vals);
        const LoadedGraph back = load_binary_csr(p);
        // Positions are kept as stored (rows are not re-sorted).
        expect_same_csr(back.csr, g);
        EXPECT_EQ(back.values, vals);
        save_graph(dir.path("rt2.GCSR"), g);
        const LoadedGraph back2 = load_graph(dir.path("rt2.GCSR"));
        expect_same_csr(back2.csr, g);
        EXPECT_TRUE(back2.values.empty());
    }
}

TEST(BinaryCsr, EmptyGraph) {
    ScratchDir dir;
    const std::string p = dir.path("e.gcsr");
    save_binary_csr(p, make_csr(0, 0, {0}, {}));
    EXPECT_EQ(read_bytes(p).size(), 44u);
    const LoadedGraph g = load_binary_csr(p);
    EXPECT_EQ(g.csr.num_rows, 0);
    EXPECT_EQ(g.csr.row_ptr, (std::vector<index_t>{0}));
}

class BinaryCsrCorrupt : public ::testing::Test {
protected:
    void SetUp() override {
        path_ = dir_.path("g.gcsr");
        save_binary_csr(path_, sample(), {1, 2, 3, 4, 5});
        good_ = read_bytes(path_);
    }
    std::string write(const std::string &bytes) { return dir_.write("bad.gcsr", bytes); }

    ScratchDir dir_;
    std::string path_;
    std::string good_;
};

TEST_F(BinaryCsrCorrupt, TruncatedAtEveryLength) {
    for (size_t n = 0; n < good_.size(); n++) {
        const std::string p = write(good_.substr(0, n));
        if (n < 40)
            EXPECT_TRUE(throws_with<FormatError>([&] { load_binary_csr(p); },
                                                 {p, "has " + std::to_string(n) + " bytes", "40-byte"}))
                << n;
        else
            EXPECT_TRUE(throws_with<FormatError>(
                [&] { load_binary_csr(p); },
                {"implies " + std::to_string(good_.size()) + " bytes but the file has " + std::to_string(n),
                 "truncated"}))
                << n;
    }
}

TEST_F(BinaryCsrCorrupt, TrailingData) {
    const std::string p = write(good_ + "xyz");
    EXPECT_TRUE(throws_with<FormatError>([&] { load_binary_csr(p); },
                                         {"implies 116 bytes but the file has 119", "trailing data"}));
}

TEST_F(BinaryCsrCorrupt, BadMagicVersionAndFlags) {
    std::string b = good_;
    b[2] = 'X';
    EXPECT_TRUE(throws_with<FormatError>([&] { load_binary_csr(write(b)); }, {"bad magic", "not a .gcsr"}));
    b = good_;
    write_le<uint32_t>(b, 8, 7);
    EXPECT_TRUE(throws_with<FormatError>([&] { load_binary_csr(write(b)); }, {"unsupported .gcsr version 7"}));
    b = good_;
    write_le<uint32_t>(b, 12, 2 | 8);
    EXPECT_TRUE(throws_with<FormatError>([&] { load_binary_csr(write(b)); }, {"flags = 10", "unknown bits"}));
}

TEST_F(BinaryCsrCorrupt, AbsurdCountsFailBeforeAllocating) {
    std::string b = good_;
    write_le<int64_t>(b, 32, int64_t{1} << 60);
    EXPECT_TRUE(throws_with<FormatError>([&] { load_binary_csr(write(b)); },
                                         {"nnz = 1152921504606846976", "out of range [0, INT32_MAX]"}));
    b = good_;
    write_le<int64_t>(b, 32, 2000000000);  // plausible count, but the file is tiny
    EXPECT_TRUE(throws_with<FormatError>([&] { load_binary_csr(write(b)); },
                                         {"nnz = 2000000000", "but the file has 116 bytes", "truncated"}));
    b = good_;
    write_le<int64_t>(b, 16, -3);
    EXPECT_TRUE(throws_with<FormatError>([&] { load_binary_csr(write(b)); }, {"num_rows = -3"}));
    b = good_;
    write_le<int64_t>(b, 24, int64_t{1} << 31);
    EXPECT_TRUE(throws_with<FormatError>([&] { load_binary_csr(write(b)); }, {"num_cols = 2147483648"}));
}

TEST_F(BinaryCsrCorrupt, InconsistentArraysAreGraphErrors) {
    std::string b = good_;
    write_le<int32_t>(b, 56 + 4 * 2, 4);  // col_idx[2] = 4 with num_cols = 4
    EXPECT_TRUE(throws_with<GraphError>([&] { load_binary_csr(write(b)); }, {"col_idx[2] = 4", "row 0"}));
    b = good_;
    write_le<int32_t>(b, 40 + 4 * 2, 1);  // row_ptr[2] = 1 < row_ptr[1] = 3
    EXPECT_TRUE(throws_with<GraphError>([&] { load_binary_csr(write(b)); },
                                        {"row_ptr[2] = 1 is less than row_ptr[1] = 3"}));
    b = good_;
    write_le<int32_t>(b, 76 + 4 * 3, 4);  // edge_ids[3] duplicates edge_ids[0] = 4
    EXPECT_TRUE(throws_with<GraphError>([&] { load_binary_csr(write(b)); },
                                        {"edge_ids[3] = 4 duplicates edge_ids[0] = 4"}));
}

TEST_F(BinaryCsrCorrupt, RandomByteFlipsNeverCrash) {
    std::mt19937 rng(99);
    int loaded = 0, rejected = 0;
    for (int t = 0; t < 300; t++) {
        std::string b = good_;
        const int flips = 1 + static_cast<int>(rng() % 4);
        for (int k = 0; k < flips; k++) b[rng() % b.size()] = static_cast<char>(rng());
        try {
            const LoadedGraph g = load_binary_csr(write(b));
            EXPECT_NO_THROW(validate(g.csr));
            loaded++;
        } catch (const FormatError &) {
            rejected++;
        } catch (const GraphError &) {
            rejected++;
        }
    }
    EXPECT_GT(rejected, 0);
    EXPECT_EQ(loaded + rejected, 300);
}

TEST_F(BinaryCsrCorrupt, GarbageFiles) {
    std::mt19937 rng(5);
    for (int t = 0; t < 20; t++) {
        std::string b(static_cast<size_t>(rng() % 400), '\0');
        for (char &c : b) c = static_cast<char>(rng());
        EXPECT_THROW(load_binary_csr(write(b)), FormatError);
    }
    EXPECT_THROW(load_binary_csr(dir_.path("missing.gcsr")), FormatError);
}

TEST(BinaryCsr, SaveRejectsInvalidInput) {
    ScratchDir dir;
    CSR g = sample();
    g.edge_ids[0] = 2;
    EXPECT_TRUE(throws_with<GraphError>([&] { save_binary_csr(dir.path("x.gcsr"), g); }, {"edge_ids[1] = 2"}));
    EXPECT_TRUE(throws_with<GraphError>([&] { save_binary_csr(dir.path("x.gcsr"), sample(), {1.0f}); },
                                        {"values has 1 entries"}));
}

}  // namespace
}  // namespace gsparse::test
