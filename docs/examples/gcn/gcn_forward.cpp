// A 2-layer GCN forward pass, Z = Â relu(Â X W1) W2 with Â = D^-1/2 (A + I) D^-1/2, whose sparse
// aggregations run on kernels emitted by gsparse-compile (u_mul_e_sum: neighbour features times
// the edge's normalization weight, summed). Dense products are plain loops. Prints a checksum of Z
// and compares every value with a plain C++ evaluation of the same model.
//
//   gcn_forward GRAPH.mtx
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gcn_aggregate_hidden.h"
#include "gcn_aggregate_out.h"

namespace {

constexpr int kIn = 32, kHidden = 16, kOut = 7;

/// Reads a Matrix Market pattern/real file (general or symmetric) as edges c -> r.
bool read_mtx(const std::string &path, int &n, std::vector<int> &src, std::vector<int> &dst) {
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

void dense(const std::vector<float> &x, int rows, int in, const std::vector<float> &w, int out, std::vector<float> &y) {
    y.assign(static_cast<size_t>(rows) * out, 0.f);
    for (int i = 0; i < rows; i++)
        for (int k = 0; k < in; k++)
            for (int j = 0; j < out; j++) y[i * out + j] += x[i * in + k] * w[k * out + j];
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: gcn_forward GRAPH.mtx\n");
        return 2;
    }
    int n = 0;
    std::vector<int> src, dst;
    if (!read_mtx(argv[1], n, src, dst)) {
        std::fprintf(stderr, "cannot read %s as a square Matrix Market graph\n", argv[1]);
        return 2;
    }
    for (int v = 0; v < n; v++) src.push_back(v), dst.push_back(v);  // A + I
    const int nnz = static_cast<int>(src.size());

    // CSR by destination (edge ids are the CSR positions) and the normalization weight per edge.
    std::vector<int32_t> row_ptr(n + 1, 0), col_idx(nnz);
    for (int d : dst) row_ptr[d + 1]++;
    for (int v = 0; v < n; v++) row_ptr[v + 1] += row_ptr[v];
    std::vector<int32_t> fill(row_ptr.begin(), row_ptr.end() - 1);
    for (int e = 0; e < nnz; e++) col_idx[fill[dst[e]]++] = src[e];
    std::vector<float> deg(n), norm(nnz);
    for (int v = 0; v < n; v++) deg[v] = static_cast<float>(row_ptr[v + 1] - row_ptr[v]);
    for (int v = 0; v < n; v++)
        for (int p = row_ptr[v]; p < row_ptr[v + 1]; p++) norm[p] = 1.f / std::sqrt(deg[v] * deg[col_idx[p]]);

    // Deterministic inputs and weights.
    std::vector<float> x(static_cast<size_t>(n) * kIn), w1(kIn * kHidden), w2(kHidden * kOut);
    for (size_t i = 0; i < x.size(); i++) x[i] = std::sin(0.37f * i);
    for (size_t i = 0; i < w1.size(); i++) w1[i] = 0.2f * std::cos(0.11f * i);
    for (size_t i = 0; i < w2.size(); i++) w2[i] = 0.2f * std::sin(0.23f * i);

    // Layer 1: H = relu(Â (X W1)); layer 2: Z = Â (H W2).
    std::vector<float> xw, h(static_cast<size_t>(n) * kHidden), hw, z(static_cast<size_t>(n) * kOut);
    dense(x, n, kIn, w1, kHidden, xw);
    int rc = gsparse_kernels::gcn_aggregate_hidden(n, n, nnz, row_ptr.data(), col_idx.data(), nullptr, xw.data(),
                                                   norm.data(), h.data());
    if (rc != gsparse_kernels::kOk) {
        std::fprintf(stderr, "layer 1 kernel failed: %d\n", rc);
        return 1;
    }
    for (float &v : h) v = std::max(v, 0.f);
    dense(h, n, kHidden, w2, kOut, hw);
    rc = gsparse_kernels::gcn_aggregate_out(n, n, nnz, row_ptr.data(), col_idx.data(), nullptr, hw.data(),
                                            norm.data(), z.data());
    if (rc != gsparse_kernels::kOk) {
        std::fprintf(stderr, "layer 2 kernel failed: %d\n", rc);
        return 1;
    }

    // The same model with plain loops over the edge list.
    auto aggregate = [&](const std::vector<float> &in, int f) {
        std::vector<double> out(static_cast<size_t>(n) * f, 0.0);
        for (int e = 0; e < nnz; e++) {
            const double wgt = 1.0 / std::sqrt(static_cast<double>(deg[dst[e]]) * deg[src[e]]);
            for (int j = 0; j < f; j++) out[dst[e] * f + j] += wgt * in[src[e] * f + j];
        }
        return out;
    };
    std::vector<double> h_ref = aggregate(xw, kHidden);
    std::vector<float> h_ref_f(h_ref.size());
    for (size_t i = 0; i < h_ref.size(); i++) h_ref_f[i] = static_cast<float>(std::max(h_ref[i], 0.0));
    std::vector<float> hw_ref;
    dense(h_ref_f, n, kHidden, w2, kOut, hw_ref);
    std::vector<double> z_ref = aggregate(hw_ref, kOut);

    double checksum = 0, checksum_ref = 0, worst = 0;
    for (size_t i = 0; i < z.size(); i++) {
        checksum += z[i];
        checksum_ref += z_ref[i];
        worst = std::max(worst, std::fabs(z[i] - z_ref[i]) / (1e-3 + std::fabs(z_ref[i])));
    }
    std::printf("graph: %d nodes, %d edges with self-loops\n", n, nnz);
    std::printf("checksum %.6f, reference %.6f, worst relative difference %.2e\n", checksum, checksum_ref, worst);
    const bool ok = worst < 1e-3;
    std::printf("%s\n", ok ? "OK" : "MISMATCH");
    return ok ? 0 : 1;
}
