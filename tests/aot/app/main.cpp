// Calls two emitted kernels on a small graph (an empty row, duplicate edges, a self-loop, edge ids
// that are not CSR positions) and checks them against plain loops; then checks that bad arguments
// come back as error codes. Prints OK on success.
#include <cmath>
#include <cstdio>
#include <vector>

#include "agg_max.h"
#include "agg_sum.h"
#include "agg_sum8.h"
#include "gsparse_dispatch.h"

int main() {
    // Edges src -> dst with edge id = index in these lists.
    const std::vector<int32_t> src = {0, 2, 2, 3, 4, 1, 4, 0, 5};
    const std::vector<int32_t> dst = {1, 1, 1, 3, 0, 4, 4, 0, 0};
    const int32_t n = 6, nnz = static_cast<int32_t>(src.size());
    // CSR by destination, rows keep edge-id order (node 2 and node 5 have no in-edges).
    std::vector<int32_t> row_ptr(n + 1, 0), col_idx, edge_ids;
    for (int32_t d : dst) row_ptr[d + 1]++;
    for (int32_t v = 0; v < n; v++) row_ptr[v + 1] += row_ptr[v];
    for (int32_t v = 0; v < n; v++)
        for (int32_t e = 0; e < nnz; e++)
            if (dst[e] == v) {
                col_idx.push_back(src[e]);
                edge_ids.push_back(e);
            }
    std::vector<float> x8(n * 8), x5(n * 5), w(nnz);
    for (size_t i = 0; i < x8.size(); i++) x8[i] = std::sin(0.7f * i);
    for (size_t i = 0; i < x5.size(); i++) x5[i] = std::cos(0.3f * i);
    for (int32_t e = 0; e < nnz; e++) w[e] = 0.5f + 0.25f * e;

    bool ok = true;
    // u_mul_e_max, F = 8, one weight per edge, mapped edge ids.
    std::vector<float> zmax(n * 8);
    std::vector<int32_t> au(n * 8), ae(n * 8);
    int rc = gsparse_kernels::agg_max(n, n, nnz, row_ptr.data(), col_idx.data(), edge_ids.data(), x8.data(), w.data(),
                                      zmax.data(), au.data(), ae.data());
    ok &= rc == gsparse_kernels::kOk;
    for (int32_t v = 0; v < n; v++)
        for (int f = 0; f < 8; f++) {
            float best = 0;
            int32_t bu = -1, be = -1;
            for (int32_t p = row_ptr[v]; p < row_ptr[v + 1]; p++) {
                float m = x8[col_idx[p] * 8 + f] * w[edge_ids[p]];
                if (bu < 0 || m > best) best = m, bu = col_idx[p], be = edge_ids[p];
            }
            ok &= zmax[v * 8 + f] == best && au[v * 8 + f] == bu && ae[v * 8 + f] == be;
        }
    // copy_u_sum, F = 5 (odd), identity edge ids not needed.
    std::vector<float> zsum(n * 5);
    rc = gsparse_kernels::agg_sum(n, n, nnz, row_ptr.data(), col_idx.data(), nullptr, x5.data(), nullptr, zsum.data());
    ok &= rc == gsparse_kernels::kOk;
    for (int32_t v = 0; v < n; v++)
        for (int f = 0; f < 5; f++) {
            double s = 0;
            for (int32_t p = row_ptr[v]; p < row_ptr[v + 1]; p++) s += x5[col_idx[p] * 5 + f];
            ok &= std::fabs(zsum[v * 5 + f] - s) <= 1e-5 * (1 + std::fabs(s));
        }
    // A dispatcher picks the copy_u_sum kernel by feature length (and graph shape).
    gsparse_kernels::Dispatcher<gsparse_kernels::agg_sum_fn> dispatch;
    dispatch.add(gsparse_kernels::agg_sum, 5);
    dispatch.add(gsparse_kernels::agg_sum8, 8, 0, 100);
    const double avg_row = double(nnz) / n;
    ok &= dispatch.select(5, avg_row) == &gsparse_kernels::agg_sum;
    ok &= dispatch.select(8, 1000.0) == nullptr && dispatch.select(3, avg_row) == nullptr;
    auto kernel8 = dispatch.select(8, avg_row);
    ok &= kernel8 == &gsparse_kernels::agg_sum8;
    std::vector<float> zsum8(n * 8);
    ok &= kernel8 && kernel8(n, n, nnz, row_ptr.data(), col_idx.data(), nullptr, x8.data(), nullptr, zsum8.data(),
                             true) == gsparse_kernels::kOk;
    for (int32_t v = 0; v < n; v++)
        for (int f = 0; f < 8; f++) {
            double s = 0;
            for (int32_t p = row_ptr[v]; p < row_ptr[v + 1]; p++) s += x8[col_idx[p] * 8 + f];
            ok &= std::fabs(zsum8[v * 8 + f] - s) <= 1e-5 * (1 + std::fabs(s));
        }
    std::printf("results %s\n", ok ? "match" : "DIFFER");

    // Bad arguments are error codes.
    bool errors = true;
    errors &= gsparse_kernels::agg_sum(n, n, nnz, row_ptr.data(), col_idx.data(), nullptr, nullptr, nullptr,
                                       zsum.data()) == gsparse_kernels::kNullPointer;
    errors &= gsparse_kernels::agg_max(n, n, nnz, row_ptr.data(), col_idx.data(), edge_ids.data(), x8.data(), w.data(),
                                       zmax.data(), nullptr, ae.data()) == gsparse_kernels::kNullPointer;
    errors &= gsparse_kernels::agg_sum(-1, n, nnz, row_ptr.data(), col_idx.data(), nullptr, x5.data(), nullptr,
                                       zsum.data()) == gsparse_kernels::kBadShape;
    std::vector<int32_t> bad_rows = row_ptr;
    bad_rows[3] = bad_rows[2] - 1;  // decreasing
    errors &= gsparse_kernels::agg_sum(n, n, nnz, bad_rows.data(), col_idx.data(), nullptr, x5.data(), nullptr,
                                       zsum.data()) == gsparse_kernels::kBadGraph;
    std::vector<int32_t> bad_cols = col_idx;
    bad_cols[0] = n;  // out of range
    errors &= gsparse_kernels::agg_sum(n, n, nnz, row_ptr.data(), bad_cols.data(), nullptr, x5.data(), nullptr,
                                       zsum.data()) == gsparse_kernels::kBadGraph;
    std::printf("errors %s\n", errors ? "reported" : "MISSED");
    std::printf("%s\n", ok && errors ? "OK" : "FAILED");
    return ok && errors ? 0 : 1;
}
