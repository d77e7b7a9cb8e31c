// Halide pipelines that build a graph view's index arrays where the caller's edges are, on the GPU
// for device arrays (runtime/view_build.h runs them): statistics of a COO (the id ranges and the
// order of the destinations, for validation), the CSR's row offsets of edges sorted by destination,
// and index arrays narrowed to int32 with padding. None allocates; the caller passes every buffer.
//
//   stats(k, t)    the partial statistics of the edges i = t, t + P, t + 2P, ... (P threads): the
//                  minimum and maximum source, the minimum and maximum destination, and the number
//                  of descents (edges whose successor has a smaller destination). An index past the
//                  last edge is clamped to it: repeating an edge changes no minimum or maximum, and
//                  the last edge compared with itself is no descent.
//   combine(k, t)  the same over partial statistics (stats of C partials into P: thread t combines
//                  t, t + P, ...); applied until one is left.
//   row_ptr(r)     the first position whose destination is at least r (a binary search of `steps`
//                  halvings, steps = the bit length of num_edges): for edges sorted by destination
//                  the CSR row offsets, num_edges for every row past the last destination.
//   narrow(i)      int32(in(i)) for i < count, 0 for the padding past it; narrow_pair does two
//                  arrays of one length at once (a COO's sources and destinations).
//   loop_row_ptr(r)  row_ptr(min(r, num_dst)) + min(r, loops): the row offsets of an int32 CSR once
//                  every row u < loops ends with one more edge, the self-loop u -> u (the rows
//                  past the last padded with the edge count).
//   loop_coo(q)    that graph's COO at CSR position q, with a flag for the graph's own self-loops:
//                  the row r of q by a binary search of `steps` halvings over loop_row_ptr, then the
//                  appended loop (r, r) at the last position of a row r < loops, else the edge at
//                  position q - min(r, loops) of the graph; (0, 0, 0) past the last edge.
//   loop_coo_append(q)  the same graph from a COO alone (no CSR): the edges in their order, flagged
//                  where they are self-loops, then the loops (u, u) for u < loops; (0, 0, 0) past.
//   loop_degrees(j, v)  over a self-loop graph's COO and own-loop flags: j = 0 the edges into v that
//                  are neither flagged nor loops (the graph's other edges), j = 1 the flagged ones
//                  (the graph's own loops of v); atomic additions over the edges. The GPU schedule
//                  reads whole blocks of edges (the padded COO), guarded past the last.
//   gcn_weights(e) GCN's edge weights on that graph (PyG's add_remaining_self_loops + gcn_norm):
//                  0 on flagged edges, l(v) on the appended loop of v (1 where v had loops of its
//                  own, else fill), 1 on the others; times D^-1/2[u] D^-1/2[v] when normalizing,
//                  D[v] = loop_degrees(0, v) + l(v) (+ 0 for rows without a loop); 0 past the last.
#pragma once

#include <Halide.h>

#include <memory>
#include <vector>

#include "core/dtype.h"

namespace gsparse {

/// Statistics of a COO, in this order in the stats pipelines' k dimension.
enum CooStat : int { kMinSrc = 0, kMaxSrc, kMinDst, kMaxDst, kDescents, kCooStatCount };

struct CooStatsAlgorithm {
    DType index = DType::I32;  ///< I32 or I64 ids
    Halide::ImageParam src, dst;
    Halide::Param<int32_t> num_edges{"num_edges"}, parts{"parts"};
    Halide::Var k{"k"}, t{"t"};
    Halide::RDom r;
    Halide::Func part{"coo_stats_part"}, out{"coo_stats"};  ///< out: int64 [kCooStatCount x parts]
    std::vector<std::shared_ptr<Halide::Internal::IRMutator>> lowering_passes;

    std::vector<Halide::Argument> arguments() const { return {src, dst, num_edges, parts}; }
};

struct StatsCombineAlgorithm {
    Halide::ImageParam in;  ///< int64 [kCooStatCount x count]
    Halide::Param<int32_t> count{"count"}, parts{"parts"};
    Halide::Var k{"k"}, t{"t"};
    Halide::RDom r;
    Halide::Func part{"stats_combine_part"}, out{"stats_combine"};
    std::vector<std::shared_ptr<Halide::Internal::IRMutator>> lowering_passes;

    std::vector<Halide::Argument> arguments() const { return {in, count, parts}; }
};

struct RowOffsetsAlgorithm {
    DType index = DType::I32;
    Halide::ImageParam dst;
    Halide::Param<int32_t> num_edges{"num_edges"}, steps{"steps"};
    Halide::Var row{"row"};
    Halide::RDom r;
    Halide::Func search{"row_search"}, out{"row_offsets"};  ///< out: int32 [rows]
    std::vector<std::shared_ptr<Halide::Internal::IRMutator>> lowering_passes;

    std::vector<Halide::Argument> arguments() const { return {dst, num_edges, steps}; }
};

struct NarrowIndexAlgorithm {
    DType index = DType::I64;
    Halide::ImageParam in;
    Halide::Param<int32_t> count{"count"};
    Halide::Var i{"i"};
    Halide::Func out{"narrow_index"};  ///< int32 [length >= count]
    std::vector<std::shared_ptr<Halide::Internal::IRMutator>> lowering_passes;

    std::vector<Halide::Argument> arguments() const { return {in, count}; }
};

struct NarrowPairAlgorithm {
    DType index = DType::I64;
    Halide::ImageParam a, b;
    Halide::Param<int32_t> count{"count"};
    Halide::Var i{"i"};
    Halide::Func out{"narrow_pair"};  ///< a Tuple: int32 [length >= count] each
    std::vector<std::shared_ptr<Halide::Internal::IRMutator>> lowering_passes;

    std::vector<Halide::Argument> arguments() const { return {a, b, count}; }
};

struct LoopRowPtrAlgorithm {
    Halide::ImageParam row_ptr{Halide::Int(32), 1, "row_ptr"};
    Halide::Param<int32_t> num_dst{"num_dst"}, loops{"loops"};
    Halide::Var r{"r"};
    Halide::Func out{"loop_row_ptr"};  ///< int32 [rows]
    std::vector<std::shared_ptr<Halide::Internal::IRMutator>> lowering_passes;

    std::vector<Halide::Argument> arguments() const { return {row_ptr, num_dst, loops}; }
};

struct LoopCooAlgorithm {
    Halide::ImageParam row_ptr{Halide::Int(32), 1, "row_ptr"}, col_idx{Halide::Int(32), 1, "col_idx"};
    Halide::Param<int32_t> num_edges{"num_edges"}, num_dst{"num_dst"}, loops{"loops"}, steps{"steps"};
    Halide::Var q{"q"};
    Halide::RDom r;
    Halide::Func search{"loop_row_search"};
    Halide::Func out{"loop_coo"};  ///< a Tuple: source, destination (int32), own loop (uint8) [length]
    std::vector<std::shared_ptr<Halide::Internal::IRMutator>> lowering_passes;

    std::vector<Halide::Argument> arguments() const { return {row_ptr, col_idx, num_edges, num_dst, loops, steps}; }
};

struct LoopCooAppendAlgorithm {
    Halide::ImageParam src{Halide::Int(32), 1, "src"}, dst{Halide::Int(32), 1, "dst"};
    Halide::Param<int32_t> num_edges{"num_edges"}, loops{"loops"};
    Halide::Var q{"q"};
    Halide::Func out{"loop_coo_append"};  ///< a Tuple: source, destination (int32), own loop (uint8)
    std::vector<std::shared_ptr<Halide::Internal::IRMutator>> lowering_passes;

    std::vector<Halide::Argument> arguments() const { return {src, dst, num_edges, loops}; }
};

struct LoopDegreesAlgorithm {
    Halide::ImageParam src{Halide::Int(32), 1, "src"}, dst{Halide::Int(32), 1, "dst"},
        own{Halide::UInt(8), 1, "own"};
    Halide::Param<int32_t> num_edges{"num_edges"}, num_dst{"num_dst"};
    Halide::Var v{"v"}, j{"j"};
    Halide::RDom r;
    Halide::Func out{"loop_degrees"};  ///< int32 [num_dst x 2] (j innermost)
    std::vector<std::shared_ptr<Halide::Internal::IRMutator>> lowering_passes;

    std::vector<Halide::Argument> arguments() const { return {src, dst, own, num_edges, num_dst}; }
};

struct GcnWeightsAlgorithm {
    Halide::ImageParam src{Halide::Int(32), 1, "src"}, dst{Halide::Int(32), 1, "dst"},
        own{Halide::UInt(8), 1, "own"}, degrees{Halide::Int(32), 2, "degrees"};
    Halide::Param<int32_t> num_edges{"num_edges"}, num_dst{"num_dst"}, loops{"loops"}, normalize{"normalize"};
    Halide::Param<float> fill{"fill"};
    Halide::Var e{"e"};
    Halide::Func out{"gcn_weights"};  ///< float32 [length]
    std::vector<std::shared_ptr<Halide::Internal::IRMutator>> lowering_passes;

    std::vector<Halide::Argument> arguments() const {
        return {src, dst, own, degrees, num_edges, num_dst, loops, normalize, fill};
    }
};

/// ShapeError unless dtype is an id type (I32 or I64).
void check_index_dtype(DType dtype, const char *what);

CooStatsAlgorithm build_coo_stats_algorithm(DType index);
StatsCombineAlgorithm build_stats_combine_algorithm();
RowOffsetsAlgorithm build_row_offsets_algorithm(DType index);
NarrowIndexAlgorithm build_narrow_index_algorithm(DType index);
NarrowPairAlgorithm build_narrow_pair_algorithm(DType index);
LoopRowPtrAlgorithm build_loop_row_ptr_algorithm();
LoopCooAlgorithm build_loop_coo_algorithm();
LoopCooAppendAlgorithm build_loop_coo_append_algorithm();
LoopDegreesAlgorithm build_loop_degrees_algorithm();
GcnWeightsAlgorithm build_gcn_weights_algorithm();

}  // namespace gsparse
