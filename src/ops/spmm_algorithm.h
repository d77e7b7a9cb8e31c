// The g-SpMM algorithm as a Halide pipeline, written as in the paper's Fig. 4: for every row
// (destination node) v a reduction domain k runs over v's ragged neighbour range
// [rowPtr(v), rowPtr(v+1)), gathers source features X(f, colIdx(rowPtr(v) + k)) and edge features
// Y(f, eid(rowPtr(v) + k)), combines them with ⊕ and reduces with Φ.
//
//   acc(f, v)  = identity(Φ)
//   acc(f, v)  = Φ(acc(f, v), X(f, colIdx(rowPtr(v) + k)) ⊕ Y(f, eid(rowPtr(v) + k)))   k < deg(v)
//   out(f, v)  = finalize(acc(f, v))     (mean divides by deg; empty rows give 0)
//
// Only the algorithm is defined here; schedules (schedules/) are applied to the Funcs afterwards.
// f stands for the canonical feature dimensions of the operator's FeatureLayout.
#pragma once

#include <Halide.h>

#include <memory>
#include <vector>

#include "core/dtype.h"
#include "ops/broadcast.h"
#include "ops/op_spec.h"

namespace gsparse {

struct SpmmAlgorithm {
    SpmmSpec spec;
    FeatureLayout layout;
    DType dtype = DType::F32;
    bool identity_edge_ids = true;
    bool reads_edge_ids = false;  ///< whether eid(.) is a load from edge_ids (else the position)

    // Inputs.
    Halide::ImageParam row_ptr, col_idx, edge_ids, lhs, rhs;
    Halide::Param<int32_t> max_degree{"max_degree"}, num_edges{"num_edges"}, num_src{"num_src"};

    // Loop variables: v indexes rows, f[0] is the innermost feature dimension.
    Halide::Var v{"v"};
    std::vector<Halide::Var> f;
    Halide::RDom k;

    /// Neighbour ids and edge ids of row v as 2-D functions of (position in row, row): the ragged
    /// CSR accesses in a rectangular index space, so a schedule can stage a kNnzTile x kMTile tile
    /// of them (inlined by default).
    Halide::Var kv{"kv"};
    Halide::Func nbr{"spmm_nbr"}, eid{"spmm_eid"};
    Halide::Func acc{"spmm_acc"};
    Halide::Func out{"spmm_out"};  ///< a Tuple (value, arg_u, arg_e) for max/min

    /// Row splitting (split_rows): rows are reduced in segments of at most segment_len nonzeros
    /// (row_ptr then holds segment offsets), partial(f, s) keeps each segment's result and
    /// comb(f, v) combines the segments [row_segs(v), row_segs(v+1)) of row v; 0 when rows are whole.
    int segment_len = 0;
    /// Source tiles (split_rows with src_tile > 0): segments are runs of one row within one tile of
    /// src_tile consecutive source ids, numbered tile by tile (RowSegments of source_tile_segments),
    /// so the segments computed together gather from one tile. col_idx and edge_ids then hold the
    /// edges in that order, row v's segments are seg_ids(row_segs(v) + j), and mean reads the row's
    /// degree from row_degree_ptr (the CSR row_ptr).
    int64_t src_tile = 0;
    Halide::ImageParam seg_ids, row_degree_ptr;
    Halide::ImageParam row_segs;
    Halide::Param<int32_t> num_segs{"num_segs"}, max_segments{"max_segments"};
    Halide::Func partial{"spmm_partial"}, comb{"spmm_comb"};
    Halide::RDom j;

    /// Row tails (split_row_tails): the row stage reduces only the first tail_len nonzeros of each
    /// row (the run binds max_degree = tail_len) and stores the row; the rest of a longer row comes
    /// in tails of at most tail_len nonzeros, tail t covering positions [tail_start(t), tail_end(t))
    /// of row tail_row(t) (graph/segments.h: row_tails), each reduced by tail_acc(f, t) and added to the
    /// stored row by an atomic update of out over tail_r. 0 when rows are whole or split into
    /// segments.
    int tail_len = 0;
    Halide::ImageParam tail_start, tail_end, tail_row;
    Halide::Param<int32_t> num_tails{"num_tails"};
    Halide::Func tail_acc{"spmm_tail_acc"};
    Halide::RDom tail_k, tail_r;

    /// Row binding (bind_buffer): when bound, position v of the row-owning stage computes row
    /// row_order(v) (a permutation of the rows: balancedIdx, or the locality order when
    /// locality_rows) and its stores are remapped.
    bool rows_bound = false, locality_rows = false;
    Halide::ImageParam row_order;

    /// Relabeled sources (relabel_sources): the kernel runs on the graph renumbered in its locality
    /// order (Graph::relabeled), so its gathered ids are new ids. src_order(i) is the old id of new
    /// node i; lhs_relabeled(f, i) = lhs(f, src_order(i)) is the source features in the new order
    /// (a stage of its own, computed before the rows), and the output stores of row i go to row
    /// src_order(i).
    bool relabeled = false;
    Halide::ImageParam src_order;
    Halide::Func lhs_relabeled{"spmm_lhs_relabeled"};

    /// Set by schedules: lowering passes of the extension to run on this pipeline, and the row tile
    /// (rows per block) that the device copy of row_ptr must be padded to (padded rows are empty).
    std::vector<std::shared_ptr<Halide::Internal::IRMutator>> lowering_passes;
    int row_tile = 1;
    /// Whether the kernel indexes buffers with 64 bits (Target::LargeBuffers, the default). Cleared
    /// by schedules whose lanes exchange values through warp shuffles: Halide 14's shuffle lowering
    /// cannot stripe storage whose indices are 64-bit.
    bool large_buffers = true;
    /// Set by schedules whose vector loads assume operand rows aligned to this many bytes (the
    /// runtime checks the pointers; 0: element alignment).
    int operand_alignment = 0;
    /// Set by schedules: at most this many registers a thread in every CUDA kernel of the pipeline
    /// (halide_ext/kernel_register_limit.h; 0: the CUDA runtime's cap, 64). Kernels from the
    /// persistent kernel cache carry it; JIT-compiled ones (the cache off) do not.
    int max_registers = 0;

    /// The pipeline's inputs, in the order of the AOT signature.
    std::vector<Halide::Argument> arguments() const;
    bool uses_lhs() const { return gsparse::uses_lhs(spec.op); }
    bool uses_rhs() const { return gsparse::uses_rhs(spec.op); }
};

SpmmAlgorithm build_spmm_algorithm(const SpmmSpec &spec, const FeatureLayout &layout, DType dtype,
                                   bool identity_edge_ids);

/// Turns a built algorithm into its row-split form (see SpmmAlgorithm::segment_len): long rows are
/// cut into segments of at most segment_len nonzeros that are reduced independently (so one long
/// row no longer serializes on one warp) and then combined per row. The result is the same:
/// segments keep row order, so max/min ties still go to the earliest neighbour.
/// With src_tile > 0 the segments are source-tile runs (see SpmmAlgorithm::src_tile), cut after
/// segment_len nonzeros when segment_len > 0. They combine in tile order, not row order, so only
/// sum and mean accept them (ScheduleError otherwise), and the edge ids are always read from
/// edge_ids (the positions are no longer the CSR's).
bool rows_split(const SpmmAlgorithm &a);

/// Turns a built algorithm into its relabeled form (see SpmmAlgorithm::relabeled): the gathers of
/// lhs read lhs_relabeled instead. Applied before the other transformations (split_nnz_lanes,
/// split_rows, bind_rows), which take the gather from acc. The row structure and edge ids bound at
/// run time must be the relabeled graph's, so the algorithm must read edge ids when ⊕ reads an edge
/// operand (ScheduleError otherwise); max/min are rejected: the relabeled rows list their
/// neighbours by new id, so ties and arg_u would follow the new numbering.
void relabel_sources(SpmmAlgorithm &a);
void split_rows(SpmmAlgorithm &a, int segment_len, int64_t src_tile = 0);

/// Turns a built sum or mean algorithm into its row-tail form (see SpmmAlgorithm::tail_len): the
/// row stage keeps its definition (it reduces a row's first tail_len nonzeros once the run binds
/// max_degree = tail_len) and out gains an update that adds each tail's reduction to its row:
///
///   tail_acc(f, t) = Σ_{k < tail_end(t) - tail_start(t)} X(f, colIdx(tail_start(t) + k)) ⊕ Y(...)
///   out(f, tail_row(t)) += tail_acc(f, t) [/ deg(tail_row(t)) for mean]        t < num_tails
///
/// The update runs after the rows are stored and is scheduled atomic: a long row's tails add to it
/// in any order, so the last bits of such a row's sum vary between runs (rows of at most tail_len
/// nonzeros are reduced in order, as without tails). No partial buffer and no combine pass: rows
/// that fit in tail_len cost what they cost unsplit. ScheduleError for max / min (their arg ids
/// need row order) and for tail_len < 1.
void split_row_tails(SpmmAlgorithm &a, int tail_len);
bool has_row_tails(const SpmmAlgorithm &a);

}  // namespace gsparse
