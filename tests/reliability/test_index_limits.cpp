// Resource limits of the graph side: indices are int32, so every way a graph enters gsparse (the
// three file formats, the array constructors, validation) rejects sizes beyond INT32_MAX with an
// error naming the size, before allocating anything for it.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "core/error.h"
#include "graph/graph.h"
#include "graph/io.h"
#include "graph/validate.h"
#include "../graph/graph_test_util.h"

namespace gsparse {
namespace {

using test::ScratchDir;
using test::throws_with;

constexpr int64_t kBeyond = int64_t{1} << 31;  // INT32_MAX + 1

TEST(IndexLimits, MatrixMarketSizesBeyondInt32) {
    ScratchDir dir;
    const std::string banner = "%%MatrixMarket matrix coordinate pattern general\n";
    EXPECT_TRUE(throws_with<FormatError>([&] { load_matrix_market(dir.write("r.mtx", banner + "2147483648 3 0\n")); },
                                         {"rows", "exceeds INT32_MAX"}));
    EXPECT_TRUE(throws_with<FormatError>([&] { load_matrix_market(dir.write("c.mtx", banner + "3 2147483648 0\n")); },
                                         {"cols", "exceeds INT32_MAX"}));
    EXPECT_TRUE(throws_with<FormatError>(
        [&] { load_matrix_market(dir.write("e.mtx", banner + "3 3 99999999999999\n1 1\n")); },
        {"entries", "exceeds INT32_MAX"}));
    EXPECT_TRUE(throws_with<GraphError>(
        [&] { load_matrix_market(dir.write("i.mtx", banner + "3 3 1\n4294967297 1\n")); }, {"row index", "out of range"}));
}

TEST(IndexLimits, EdgeListIdsAndHeaderBeyondInt32) {
    ScratchDir dir;
    // Node ids are < INT32_MAX: id INT32_MAX would need INT32_MAX + 1 nodes.
    EXPECT_TRUE(throws_with<GraphError>([&] { load_edge_list(dir.write("a.el", "0 2147483647\n")); },
                                        {"destination id 2147483647", "INT32_MAX"}));
    EXPECT_TRUE(throws_with<GraphError>([&] { load_edge_list(dir.write("b.el", "99999999999999999999 0\n")); },
                                        {"source id", "out of range"}));
    EXPECT_TRUE(throws_with<FormatError>(
        [&] { load_edge_list(dir.write("h.el", "#!gsparse num_dst=2147483648 num_src=1\n0 0\n")); },
        {"num_dst", "out of range [0, INT32_MAX]"}));
    EXPECT_TRUE(throws_with<GraphError>([&] { load_edge_list(dir.write("n.el", "0 0\n"), kBeyond); },
                                        {"num_nodes = 2147483648", "out of range"}));
}

std::string gcsr_header(int64_t rows, int64_t cols, int64_t nnz) {
    std::string h("GSPCSR\0\1", 8);
    const uint32_t version = 1, flags = 1;
    h.append(reinterpret_cast<const char *>(&version), 4);
    h.append(reinterpret_cast<const char *>(&flags), 4);
    for (int64_t v : {rows, cols, nnz}) h.append(reinterpret_cast<const char *>(&v), 8);
    return h;
}

TEST(IndexLimits, BinaryCsrHeaderBeyondInt32) {
    ScratchDir dir;
    EXPECT_TRUE(throws_with<FormatError>([&] { load_binary_csr(dir.write("r.gcsr", gcsr_header(kBeyond, 1, 0))); },
                                         {"num_rows = 2147483648", "INT32_MAX"}));
    EXPECT_TRUE(throws_with<FormatError>([&] { load_binary_csr(dir.write("c.gcsr", gcsr_header(1, kBeyond, 0))); },
                                         {"num_cols = 2147483648", "INT32_MAX"}));
    EXPECT_TRUE(throws_with<FormatError>([&] { load_binary_csr(dir.write("e.gcsr", gcsr_header(1, 1, kBeyond))); },
                                         {"nnz = 2147483648", "INT32_MAX"}));
    // A header that claims a huge (but int32) graph in a small file is checked against the file
    // size before anything is allocated.
    EXPECT_TRUE(throws_with<FormatError>(
        [&] { load_binary_csr(dir.write("big.gcsr", gcsr_header(2147483647, 2147483647, 2147483647))); },
        {"truncated"}));
}

TEST(IndexLimits, ArrayConstructorsAndValidation) {
    const index_t row_ptr[2] = {0, 0};
    EXPECT_TRUE(throws_with<GraphError>([] { Graph::from_edges(kBeyond, {}, {}); }, {"num_nodes = 2147483648"}));
    EXPECT_TRUE(throws_with<GraphError>([&] { Graph::from_csr_arrays(kBeyond, 1, row_ptr, nullptr, nullptr, 0); },
                                        {"num_rows = 2147483648"}));
    EXPECT_TRUE(throws_with<GraphError>([&] { Graph::from_csr_arrays(1, kBeyond, row_ptr, nullptr, nullptr, 0); },
                                        {"num_cols = 2147483648"}));
    EXPECT_TRUE(throws_with<GraphError>([&] { Graph::from_csr_arrays(1, 1, row_ptr, nullptr, nullptr, kBeyond); },
                                        {"nnz = 2147483648"}));
    CSR csr;
    csr.num_rows = 1;
    csr.num_cols = kBeyond;
    csr.row_ptr = {0, 0};
    EXPECT_THROW(validate(csr), GraphError);
    COO coo;
    coo.num_rows = kBeyond;
    coo.num_cols = 1;
    EXPECT_THROW(Graph::from_coo(coo), GraphError);
}

}  // namespace
}  // namespace gsparse
