// User-written g-SpMM programs: a message of any Halide expression over node and edge operands,
// reduced over every node's in-edges by any monoid, compiled by gsparse without touching its
// sources.
//
//   gsparse::dsl::SpmmProgram p("weighted_max");
//   Halide::Expr x = p.operand("x", gsparse::dsl::At::Src);                 // x[u, f]
//   Halide::Expr w = p.operand("w", gsparse::dsl::At::Edge, /*broadcast=*/true);  // w[e, 0]
//   p.message(x * w);
//   p.reduce(gsparse::dsl::Monoid::max());
//   gsparse::dsl::SpmmKernel k = p.compile(/*features=*/16);
//   k.run(graph, {{"x", x_tensor}, {"w", w_tensor}}, out);   // out [num_dst, 16]
//
//   out[v, f] = finalize(reduce over in-edges e = (u -> v) of message(f, u, v, e), degree(v))
//   and 0 for nodes without in-edges.
//
// The program is a Halide pipeline over the sparse layout of graph/formats.h: a reduction domain
// over each row's ragged neighbour range [row_ptr(v), row_ptr(v + 1)), the source id col_idx(.) and
// the edge id edge_ids(.) of each position. The extension's ragged bound inference
// (halide_ext/ragged_bounds.h) bounds every access to those arrays and every gather through them,
// so a program needs no hand-written promises. Operands are [rows, features] tensors of the program's
// type (rows: num_src, num_dst or num_edges by where they are read), [rows, 1] when broadcast, or
// [rows, columns] read at a column that depends on the feature (Columns: per-head weights).
//
// A schedule (ScheduleDef) applies directives to the program's Funcs and declares its knobs, their
// choices and defaults and a validity rule; search_schedule measures every valid point on the
// user's graph. The default schedule (default_schedule(), written with the same API) runs rows in
// parallel with each row's reduction in order (CPU: tasks of rows_per_task rows, vector_width
// features together; CUDA: blocks of feature_tile x rows_per_block threads, one per feature and
// row, compiled on the first run; with a monoid that merges, each row's neighbours also split over
// lanes of nonzeros, so that one long row no longer runs on one thread); every schedule must keep
// each row's reduction in order unless its monoid allows otherwise (Monoid::merge,
// ScheduleContext::split_nnz_lanes). Beside Halide's own directives, a schedule may split rows over
// lanes of nonzeros (ScheduleContext::split_nnz_lanes), split them into segments across the graph
// (ScheduleContext::split_rows, also by tiles of source ids) and run rows in order of their length
// (ScheduleContext::balanced_rows), stage a block's neighbour ids in shared memory
// (ScheduleContext::stage_neighbours), keep each thread's part of a block-wide accumulator tile in
// registers (ScheduleContext::register_tiles) and divide the work by nonzeros instead of rows
// (ScheduleContext::scatter_nonzeros, accumulate_runs, accumulate_lanes), split long rows' tails off
// (ScheduleContext::split_row_tails), run rows in the graph's locality order
// (ScheduleContext::locality_rows) or the kernel on the graph relabeled in it
// (ScheduleContext::relabel_sources): the forms of the built-in operators' schedules (schedules/).
#pragma once

#include <Halide.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"
#include "dsl/operands.h"
#include "dsl/schedule_knobs.h"
#include "graph/graph.h"
#include "graph/graph_view.h"
#include "runtime/cuda_launch.h"

namespace gsparse::dsl {

/// An associative reduction with its identity: acc = combine(acc, message), starting at identity.
///
/// A reduction over several accumulated values (a tuple: e.g. the running maximum, normaliser and
/// weighted sum of a one-pass softmax) sets identity_values and combine_values instead; its program's
/// message may be a Tuple (SpmmProgram::message(Tuple)), and finalize_values turns the accumulated
/// tuple into the output value.
struct Monoid {
    std::string name;
    std::function<Halide::Expr(Halide::Type)> identity;
    std::function<Halide::Expr(Halide::Expr acc, Halide::Expr x)> combine;
    std::function<Halide::Tuple(Halide::Type)> identity_values = nullptr;
    std::function<Halide::Tuple(const Halide::Tuple &acc, const Halide::Tuple &message)> combine_values = nullptr;
    /// Optional: combines two accumulated values (merge for single values, merge_values for tuples).
    /// Declaring one also declares the monoid commutative: a schedule may then split a row's
    /// neighbours over lanes (ScheduleContext::split_nnz_lanes), each lane reducing its positions in
    /// order, and merge the lanes' results in lane order. sum, product, max and min merge by combine.
    std::function<Halide::Expr(Halide::Expr acc, Halide::Expr other)> merge = nullptr;
    std::function<Halide::Tuple(const Halide::Tuple &acc, const Halide::Tuple &other)> merge_values = nullptr;

    bool over_tuples() const { return identity_values != nullptr; }
    bool merges() const { return over_tuples() ? merge_values != nullptr : merge != nullptr; }

    static Monoid sum();
    static Monoid product();
    static Monoid max();  ///< identity: the type's lowest value
    static Monoid min();  ///< identity: the type's highest value
};

class SpmmKernel;

/// A row reduction split over lanes of nonzeros (ScheduleContext::split_nnz_lanes):
///   lanes(f, v, lane) = reduce in order over positions k = (ko * U + step) * L + lane < degree(v)
///                       of message(k)
///   acc(f, v)         = merge of lanes(f, v, 0 .. L - 1), in lane order
/// With U > 1 steps, each iteration of ko takes U positions of a lane with no branch between them
/// (unroll `step` and their loads are in flight together): positions past the row's end read
/// clamped indices and are not combined.
struct NnzLanes {
    Halide::Func lanes;      ///< the lanes' partial results: identity, then an update over (step, ko)
    Halide::Var lane;        ///< lanes' lane variable (pure)
    Halide::RVar ko;         ///< lanes' outer reduction variable
    Halide::RVar step;       ///< lanes' inner reduction variable (0 .. U - 1)
    Halide::RVar merge;      ///< acc's reduction variable over the L lanes
    int count = 0;           ///< L
    int steps = 1;           ///< U
};

/// A row reduction split into segments across the graph (ScheduleContext::split_rows): every row's
/// neighbours cut into segments of at most `length` consecutive positions, numbered row by row, each
/// segment reduced on its own and the row's segments then merged in order:
///   segment_acc(f, s) = reduce in order over the positions of segment s of message
///   segments(f, s)    = segment_acc(f, s)
///   acc(f, v)         = merge of segments(f, row_segs(v)), ..., segments(f, row_segs(v + 1) - 1)
/// A long row's work spreads over as many threads (and blocks) as it has segments: one row of
/// 100,000 neighbours no longer runs on one thread or one warp. Rows of at most `length` neighbours
/// are one segment. The segment table comes with the graph, made once per Graph and length (a
/// kernel that splits rows runs on Graphs, not on GraphViews).
///
/// Source tiles (split_rows(length, src_tile) with src_tile > 0): the graph's edges regrouped by
/// tiles of src_tile consecutive source ids (then by row), and the segments are the runs of one
/// row within one tile (cut after `length` positions), numbered tile by tile, so that segments
/// computed together gather the features of one tile of sources, which stay in cache. A row's
/// segments are then merged in tile order, not position order (a monoid that merges is
/// commutative). The regrouped edges come with the graph too (made once per Graph and tile).
struct RowSegmentSplit {
    Halide::Func segments;     ///< the segments' results (pure): a stage of its own, schedule it like out
    Halide::Func segment_acc;  ///< the reduction over a segment (pure: identity; update over k)
    Halide::Var s;             ///< the segment (segments' and segment_acc's second variable)
    Halide::RVar k;            ///< segment_acc's reduction variable: the position within the segment (no lanes)
    Halide::RVar merge;        ///< acc's reduction variable over the row's segments
    /// With lanes (split_rows(length, src_tile, lanes, steps), lanes > 1): the segment's positions
    /// over lanes (NnzLanes over the segment s instead of the row v), and segment_acc the merge of
    /// lanes(f, s, 0 .. L - 1) over lanes.merge; count = 0 without.
    NnzLanes lanes;
    int length = 0;            ///< the most positions a segment holds
    int64_t src_tile = 0;      ///< the source tile (0: segments of rows in position order)
};

/// A row reduction over neighbour ids staged a tile at a time (ScheduleContext::stage_neighbours):
///   ids(kv, v)   = col_idx(row_ptr(v) + kv)      the source id at position kv of row v
///   edges(kv, v) = edge_ids(row_ptr(v) + kv)     its edge id (defined when the message reads one)
///   acc(f, v)    = reduce in order over k = ko * tile + ki < degree(v) of message(ids(k, v), edges(k, v))
/// ids and edges are computed at acc's ko (tile positions of each of the rows acc is computed for;
/// CUDA: in shared memory, filled by the block's threads as the schedule maps them), and the ko loop
/// runs as many times as the longest row of the row block needs, not the graph's longest row (the
/// extension's BlockUniformLoop pass: every thread of a GPU block then meets the same barriers).
struct NeighbourTiles {
    Halide::Func ids;    ///< the staged source ids (pure; schedule how its tile is filled)
    Halide::Func edges;  ///< the staged edge ids; undefined when the message reads no edge id
    Halide::Var kv;      ///< ids' and edges' first variable: the position in the row
    Halide::RVar ko;     ///< acc's update: the tile (outer split of k)
    Halide::RVar ki;     ///< acc's update: the position in the tile
    int tile = 0;
};

/// A row reduction with its long rows' tails split off (ScheduleContext::split_row_tails): each row
/// reduces its first `length` positions as before (acc and out keep their definitions), and the
/// rest of a longer row comes in tails of at most `length` consecutive positions, each reduced on
/// its own and merged into its row's output by an atomic update:
///   tail_acc(f, t)       = reduce in order over positions [tail_start(t), tail_end(t)) of row
///                          tail_row(t) of message
///   tails(f, t)          = tail_acc(f, t)
///   out(f, tail_row(r))  = merge(out(f, tail_row(r)), tails(f, r))          r < num_tails, atomic
/// Rows of at most `length` neighbours cost what they cost whole (no partial buffer, no combine
/// pass); a long row's tails spread over many threads. The tail table (graph/segments.h:
/// row_tails) comes with the graph, made once per Graph and length.
struct RowTailSplit {
    Halide::Func tails;     ///< the tails' results (pure): a stage of its own, schedule it like out
    Halide::Func tail_acc;  ///< the reduction over a tail (pure: identity; update over k)
    Halide::Var t;          ///< the tail (tails' and tail_acc's second variable)
    Halide::RVar k;         ///< tail_acc's reduction variable: the position within the tail
    Halide::RVar r;      ///< out's update: the tail merged into its row
    int length = 0;      ///< the most positions a row keeps and a tail holds
};

/// A reduction by nonzeros (ScheduleContext::scatter_nonzeros): every position of the graph's CSR is
/// one iteration p of a single reduction over all the graph's edges, whatever row it lies in; its
/// message is combined into its row's accumulator by an atomic update:
///   acc(f, v)        = identity
///   acc(f, row(p))   = combine(acc(f, row(p)), message at position p)      p < num_edges, atomic
///   out(f, v)        = finalize(acc(f, v), degree(v)), 0 for rows without in-edges
/// (out is acc itself when the program has no finalize and its identity is 0: sum). Threads (and
/// blocks) then take equal numbers of nonzeros, several short rows or part of a long one each, as
/// merge-path and GeoT SpMM divide the work. row(p) comes with the graph at run time (its
/// destination-ordered COO, made once per Graph: a kernel that scatters runs on Graphs, not on
/// GraphViews).
///
/// The warp form (scatter_nonzeros(steps) with steps > 0) takes the positions as 32 lanes x `steps`
/// steps x chunks instead: position chunk * 32 * steps + step * 32 + lane, so that lane l of a warp
/// reads the l-th of 32 consecutive positions each step (coalesced); lanes past the last position
/// read it again and combine the identity. ScheduleContext::accumulate_lanes then combines a
/// step's lanes of one row through warp shuffles before their atomic update.
struct NonzeroScatter {
    Halide::RVar p;           ///< acc's update: the position in the CSR (0 .. num_edges - 1); the warp form: undefined
    Halide::RVar lane, step, chunk;  ///< the warp form's reduction variables (32, steps, chunks)
    int steps = 0;            ///< the warp form's steps (0: the form over p)
    bool out_is_acc = false;  ///< whether out and acc are one Func (then schedule out's pure definition only once)
};

/// Sources relabeled (ScheduleContext::relabel_sources): the kernel runs on the graph renumbered in
/// its locality order (Graph::relabeled: node locality_idx()[i] becomes node i), so that the
/// sources a cluster of rows reads have consecutive ids. Each source operand x is read through
/// sources[j](f, i) = x(f, src_order(i)), its rows in the new order (compute them at root, on CUDA
/// a kernel each, for the gathers to read consecutive rows; left inline they read through the
/// order); destination operands, dst() and src() keep the graph's own ids, and out's row i is
/// stored to row src_order(i).
struct RelabeledSources {
    std::vector<Halide::Func> sources;  ///< one per source operand, in declaration order
    Halide::Var i;                      ///< their row variable (the new id)
};

/// What a schedule of a user program works on: the program's Funcs and loop variables after the
/// algorithm is defined, the device, the feature count and the chosen knob values.
struct ScheduleContext : KnobValues {
    Halide::Func out;          ///< out(f, v): the output, computed per row v
    Halide::Func acc;          ///< acc(f, v): the reduction (pure: identity; update over k)
    Halide::Var f, v;          ///< feature and row
    Halide::RVar k;            ///< the row's neighbour position (the update's reduction variable)
    Device device = Device::CPU;
    int features = 0;
    bool monoid_merges = false;  ///< whether the program's monoid declares a merge

    /// Splits each row's neighbours over `lanes` (2..32) partial reductions (NnzLanes) for rows of
    /// many neighbours, each lane taking `steps` (1..8) positions an iteration: acc becomes the
    /// merge of the lanes (its update's reduction variable is NnzLanes::merge, no longer k) and out
    /// is redefined over it (same name and outputs); schedule the returned lanes Func as well. Call
    /// it before scheduling acc or out. ScheduleError when the program's monoid declares no merge,
    /// or on a second call.
    NnzLanes split_nnz_lanes(int lanes, int steps = 1);

    /// Runs the rows in order of their in-degree, longest first (the paper's bind_buffer over
    /// balancedIdx): position v of out, acc and the lanes computes row order(v), and out's stores
    /// land in row order(v) again (a lowering pass remaps their row term), so the result is in the
    /// graph's row order. GPU blocks (and CPU tasks) then take rows of similar length together and
    /// the longest rows first: fewer idle threads where degrees are skewed. Call it anywhere in the
    /// schedule (the definitions are rebound after it); the directives stay as written. The order
    /// comes with the graph at run time: computed once per Graph (Graph::balanced_idx), or the
    /// view's row_order (GraphView); the kernel then takes it as an argument (SpmmKernel::orders_rows).
    void balanced_rows() { rows_balanced = true; }
    bool rows_balanced = false;  ///< whether balanced_rows() or locality_rows() was called

    /// The same binding of rows to an order, in the graph's locality order instead (the built-in
    /// g-SpMM's rowBalance = 2): rows grouped by label-propagation clusters of the sources they
    /// read, longest first within a group (Graph::locality_idx, computed once per Graph), so that
    /// the rows a GPU block (or CPU task) takes together gather much the same source features and
    /// find them in cache. On a GraphView the kernel reads the view's row_order (any permutation of
    /// its rows).
    void locality_rows() {
        rows_balanced = true;
        rows_by_locality = true;
    }
    bool rows_by_locality = false;  ///< whether locality_rows() was called

    /// Compiles the kernel with 32-bit buffer indexing (Halide's target without large_buffers):
    /// cheaper address arithmetic, and what Halide's warp-shuffle lowering needs, so that a schedule
    /// may put the lanes of nonzeros on gpu_lanes and merge them through registers of the warp
    /// instead of shared memory. A run then refuses (ShapeError) an operand or output of 2^31
    /// elements or more.
    void int32_indexing() { indexing_32bit = true; }
    bool indexing_32bit = false;  ///< whether int32_indexing() was called

    /// Declares the operands and the output dense rows of exactly their width (features, or 1 when
    /// broadcast) starting `vector` elements apart in memory, the rows of every operand of
    /// `features` and of the output aligned to `vector` elements (the built-in g-SpMM's kVecWidth):
    /// with the features of a thread split by `vector` and vectorized, Halide then proves its loads
    /// and stores aligned and emits one vector access for them (CUDA: ld.global.v4.f32 for
    /// vector = 4 at 32 bits) instead of `vector` scalar ones. `vector` is 1, 2, 4 or 8 and must
    /// divide the features (ScheduleError otherwise). A run refuses (ShapeError) an operand or
    /// output whose data is not aligned so; tensors from allocators (Tensor::empty, PyTorch's) are.
    /// (With rows bound to an order, balanced_rows, locality_rows or relabel_sources, the output's
    /// row stride stays a parameter: its stores are remapped by row.)
    void aligned_rows(int vector);
    int row_vector = 0;  ///< the vector of aligned_rows (0: rows of unknown stride and alignment)
    Halide::Type type;            ///< the program's element type (warp shuffles move 32 bits)

    /// Splits every row's neighbours into segments of at most `length` (1 .. 2^20) positions across
    /// the graph (RowSegmentSplit): acc becomes the merge of the row's segments (its update's
    /// reduction variable is RowSegmentSplit::merge, no longer k) and out is redefined over it (same
    /// name and outputs); schedule the returned segments and segment_acc Funcs as well (segments
    /// compute_root: on CUDA a kernel of its own before the rows'). Call it before scheduling acc or
    /// out. ScheduleError when the program's monoid declares no merge, with split_nnz_lanes or
    /// balanced_rows, or on a second call. With src_tile (a power of two, 1 .. 2^30) > 0: source
    /// tiles (RowSegmentSplit::src_tile). With lanes (2..32) > 1, each segment's positions are
    /// split over that many lanes of `steps` (1..8) positions an iteration, as split_nnz_lanes splits
    /// a row's (RowSegmentSplit::lanes; segment_acc is then their merge): the built-in g-SpMM's
    /// rows split into segments with lanes of nonzeros.
    RowSegmentSplit split_rows(int length, int64_t src_tile = 0, int lanes = 1, int steps = 1);
    int rows_split = 0;  ///< the segment length of split_rows (0: rows whole)
    int64_t rows_split_tile = 0;  ///< its source tile (0: none)

    /// Stages the neighbour ids (and edge ids) of a block of rows in memory close to the threads,
    /// `tile` (1..1024) positions of each row at a time (NeighbourTiles), as the built-in g-SpMM's
    /// smemColIdx does: acc's update is split k -> (ko, ki) (keep ko outside the loops over the
    /// block's rows and features, ki inside them) and the tiles are computed at ko, stored in GPU
    /// shared memory on CUDA (on the stack on the CPU) with kv bounded to the tile; schedule how
    /// the tile is filled (ids.gpu_threads(...), edges likewise). `row_block` is the Var of out's
    /// loop over blocks of `rows_per_block` (1..1024) rows, the outer Var of out's split of v by
    /// rows_per_block (out.split(v, row_block, vi, rows_per_block) starting at row 0): the ko loop
    /// then runs as many tiles as the block's longest row fills (a lowering pass reads the block's
    /// row lengths), so that every thread of a GPU block reaches the tile's barriers the same
    /// number of times; compute acc at that loop or inside it. acc and out are redefined (same
    /// names and outputs). Call it before scheduling acc. ScheduleError with split_nnz_lanes or
    /// split_rows, or on a second call; KernelError when compiled if out has no loop of that name.
    NeighbourTiles stage_neighbours(int tile, const Halide::Var &row_block, int rows_per_block);
    int staged_tile = 0;  ///< the tile of stage_neighbours (0: neighbour ids read where used)

    /// Gives every GPU thread only its own part of a Func computed at a GPU block loop and stored
    /// in registers (a block-wide accumulator tile: acc.compute_at(out, row_block)
    /// .store_in(MemoryType::Register), threads over its rows and features, each thread R outputs
    /// at stride of the feature threads, unrolled): Halide gives each thread a private copy of the
    /// whole tile, which the back end keeps in local memory; the extension's
    /// CompactThreadAllocations pass cuts it to the thread's own outputs at constant indices,
    /// which live in registers. Allocations that do not fit that form are left as they are.
    void register_tiles() { tiles_in_registers = true; }
    bool tiles_in_registers = false;  ///< whether register_tiles() was called

    /// Splits the positions of every row past its first `length` (1 .. 2^20) into tails
    /// (RowTailSplit): out gains an atomic update that merges each tail into its row; schedule the
    /// returned tails and tail_acc Funcs (tails compute_root: on CUDA a kernel of its own) and
    /// out.update() (the merge of the tails, a kernel of its own). ScheduleError when the monoid declares no merge,
    /// accumulates a tuple or merges by reading the accumulator more than once, for a program that
    /// finalizes (its tails would be merged into a finalized value) or has several outputs, with
    /// split_rows, split_nnz_lanes, stage_neighbours or scatter_nonzeros, or on a second call.
    RowTailSplit split_row_tails(int length);
    int tails_split = 0;  ///< the length of split_row_tails (0: rows whole)

    /// Relabels the sources (RelabeledSources): call it first, before the other directives (their
    /// forms then read the relabeled message). Square graphs only (a run on another is a
    /// GraphError). ScheduleError when the monoid declares no merge (a relabeled row lists its
    /// neighbours in another order), after a split form, with balanced_rows or locality_rows, or on
    /// a second call.
    RelabeledSources relabel_sources();
    bool sources_relabeled = false;  ///< whether relabel_sources() was called

    /// Reduces by nonzeros (NonzeroScatter): acc's update becomes one reduction over every position
    /// of the graph, scattering each message into its row atomically (Halide's atomic(), which
    /// this directive calls, with compute_root() of acc); out is redefined over acc (same name
    /// and outputs). Schedule acc's pure definition (the identity fill), its update over
    /// NonzeroScatter::p (split p into runs and map them to threads and blocks, or parallel CPU
    /// tasks) and out where it is a Func of its own. Atomic updates combine in any order:
    /// ScheduleError when the monoid declares no merge or accumulates a tuple (atomics move one
    /// value), with split_rows, split_nnz_lanes, stage_neighbours or balanced_rows, or on a second call.
    /// With warp_steps (1..64) > 0, the warp form (NonzeroScatter::lane, step, chunk).
    NonzeroScatter scatter_nonzeros(int warp_steps = 0);
    bool nonzeros_scattered = false;  ///< whether scatter_nonzeros() was called
    int scatter_warp_steps = 0;       ///< its warp form's steps (0: the form over p)

    /// Combines, in the warp form of scatter_nonzeros, the updates of each step's 32 lanes that hit
    /// one row by a segmented reduction through warp shuffles (the extension's SegmentedLaneAtomics
    /// pass), carrying a row that continues into the next step: a row then costs about one atomic
    /// add per step it starts in (a long row: one per warp). For sums of 32-bit values on CUDA,
    /// with the lanes on the block's innermost thread dimension (gpu_threads(lane, ...)) and the
    /// step loop serial inside it; other kernels keep their atomic updates as they are.
    void accumulate_lanes(const Halide::RVar &step);
    std::vector<std::string> lane_loops;  ///< the step loops of accumulate_lanes

    /// Keeps a thread's combination of consecutive positions of one row in registers across the
    /// serial loop over `run` (an RVar split off NonzeroScatter::p, innermost, serial), with one
    /// atomic update of memory per row the run touches instead of one per position: the segment
    /// reduction of merge-path SpMM (the extension's AccumulateAtomicRuns pass). It applies to
    /// sums (updates acc + message); other monoids keep an atomic update per position.
    void accumulate_runs(const Halide::RVar &run);
    std::vector<std::string> run_loops;  ///< the loops of accumulate_runs

    /// Set by SpmmProgram::compile: builds the lane form and the segment form.
    std::function<NnzLanes(ScheduleContext &, int, int)> split_lanes_impl;
    std::function<RowSegmentSplit(ScheduleContext &, int, int64_t, int, int)> split_rows_impl;
    std::function<NeighbourTiles(ScheduleContext &, int, const Halide::Var &, int)> stage_impl;
    std::function<NonzeroScatter(ScheduleContext &, int)> scatter_impl;
    std::function<RowTailSplit(ScheduleContext &, int)> tails_impl;
    std::function<RelabeledSources(ScheduleContext &)> relabel_impl;
};

/// What a schedule's run-time choice (ScheduleDef::for_graph) knows: the kernel's device, feature
/// count and monoid, and the graph it is about to run on.
struct RunShape {
    Device device = Device::CPU;
    int features = 0;
    bool monoid_merges = false;
    int64_t num_src = 0, num_dst = 0, num_edges = 0;
    /// The longest row: exact for a Graph, the view's bound for a GraphView (num_edges when unknown).
    int64_t max_degree = 0;
    /// Whether the graph is a GraphView, which carries no segment table (ScheduleContext::split_rows).
    bool graph_view = false;
};

/// A schedule for user programs with declared knobs: each knob's choices and default, a validity
/// rule over a point, and the directives. Points are checked before apply runs; the search
/// (search_schedule) measures every valid point. default_schedule() is the one compile() uses
/// without a schedule; it is written with this same API.
struct ScheduleDef : KnobSpace {
    std::function<void(ScheduleContext &)> apply;
    /// Optional: the point to run on a graph, given the point the kernel was compiled at. A schedule
    /// whose best form depends on the graph (short rows: a thread per row; long ones: lanes of
    /// nonzeros) says so here; a kernel then runs the point this returns for each graph, compiling
    /// each point other than its own once, on first use (CUDA: with the kernel's first run there).
    /// lowered_stmt(), assembly() and the static library are the compiled point's. Returned points
    /// are checked like compile()'s (ScheduleError). It must depend on its arguments alone: a kernel
    /// keeps its choice for the last graph shape it ran on.
    std::function<std::map<std::string, int64_t>(const std::map<std::string, int64_t> &point, const RunShape &run)>
        for_graph;
};

/// The default schedule of user programs: CPU rows_per_task (rows of one parallel task) and
/// vector_width (features computed together); CUDA feature_tile (threads over features),
/// rows_per_block (threads over rows), nnz_lanes (threads over each row's neighbours, merged in
/// shared memory: monoids that merge; 0 picks 8 for them and 1 otherwise) and nnz_steps (positions
/// a lane takes an iteration, unrolled), lane_merge (1: the lanes merge through shared memory after
/// a barrier; 2: through warp shuffles, one feature a thread, with int32_indexing, 32-bit types;
/// 0: shuffles below 8 features, else shared memory); on both, balanced_rows (1: rows in order of
/// in-degree, ScheduleContext::balanced_rows) and row_segments (L > 0: rows split into segments of
/// at most L neighbours across the graph, ScheduleContext::split_rows, each segment and then each
/// row reduced like a row of the thread-per-row form, CUDA: with nnz_lanes 0 or 1; L = 256 or 1024;
/// -1: whole rows, CUDA only; 0: by the graph, split_rows_by_default, whole rows on the CPU). Its for_graph runs a thread per row and feature
/// (nnz_lanes = 1) where nnz_lanes = 0 and a graph's longest row has at most kRowsFormMaxDegree
/// neighbours or the rows are split, splits rows where row_segments = 0 and split_rows_by_default
/// holds (CUDA, nnz_lanes 0 or 1, balanced_rows 0), and keeps rows whole (row_segments = -1) on
/// graph views, for monoids without a merge and on graphs whose longest row fits in one segment.
const ScheduleDef &default_schedule();
/// The segment length the default schedule's row_segments = 0 takes where it splits rows.
inline constexpr int64_t kAutoSegmentLength = 256;
/// Up to this many features, row_segments = 0 splits every graph whose longest row exceeds a segment.
inline constexpr int kAutoSegmentsMaxFeatures = 4;
/// Above kAutoSegmentsMaxFeatures, it splits where the longest row is at least this many times the
/// average row.
inline constexpr double kAutoSegmentsMinSkew = 600;
/// Whether the default schedule's row_segments = 0 splits rows on this graph (on CUDA): a Graph (not
/// a view) whose longest row exceeds kAutoSegmentLength, for a monoid that merges, and either at most
/// kAutoSegmentsMaxFeatures features or a longest row at least kAutoSegmentsMinSkew times the average.
/// Measured on an H200 (docs/dsl.md, "Rows split into segments"): on the zoo's training graphs with
/// long rows, segments of 256 ran 1.5x-11x faster than lanes of nonzeros at F = 4 (one tie: 0.97x) and
/// at F = 64 where the longest row is over 1,000 times the average (1.45x-11x), but 0.70x-0.98x on
/// graphs where it is 47-359 times the average.
bool split_rows_by_default(const RunShape &r);
/// The longest row up to which the default schedule's nnz_lanes = 0 runs a thread per row on CUDA.
inline constexpr int64_t kRowsFormMaxDegree = 64;


struct ProgramGradients;

class SpmmProgram {
public:
    /// name: a C identifier naming the program in errors and kernel names; type: its feature type.
    explicit SpmmProgram(std::string name, Halide::Type type = Halide::Float(32));

    /// Declares operand `name` read at `at`; its value for the message's feature f (element 0 of
    /// each row when broadcast). Names are C identifiers, unique within the program. `file` and
    /// `line` default to the caller's: errors about the operand name that line.
    Halide::Expr operand(const std::string &name, At at, bool broadcast = false, const char *file = __builtin_FILE(),
                         int line = __builtin_LINE());
    /// Declares operand `name` of columns.count columns, [rows, count], each feature f of the message
    /// reading column columns.at, an expression of feature() and constants: broadcasting other than
    /// one value a row, e.g. one attention weight a head over its head's D features (an edge operand
    /// [num_edges, H] read at Columns{H, feature() / D}) or a vector shared by every head
    /// (Columns{D, feature() % D}). compile(F) checks that the column lies in [0, count) for every
    /// f < F (ShapeError naming the operand's line otherwise).
    Halide::Expr operand(const std::string &name, At at, const Columns &columns, const char *file = __builtin_FILE(),
                         int line = __builtin_LINE());
    /// The message's feature index f, source id u, destination id v, edge id e (Int(32)).
    Halide::Expr feature() const { return f_; }
    Halide::Expr src() const { return u_; }
    Halide::Expr dst() const { return v_; }
    Halide::Expr edge() const { return e_; }
    /// The in-degree of the message's destination (Int(32)); also what finalize receives.
    Halide::Expr degree() const { return degree_; }

    /// The message (`file` and `line`: the caller's, for errors about the message).
    void message(Halide::Expr m, const char *file = __builtin_FILE(), int line = __builtin_LINE());
    /// A message of several values, for a monoid over tuples.
    void message(const Halide::Tuple &m, const char *file = __builtin_FILE(), int line = __builtin_LINE());
    void reduce(Monoid r);
    /// out = finalize(acc, degree) for nodes with in-edges (default: acc itself). Mean is
    /// finalize = acc / degree.
    void finalize(std::function<Halide::Expr(Halide::Expr acc, Halide::Expr degree)> f);
    /// out = f(accumulated tuple, degree) for a monoid over tuples (required by such a monoid).
    void finalize_values(std::function<Halide::Expr(const Halide::Tuple &acc, Halide::Expr degree)> f);
    /// Several outputs from one pass: output i = f(acc, degree)[i], each [num_dst, features] of the
    /// program's type (0 on rows without in-edges). acc is the accumulated tuple (of one value for
    /// a single-value monoid). Takes the place of finalize / finalize_values (one of the three).
    /// SpmmKernel::run then takes one tensor per output, in order.
    void finalize_outputs(std::function<Halide::Tuple(const Halide::Tuple &acc, Halide::Expr degree)> f);

    /// The program compiled for `features` output features on `device` under `schedule` at
    /// `point` (knobs left out take their defaults). Throws ShapeError for an incomplete program
    /// (no message or reduction), ScheduleError for an invalid point and KernelError when Halide
    /// rejects it.
    SpmmKernel compile(int features, Device device = Device::CPU, const ScheduleDef &schedule = default_schedule(),
                       const std::map<std::string, int64_t> &point = {}) const;

    const std::string &name() const { return name_; }
    /// The element type of the program's operands and output.
    Halide::Type type() const { return type_; }

    /// A declared operand: its name, where its rows come from and whether it has one feature.
    using OperandInfo = dsl::OperandInfo;
    /// The declared operands, in declaration order.
    std::vector<OperandInfo> operands() const;
    /// The column each feature f < features reads of operand `name`, declared with Columns (empty
    /// for an operand declared without); ShapeError as compile() gives it for a column outside the
    /// operand, or for an operand the program does not declare.
    std::vector<int32_t> column_map(const std::string &name, int features) const;

private:
    friend class SpmmKernel;
    friend ProgramGradients derive_gradients(const SpmmProgram &program);  // dsl/user_gradients.h
    std::string name_;
    Halide::Type type_;
    Halide::ImageParam row_ptr_, col_idx_, edge_ids_;
    Halide::ImageParam row_order_;  ///< rows by in-degree, longest first (ScheduleContext::balanced_rows)
    Halide::Param<int32_t> max_degree_, num_edges_, num_src_;
    Halide::Var f_{"f"}, v_{"v"};
    Halide::RDom k_;
    Halide::Expr u_, e_, degree_;
    std::vector<Operand> operands_;
    std::vector<Halide::Expr> message_;  ///< one value, or a tuple's values
    Site message_site_;                  ///< where message() was called
    std::shared_ptr<const Monoid> monoid_;  ///< shared by copies (a kernel keeps one to compile variants)
    std::function<Halide::Expr(Halide::Expr, Halide::Expr)> finalize_;
    std::function<Halide::Expr(const Halide::Tuple &, Halide::Expr)> finalize_values_;
    std::function<Halide::Tuple(const Halide::Tuple &, Halide::Expr)> finalize_outputs_;
};

/// A compiled user program (see SpmmProgram::compile). Copies share the compiled pipeline.
class SpmmKernel {
public:
    /// out [num_dst, features] = the program on g; operands by name. Every declared operand must be
    /// given, with its rows (num_src, num_dst or num_edges) and features (1 when broadcast), on the
    /// kernel's device (CUDA tensors hold device pointers; the launch gives the context and
    /// stream, and the graph's arrays are copied to the device once per graph); ShapeError naming
    /// the operand otherwise.
    void run(const Graph &g, const std::map<std::string, Tensor> &operands, Tensor &out,
             const CudaLaunch &launch = {}) const;
    /// The same on a graph view (graph/graph_view.h: index arrays in caller memory on the kernel's
    /// device, as mini-batch blocks built on the GPU hold them); nothing is copied. On CUDA the view
    /// must carry its edge ids (GraphView::edge_ids; positions when they are the ids). GraphError
    /// for a view that breaks its layout or lives on another device.
    void run(const GraphView &g, const std::map<std::string, Tensor> &operands, Tensor &out,
             const CudaLaunch &launch = {}) const;
    /// A program of several outputs (SpmmProgram::finalize_outputs): one tensor per output, in
    /// order, each [num_dst, features]; ShapeError when the count differs.
    void run(const Graph &g, const std::map<std::string, Tensor> &operands, const std::vector<Tensor *> &outs,
             const CudaLaunch &launch = {}) const;
    void run(const GraphView &g, const std::map<std::string, Tensor> &operands, const std::vector<Tensor *> &outs,
             const CudaLaunch &launch = {}) const;
    /// The number of outputs (1 unless the program has finalize_outputs).
    int num_outputs() const;

    /// Whether its schedule runs the rows in order of in-degree (ScheduleContext::balanced_rows) or
    /// in the graph's locality order (locality_rows): a run then reads the graph's row order (a
    /// GraphView must carry it: GraphView::row_order), and the static library takes it after
    /// edge_ids.
    bool orders_rows() const;
    /// Whether that order is the locality order (ScheduleContext::locality_rows).
    bool orders_rows_by_locality() const;
    /// Whether it runs on the graph relabeled in its locality order (ScheduleContext::relabel_sources):
    /// a run then reads the relabeled graph's arrays and its order (made once per Graph), and the
    /// static library takes the relabeled CSR and src_order after edge_ids.
    bool relabels_sources() const;
    /// The segment length of its schedule's split_rows (ScheduleContext::split_rows), 0 when its
    /// rows are whole: a run then reads the graph's segment table (made once per Graph).
    int segment_length() const;
    /// The source tile of its split_rows (0: segments in position order): a run then reads the
    /// graph's edges regrouped by source tiles (made once per Graph and tile).
    int64_t source_tile() const;
    /// The tail length of its split_row_tails (0: rows whole): a run then reads the graph's tail
    /// table (made once per Graph and length).
    int tail_length() const;
    /// Whether its schedule reduces by nonzeros (ScheduleContext::scatter_nonzeros): a run then reads
    /// the row of every CSR position (the graph's destination-ordered COO, made once per Graph).
    bool scatters_nonzeros() const;

    /// The lowered Halide statement (for tests and for users reading what was generated).
    std::string lowered_stmt() const;
    /// The target's assembly (PTX for Device::CUDA) of the program's kernel.
    std::string assembly() const;

    /// The schedule point it was compiled at, as text.
    std::string schedule() const;
    /// The point it runs on g: schedule(), or the one its schedule's for_graph picks for g.
    std::string schedule(const Graph &g) const;
    std::string schedule(const GraphView &g) const;

    /// The program as a static library for applications that link it without gsparse or a JIT
    /// (as Halide's generators produce): <dir>/<name>.a and <dir>/<name>.h, declaring
    ///   int name(halide_buffer_t *row_ptr, halide_buffer_t *col_idx, halide_buffer_t *edge_ids,
    ///            [halide_buffer_t *row_order,] [halide_buffer_t *src_order,] [halide_buffer_t *seg_ptr, halide_buffer_t *seg_row,
    ///            halide_buffer_t *row_segs, [halide_buffer_t *seg_ids,]] [halide_buffer_t *pos_row,]
    ///            [halide_buffer_t *tail_start, halide_buffer_t *tail_end, halide_buffer_t *tail_row,]
    ///            halide_buffer_t *<operand>...,
    ///            int32_t max_degree, int32_t num_edges, int32_t num_src, [int32_t num_segs,
    ///            int32_t max_segments, int32_t max_segment_len,] [int32_t num_tails,] halide_buffer_t *out);
    /// row_order (num_dst rows by in-degree, longest first: a permutation) only when orders_rows();
    /// src_order (the relabeling: new node i is old node src_order[i]) only when relabels_sources(),
    /// the CSR arrays then the relabeled graph's (graph/relabel.h);
    /// the segment table (graph/segments.h: split_row_segments and segment_rows, at least one
    /// segment: pad an edgeless graph with one empty segment) only when segment_length() > 0, with
    /// source tiles (source_tile() > 0) the segments of graph/segments.h's source_tile_segments,
    /// their rows, row_segs and seg_ids, and col_idx and edge_ids the edges in that order
    /// (Graph::coo_by_dst(source_tile()));
    /// pos_row (the row of every CSR position, num_edges entries) only when scatters_nonzeros();
    /// the tail table (graph/segments.h: row_tails, at least one tail: pad with an empty one) and
    /// max_degree = min(the longest row, tail_length()) only when tail_length() > 0;
    /// operands in the order of their operand() calls (declare them in statements of their own: the
    /// order in which C++ evaluates the sides of `a * b` is unspecified); the CSR arrays of
    /// graph/formats.h with edge_ids holding the edge id of every position; feature buffers
    /// [width, rows] (width: features, 1 when broadcast, or the operand's Columns; the feature dimension first, dense). It returns 0 or a Halide error code. name must be a C identifier.
    /// A program of several outputs takes one output buffer each, last, in order.
    void compile_to_static_library(const std::string &dir, const std::string &name) const;
    /// The argument names of that function, in order (the outputs last: <name>_out, or
    /// <name>_out_0, <name>_out_1, ... for several).
    std::vector<std::string> argument_names() const;

private:
    friend class SpmmProgram;
    struct State;
    struct Indices;
    void run_on(const Indices &g, const std::map<std::string, Tensor> &operands, const std::vector<Tensor *> &outs,
                const CudaLaunch &launch) const;
    /// The point the schedule's for_graph picks for a graph of these sizes (checked; the compiled
    /// point for a schedule without for_graph).
    std::map<std::string, int64_t> point_for(int64_t num_src, int64_t num_dst, int64_t num_edges, int64_t max_degree,
                                             bool graph_view) const;
    /// The kernel of that point, compiled on first use, or null when it is this kernel's own.
    const SpmmKernel *variant_for(int64_t num_src, int64_t num_dst, int64_t num_edges, int64_t max_degree,
                                  bool graph_view) const;
    std::shared_ptr<State> state_;
};


/// Measures every valid point of `schedule` for the program on g with these operands (runs timed
/// runs after one warm-up each, median), fastest first. `sync` waits for the device (required for
/// CUDA: it must wait for the launch's stream; unused on the CPU). out receives the last result.
std::vector<MeasuredPoint> search_schedule(const SpmmProgram &program, const ScheduleDef &schedule, int features,
                                           Device device, const Graph &g,
                                           const std::map<std::string, Tensor> &operands, Tensor &out,
                                           const CudaLaunch &launch = {}, int runs = 10,
                                           const std::function<void()> &sync = nullptr);

/// The same over the given points of `schedule` only (a sample of a large space), fastest first;
/// ScheduleError for a point the schedule does not take.
std::vector<MeasuredPoint> measure_points(const SpmmProgram &program, const ScheduleDef &schedule,
                                          const std::vector<std::map<std::string, int64_t>> &points, int features,
                                          Device device, const Graph &g,
                                          const std::map<std::string, Tensor> &operands, Tensor &out,
                                          const CudaLaunch &launch = {}, int runs = 10,
                                          const std::function<void()> &sync = nullptr);

}  // namespace gsparse::dsl
