// Helpers of the graph tests: scratch directories, exception-message assertions, and comparisons
// of graphs edge by edge (by edge id).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "core/error.h"
#include "graph/formats.h"
#include "support/throws_with.h"

namespace gsparse::test {

/// A fresh directory under the test temp directory, removed with its content on destruction.
class ScratchDir {
public:
    ScratchDir() {
        static std::atomic<int> counter{0};
        const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
        std::string name = "gsparse_graph_";
        if (info) name += std::string(info->test_suite_name()) + "_" + info->name() + "_";
        for (char &c : name)
            if (c == '/') c = '_';
        name += std::to_string(::getpid()) + "_" + std::to_string(counter++);
        dir_ = std::filesystem::path(::testing::TempDir()) / name;
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
    }
    ~ScratchDir() {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    ScratchDir(const ScratchDir &) = delete;
    ScratchDir &operator=(const ScratchDir &) = delete;

    std::string path(const std::string &file) const { return (dir_ / file).string(); }
    /// Writes content (bytes as given) to file and returns its path.
    std::string write(const std::string &file, const std::string &content) const {
        const std::string p = path(file);
        std::ofstream out(p, std::ios::binary);
        out.write(content.data(), static_cast<std::streamsize>(content.size()));
        return p;
    }

private:
    std::filesystem::path dir_;
};

inline std::string read_bytes(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// For each edge id e: (destination, source) of e.
using EdgeMap = std::vector<std::pair<index_t, index_t>>;

inline EdgeMap edges_of(const CSR &g) {
    EdgeMap m(static_cast<size_t>(g.nnz()), {-1, -1});
    for (int64_t r = 0; r < g.num_rows; r++)
        for (index_t p = g.row_ptr[r]; p < g.row_ptr[r + 1]; p++) m[g.edge_id(p)] = {static_cast<index_t>(r), g.col_idx[p]};
    return m;
}

inline EdgeMap edges_of(const CSC &g) {
    EdgeMap m(static_cast<size_t>(g.nnz()), {-1, -1});
    for (int64_t c = 0; c < g.num_cols; c++)
        for (index_t p = g.col_ptr[c]; p < g.col_ptr[c + 1]; p++) m[g.edge_id(p)] = {g.row_idx[p], static_cast<index_t>(c)};
    return m;
}

inline EdgeMap edges_of(const COO &g) {
    EdgeMap m(static_cast<size_t>(g.nnz()), {-1, -1});
    for (int64_t i = 0; i < g.nnz(); i++) m[g.edge_id(i)] = {g.row[i], g.col[i]};
    return m;
}

/// Edge ids materialized (identity written out), for comparing CSRs whatever their edge-id encoding.
inline std::vector<index_t> explicit_ids(const CSR &g) {
    std::vector<index_t> ids(static_cast<size_t>(g.nnz()));
    for (int64_t i = 0; i < g.nnz(); i++) ids[i] = g.edge_id(i);
    return ids;
}

/// Same shape, arrays and edge ids position by position.
inline void expect_same_csr(const CSR &a, const CSR &b) {
    EXPECT_EQ(a.num_rows, b.num_rows);
    EXPECT_EQ(a.num_cols, b.num_cols);
    EXPECT_EQ(a.row_ptr, b.row_ptr);
    EXPECT_EQ(a.col_idx, b.col_idx);
    EXPECT_EQ(explicit_ids(a), explicit_ids(b));
}

inline CSR make_csr(int64_t rows, int64_t cols, std::vector<index_t> row_ptr, std::vector<index_t> col_idx,
                    std::vector<index_t> edge_ids = {}) {
    CSR g;
    g.num_rows = rows;
    g.num_cols = cols;
    g.row_ptr = std::move(row_ptr);
    g.col_idx = std::move(col_idx);
    g.edge_ids = std::move(edge_ids);
    return g;
}

}  // namespace gsparse::test
