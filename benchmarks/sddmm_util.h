// Helpers of the g-SDDMM benchmark: the ops it runs (dot and the element-wise u_OP_v forms), the
// byte model, and a CPU reference (fp64) on a deterministic sample of edges.
//
// Inputs: X (num_src x F, the source operand) holds feature_value(seed, F, u, f) and Y (num_dst x F,
// the destination operand) feature_value(seed + 1, F, v, f), both row-major; the output of edge e
// (u -> v) is Z[e] = X[u] . Y[v] for dot (one value per edge) or X[u] OP Y[v] (F values per edge).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench_util.h"
#include "graph/graph.h"
#include "ops/op_spec.h"

namespace gsparse::bench {

/// "dot" (also "u_dot_v"), "add", "sub", "mul", "div" (also "u_add_v", ...): lhs = source node,
/// rhs = destination node. Anything else throws gsparse::Error naming the supported forms.
SddmmSpec parse_sddmm_bench_op(const std::string &text);
/// Output values per edge: 1 for dot, F otherwise.
int64_t sddmm_out_cols(const SddmmSpec &spec, int64_t feat);
/// Relative-error tolerance: 1e-4 for dot (an fp32 sum of F products), 1e-6 for element-wise ops.
double sddmm_tolerance(const SddmmSpec &spec);

/// The byte model of a g-SDDMM case:
///   index      = 4 (num_dst + 1) + 4 nnz: the CSR pattern, the most compact form of the edge list
///   compulsory = index + 4 F (num_src + num_dst) + 4 nnz out_cols: X, Y and Z once each
///   gathered   = index + 8 nnz F + 4 nnz out_cols: both operand rows read for every edge
CaseBytes sddmm_bytes(int64_t num_dst, int64_t num_src, int64_t nnz, int64_t feat, const SddmmSpec &spec);

/// A deterministic sample of a graph's edges, as CSR positions with their edge id, source and
/// destination: every edge when nnz <= max_edges, else the first and last positions, the start of
/// the longest row and pseudo-random positions, up to max_edges (sorted, distinct).
struct SampledEdges {
    std::vector<int64_t> pos;   ///< CSR position (cuSPARSE's output order)
    std::vector<int64_t> eid;   ///< edge id (gsparse's and DGL's output order)
    std::vector<int64_t> src;
    std::vector<int64_t> dst;
    bool all = false;           ///< the sample is the whole edge set

    SampledEdges(const Graph &g, int64_t max_edges, uint64_t seed);
    size_t size() const { return pos.size(); }
};

/// Z on the sampled edges in double: size() x out_cols values, row-major.
std::vector<double> sddmm_reference(const SampledEdges &s, const SddmmSpec &spec, int64_t feat, uint64_t x_seed,
                                    uint64_t y_seed);

/// Flat element indices of the sampled edges' outputs in an output stored by edge id
/// (eid * out_cols + c) or by CSR position (pos * out_cols + c).
std::vector<int64_t> sample_indices_by_edge_id(const SampledEdges &s, int64_t out_cols);
std::vector<int64_t> sample_indices_by_position(const SampledEdges &s, int64_t out_cols);

}  // namespace gsparse::bench
