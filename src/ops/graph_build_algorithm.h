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

/// ShapeError unless dtype is an id type (I32 or I64).
void check_index_dtype(DType dtype, const char *what);

CooStatsAlgorithm build_coo_stats_algorithm(DType index);
StatsCombineAlgorithm build_stats_combine_algorithm();
RowOffsetsAlgorithm build_row_offsets_algorithm(DType index);
NarrowIndexAlgorithm build_narrow_index_algorithm(DType index);
NarrowPairAlgorithm build_narrow_pair_algorithm(DType index);

}  // namespace gsparse
