// The parts of the GCN example shared by its CPU and CUDA programs: reading the graph, the
// normalized adjacency Â = D^-1/2 (A + I) D^-1/2 as CSR with one weight per edge, the inputs and
// weights, dense products, and the plain C++ evaluation of Z = Â relu(Â X W1) W2 to compare with.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace gcn {

constexpr int kIn = 32, kHidden = 16, kOut = 7;

struct Graph {
    int n = 0, nnz = 0;
    std::vector<int> src, dst;            ///< edges src -> dst, self-loops included
    std::vector<int32_t> row_ptr, col_idx;  ///< CSR by destination; edge ids are the CSR positions
    std::vector<float> deg, norm;         ///< in-degree per node, Â's weight per CSR position
};

/// Reads a Matrix Market pattern/real file (general or symmetric) as edges c -> r.
inline bool read_mtx(const std::string &path, int &n, std::vector<int> &src, std::vector<int> &dst) {
    std::ifstream in(path);
    std::string line;
    if (!std::getline(in, line) || line.rfind("%%MatrixMarket", 0) != 0) return false;
    const bool symmetric = line.find("symmetric") != std::string::npos;
    while (std::getline(in, line) && line[0] == '%') {}
    std::istringstream size(line);
    int rows, cols;
    long entries;
    if (!(size >> rows >> cols >> entries) || rows != cols) return false;
    n = rows;
    for (long i = 0; i < entries && std::getline(in, line); i++) {
        std::istringstream e(line);
        int r, c;
        if (!(e >> r >> c) || r < 1 || c < 1 || r > n || c > n) return false;
        if (r == c) continue;  // self-loops come from A + I
        src.push_back(c - 1), dst.push_back(r - 1);
        if (symmetric) src.push_back(r - 1), dst.push_back(c - 1);
    }
    return true;
}

/// The graph of path with self-loops, as CSR with Â's weights; false when it cannot be read.
inline bool load_graph(const std::string &path, Graph &g) {
    if (!read_mtx(path, g.n, g.src, g.dst)) return false;
    for (int v = 0; v < g.n; v++) g.src.push_back(v), g.dst.push_back(v);  // A + I
    g.nnz = static_cast<int>(g.src.size());
    g.row_ptr.assign(g.n + 1, 0);
    g.col_idx.assign(g.nnz, 0);
    for (int d : g.dst) g.row_ptr[d + 1]++;
    for (int v = 0; v < g.n; v++) g.row_ptr[v + 1] += g.row_ptr[v];
    std::vector<int32_t> fill(g.row_ptr.begin(), g.row_ptr.end() - 1);
    for (int e = 0; e < g.nnz; e++) g.col_idx[fill[g.dst[e]]++] = g.src[e];
    g.deg.resize(g.n);
    g.norm.resize(g.nnz);
    for (int v = 0; v < g.n; v++) g.deg[v] = static_cast<float>(g.row_ptr[v + 1] - g.row_ptr[v]);
    for (int v = 0; v < g.n; v++)
        for (int p = g.row_ptr[v]; p < g.row_ptr[v + 1]; p++) g.norm[p] = 1.f / std::sqrt(g.deg[v] * g.deg[g.col_idx[p]]);
    return true;
}

/// Deterministic input features X (n x kIn) and weights W1 (kIn x kHidden), W2 (kHidden x kOut).
inline void make_inputs(int n, std::vector<float> &x, std::vector<float> &w1, std::vector<float> &w2) {
    x.resize(static_cast<size_t>(n) * kIn), w1.resize(kIn * kHidden), w2.resize(kHidden * kOut);
    for (size_t i = 0; i < x.size(); i++) x[i] = std::sin(0.37f * i);
    for (size_t i = 0; i < w1.size(); i++) w1[i] = 0.2f * std::cos(0.11f * i);
    for (size_t i = 0; i < w2.size(); i++) w2[i] = 0.2f * std::sin(0.23f * i);
}

inline void dense(const std::vector<float> &x, int rows, int in, const std::vector<float> &w, int out,
                  std::vector<float> &y) {
    y.assign(static_cast<size_t>(rows) * out, 0.f);
    for (int i = 0; i < rows; i++)
        for (int k = 0; k < in; k++)
            for (int j = 0; j < out; j++) y[i * out + j] += x[i * in + k] * w[k * out + j];
}

/// Z of the same model with plain loops over the edge list.
inline std::vector<double> reference(const Graph &g, const std::vector<float> &x, const std::vector<float> &w1,
                                     const std::vector<float> &w2) {
    auto aggregate = [&](const std::vector<float> &in, int f) {
        std::vector<double> out(static_cast<size_t>(g.n) * f, 0.0);
        for (int e = 0; e < g.nnz; e++) {
            const double wgt = 1.0 / std::sqrt(static_cast<double>(g.deg[g.dst[e]]) * g.deg[g.src[e]]);
            for (int j = 0; j < f; j++) out[g.dst[e] * f + j] += wgt * in[g.src[e] * f + j];
        }
        return out;
    };
    std::vector<float> xw;
    dense(x, g.n, kIn, w1, kHidden, xw);
    std::vector<double> h = aggregate(xw, kHidden);
    std::vector<float> h_f(h.size());
    for (size_t i = 0; i < h.size(); i++) h_f[i] = static_cast<float>(std::max(h[i], 0.0));
    std::vector<float> hw;
    dense(h_f, g.n, kHidden, w2, kOut, hw);
    return aggregate(hw, kOut);
}

/// Prints the checksums and the worst relative difference; true when Z matches the reference.
inline bool compare(const Graph &g, const std::vector<float> &z, const std::vector<double> &z_ref) {
    double checksum = 0, checksum_ref = 0, worst = 0;
    for (size_t i = 0; i < z.size(); i++) {
        checksum += z[i];
        checksum_ref += z_ref[i];
        worst = std::max(worst, std::fabs(z[i] - z_ref[i]) / (1e-3 + std::fabs(z_ref[i])));
    }
    std::printf("graph: %d nodes, %d edges with self-loops\n", g.n, g.nnz);
    std::printf("checksum %.6f, reference %.6f, worst relative difference %.2e\n", checksum, checksum_ref, worst);
    const bool ok = worst < 1e-3;
    std::printf("%s\n", ok ? "OK" : "MISMATCH");
    return ok;
}

}  // namespace gcn
