// Argument checking of emitted CUDA kernels, without a GPU: every case below must come back as an
// error code with a message before any CUDA call (this program never loads the CUDA driver).
// Prints OK on success.
#include <cstdio>
#include <string>
#include <vector>

#include "agg_max.h"
#include "agg_mean.h"
#include "agg_sum.h"
#include "agg_vec.h"
#include "gsparse_dispatch.h"

namespace {

bool ok = true;

void expect(const char *what, int rc, int want, const gsparse_kernels::CudaLaunch &launch, const char *mention) {
    const bool pass = rc == want && launch.error.find(mention) != std::string::npos;
    std::printf("%-44s rc %d (want %d): %s%s\n", what, rc, want, launch.error.c_str(), pass ? "" : "  <-- WRONG");
    ok &= pass;
}

}  // namespace

int main() {
    using namespace gsparse_kernels;
    // A 3-node graph: 0 <- 1, 0 <- 2, 2 <- 0.
    const std::vector<int32_t> row_ptr = {0, 2, 2, 3}, col_idx = {1, 2, 0}, edge_ids = {2, 0, 1};
    void *not_a_context = reinterpret_cast<void *>(0x10);  // never reaches the driver: all calls fail first
    CudaLaunch none;
    CudaLaunch launch{not_a_context, nullptr, {}};
    CudaGraph graph;

    expect("prepare: null context", graph.prepare(none, 3, 3, 3, row_ptr.data(), col_idx.data()), kNullPointer, none,
           "context");
    expect("prepare: negative nnz", graph.prepare(launch, 3, 3, -1, row_ptr.data(), col_idx.data()), kBadShape, launch,
           "nnz = -1");
    expect("prepare: null row_ptr", graph.prepare(launch, 3, 3, 3, nullptr, col_idx.data()), kNullPointer, launch,
           "row_ptr");
    expect("prepare: null col_idx", graph.prepare(launch, 3, 3, 3, row_ptr.data(), nullptr), kNullPointer, launch,
           "col_idx");
    expect("prepare: row_ptr not ending at nnz", graph.prepare(launch, 3, 3, 4, row_ptr.data(), col_idx.data()),
           kBadGraph, launch, "nnz = 4");
    const std::vector<int32_t> decreasing = {0, 2, 1, 3};
    expect("prepare: decreasing row_ptr", graph.prepare(launch, 3, 3, 3, decreasing.data(), col_idx.data()), kBadGraph,
           launch, "row 1");
    expect("prepare: source id out of range", graph.prepare(launch, 3, 2, 3, row_ptr.data(), col_idx.data()), kBadGraph,
           launch, "col_idx[1] = 2");
    const std::vector<int32_t> bad_ids = {0, 3, 1};
    expect("prepare: edge id out of range", graph.prepare(launch, 3, 3, 3, row_ptr.data(), col_idx.data(), bad_ids.data()),
           kBadGraph, launch, "edge_ids[1] = 3");
    ok &= !graph.prepared();

    float *x = reinterpret_cast<float *>(0x1000), *w = reinterpret_cast<float *>(0x2000), *z = reinterpret_cast<float *>(0x3000);
    int32_t *au = reinterpret_cast<int32_t *>(0x4000), *ae = reinterpret_cast<int32_t *>(0x5000);
    expect("kernel: null context", agg_sum(none, graph, x, nullptr, z), kNullPointer, none, "context");
    expect("kernel: null output", agg_sum(launch, graph, x, nullptr, nullptr), kNullPointer, launch, "out");
    expect("kernel: null lhs", agg_sum(launch, graph, nullptr, nullptr, z), kNullPointer, launch, "lhs");
    expect("kernel: lhs not aligned for vector loads", agg_vec(launch, graph, x + 1, nullptr, z), kBadAlignment, launch,
           "16-byte aligned");
    expect("kernel: null rhs", agg_mean(launch, graph, x, nullptr, z), kNullPointer, launch, "rhs");
    expect("kernel: null arg ids", agg_max(launch, graph, x, w, z, au, nullptr), kNullPointer, launch, "arg_e");
    expect("kernel: unprepared graph", agg_sum(launch, graph, x, nullptr, z), kBadGraph, launch, "not prepared");
    expect("kernel: unprepared graph (max)", agg_max(launch, graph, x, w, z, au, ae), kBadGraph, launch, "not prepared");

    // Entry points of one operator share a type: a dispatcher chooses among them.
    Dispatcher<agg_sum_fn> dispatch;
    dispatch.add(agg_sum, 32);
    ok &= dispatch.select(32, 1.0) == &agg_sum && dispatch.select(16, 1.0) == nullptr;

    std::printf("%s\n", ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
}
