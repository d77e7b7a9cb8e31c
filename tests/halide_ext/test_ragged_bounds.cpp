// The ragged bound inference pass (halide_ext/ragged_bounds.h): plain CSR / COO algorithms do not
// compile without it and compute the right result with it; it reports exactly the rewrites it makes,
// is idempotent, and lets a stage of a k tile be sized by the tile (kNnzTile x kMTile).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "halide_ext/ir_inspect.h"
#include "halide_ext/ragged_bounds.h"
#include "ops/sddmm_algorithm.h"
#include "ops/spmm_algorithm.h"
#include "plain_algorithms.h"

namespace gsparse {
namespace {

using namespace Halide;
using ext::RaggedRewrite;
using Kind = ext::RaggedRewrite::Kind;
using test::PlainSddmm;
using test::PlainSpmm;
using test::SmallCsr;

constexpr int kF = 2;

Buffer<int32_t> int_buffer(const std::vector<int32_t> &v) {
    Buffer<int32_t> b(static_cast<int>(v.size()));
    for (size_t i = 0; i < v.size(); i++) b(static_cast<int>(i)) = v[i];
    return b;
}

/// Binds the small graph and features X(f, u) = u + 1 + 10 f, Y(f, e) = e + 1 to a PlainSpmm.
void bind_spmm_inputs(PlainSpmm &a, const SmallCsr &g) {
    a.row_ptr.set(int_buffer(g.row_ptr));
    a.col_idx.set(int_buffer(g.col_idx));
    a.edge_ids.set(int_buffer(g.edge_ids));
    Buffer<float> x(kF, g.num_nodes), y(kF, g.nnz());
    for (int u = 0; u < g.num_nodes; u++)
        for (int f = 0; f < kF; f++) x(f, u) = static_cast<float>(u + 1 + 10 * f);
    for (int e = 0; e < g.nnz(); e++)
        for (int f = 0; f < kF; f++) y(f, e) = static_cast<float>(e + 1);
    a.X.set(x);
    a.Y.set(y);
    a.max_degree.set(g.max_degree());
    a.num_edges.set(g.nnz());
    a.num_src.set(g.num_nodes);
}

/// out(f, v) for the small graph, computed by hand (row by row from the CSR arrays).
const float kSpmmExpected[5][kF] = {{28, 138}, {6, 66}, {0, 0}, {3, 13}, {72, 252}};

void expect_spmm_result(const Buffer<float> &out) {
    ASSERT_EQ(out.dim(0).extent(), kF);
    ASSERT_EQ(out.dim(1).extent(), 5);
    for (int v = 0; v < 5; v++)
        for (int f = 0; f < kF; f++) EXPECT_EQ(out(f, v), kSpmmExpected[v][f]) << "f=" << f << " v=" << v;
}

template <typename F>
std::string compile_error(F &&f) {
    try {
        f();
    } catch (const CompileError &e) {
        return e.what();
    }
    return "";
}

/// Text of an Expr, for comparing ranges.
std::string str(const Expr &e) {
    std::ostringstream s;
    s << e;
    return s.str();
}

std::string range(const Expr &lo, const Expr &hi) {
    return "[" + str(Internal::simplify(lo)) + ", " + str(Internal::simplify(hi)) + "]";
}

/// A Func's name without the suffix Halide adds to make names unique ("acc$3" -> "acc").
std::string base_name(const std::string &n) { return n.substr(0, n.find('$')); }

/// The rewrites of a report as "buffer/dim/kind/range" strings, sorted.
std::vector<std::string> summary(const ext::RaggedBoundsReport &r) {
    std::vector<std::string> s;
    for (const RaggedRewrite &w : r.rewrites)
        s.push_back(base_name(w.func) + ":" + w.buffer + "/" + std::to_string(w.dimension) + "/" + ext::to_string(w.kind) + "/" +
                    w.range);
    std::sort(s.begin(), s.end());
    return s;
}

// --- (a) compile failure without the pass, correct result with it ------------------------------

TEST(RaggedBounds, PlainCsrSpmmIsUnboundedWithoutThePass) {
    PlainSpmm a;
    bind_spmm_inputs(a, SmallCsr());
    std::string err = compile_error([&] { a.out.realize({kF, 5}); });
    ASSERT_FALSE(err.empty()) << "the plain CSR algorithm compiled without the pass";
    EXPECT_NE(err.find("unbounded"), std::string::npos) << err;
}

TEST(RaggedBounds, PlainCsrSpmmCompilesAndMatchesWithThePass) {
    PlainSpmm a;
    ext::RaggedBoundsReport report = ext::infer_ragged_bounds({a.out}, a.layout());
    EXPECT_TRUE(report.notes.empty()) << report.str();
    SmallCsr g;
    bind_spmm_inputs(a, g);
    Buffer<float> out = a.out.realize({kF, 5});
    expect_spmm_result(out);
}

TEST(RaggedBounds, StagedSpmmIsUnboundedWithoutThePassAndMatchesWithIt) {
    {
        PlainSpmm a(/*staged=*/true);
        bind_spmm_inputs(a, SmallCsr());
        std::string err = compile_error([&] { a.out.realize({kF, 5}); });
        EXPECT_NE(err.find("unbounded"), std::string::npos) << err;
    }
    PlainSpmm a(/*staged=*/true);
    ext::infer_ragged_bounds({a.out}, a.layout());
    bind_spmm_inputs(a, SmallCsr());
    expect_spmm_result(a.out.realize({kF, 5}));
}

TEST(RaggedBounds, PlainCooSddmmIsUnboundedWithoutThePassAndMatchesWithIt) {
    auto bind = [](PlainSddmm &a) {
        a.src_idx.set(int_buffer({1, 3, 0, 2, 0}));
        a.dst_idx.set(int_buffer({0, 0, 1, 3, 4}));
        Buffer<float> l(kF, 4), r(kF, 5);
        for (int u = 0; u < 4; u++)
            for (int f = 0; f < kF; f++) l(f, u) = static_cast<float>(u + 1 + 10 * f);
        for (int v = 0; v < 5; v++)
            for (int f = 0; f < kF; f++) r(f, v) = static_cast<float>(2 * v);
        a.L.set(l);
        a.R.set(r);
        a.num_edges.set(5);
        a.num_src.set(4);
        a.num_dst.set(5);
    };
    {
        PlainSddmm a;
        bind(a);
        std::string err = compile_error([&] { a.out.realize({kF, 5}); });
        EXPECT_NE(err.find("unbounded"), std::string::npos) << err;
    }
    {
        PlainSddmm a;
        ext::infer_ragged_bounds({a.out}, a.layout());
        bind(a);
        Buffer<float> out = a.out.realize({kF, 5});
        const float expected[5][kF] = {{2, 12}, {4, 14}, {3, 13}, {9, 19}, {9, 19}};
        for (int e = 0; e < 5; e++)
            for (int f = 0; f < kF; f++) EXPECT_EQ(out(f, e), expected[e][f]) << "f=" << f << " e=" << e;
    }
    {
        PlainSddmm a(/*dot=*/true, kF);
        ext::infer_ragged_bounds({a.out}, a.layout());
        bind(a);
        Buffer<float> out = a.out.realize({5});
        const float expected[5] = {0, 0, 24, 96, 96};
        for (int e = 0; e < 5; e++) EXPECT_EQ(out(e), expected[e]) << "e=" << e;
    }
}

// --- (b) the report --------------------------------------------------------------------------

TEST(RaggedBounds, ReportListsTheSpmmRewrites) {
    PlainSpmm a;
    ext::RaggedBoundsReport report = ext::infer_ragged_bounds({a.out}, a.layout());
    const std::string nnz = range(0, a.num_edges - 1);
    std::vector<std::string> expected = {
        "acc:X/1/gather/" + range(0, a.num_src - 1),
        "acc:Y/1/gather/" + range(0, a.num_edges - 1),
        "acc:col_idx/0/position/" + nnz,
        "acc:edge_ids/0/position/" + nnz,
    };
    EXPECT_EQ(summary(report), expected) << report.str();
    // The per-row range of a position: [row_ptr(v) + min(k), row_ptr(v) + max(k)], k bounded by
    // the RDom and its predicate k < row_ptr(v + 1) - row_ptr(v).
    auto col = report.of("col_idx", Kind::Position);
    ASSERT_EQ(col.size(), 1u);
    EXPECT_EQ(col[0].stage, 1);
    EXPECT_NE(col[0].row_range.find("row_ptr(v)"), std::string::npos) << col[0].row_range;
    EXPECT_NE(col[0].row_range.find("row_ptr(v + 1)"), std::string::npos) << col[0].row_range;
    EXPECT_NE(col[0].row_range.find("max_degree"), std::string::npos) << col[0].row_range;
    EXPECT_EQ(col[0].row_range.rfind("[row_ptr(v), ", 0), 0u) << col[0].row_range;
    ASSERT_EQ(report.funcs.size(), 2u);
    EXPECT_EQ(base_name(report.funcs[0]), "out");
    EXPECT_EQ(base_name(report.funcs[1]), "acc");
    // Guarded by the RDom predicate: no clamp needed.
    EXPECT_FALSE(col[0].clamped);
    EXPECT_TRUE(report.notes.empty()) << report.str();
}

TEST(RaggedBounds, OffsetClampedToTheRowsLastPositionStaysInsideTheRow) {
    // Positions row_ptr(v) + min(k, deg(v) - 1) with k over a domain that runs past short rows (as
    // the unrolled steps of lanes of nonzeros read): a position, provably inside the array, so
    // promised without a real clamp; the pipeline compiles and reads only the row's entries.
    PlainSpmm a;
    Func acc("clamped_acc"), out("clamped_out");
    Var f("f"), v("v");
    Expr deg = a.row_ptr(v + 1) - a.row_ptr(v);
    RDom r(0, (a.max_degree + 3) / 4 * 4, "r");
    r.where(r.x / 4 * 4 < deg);
    Expr p = a.row_ptr(v) + min(r.x, deg - 1);
    acc(f, v) = 0.f;
    acc(f, v) += select(r.x < deg, a.X(f, a.col_idx(p)) * a.Y(f, a.edge_ids(p)), 0.f);
    out(f, v) = acc(f, v);
    ext::RaggedBoundsReport report = ext::infer_ragged_bounds({out, acc}, a.layout());
    auto col = report.of("col_idx", Kind::Position);
    ASSERT_EQ(col.size(), 1u) << report.str();
    EXPECT_FALSE(col[0].clamped) << report.str();
    SmallCsr g;
    bind_spmm_inputs(a, g);
    Buffer<float> result = out.realize({kF, 5});
    expect_spmm_result(result);
}

TEST(RaggedBounds, ReportListsTheStagedSpmmRewrites) {
    PlainSpmm a(/*staged=*/true);
    ext::RaggedBoundsReport report = ext::infer_ragged_bounds({a.out}, a.layout());
    const std::string nnz = range(0, a.num_edges - 1);
    std::vector<std::string> expected = {
        "acc:X/1/gather/" + range(0, a.num_src - 1),
        "acc:Y/1/gather/" + range(0, a.num_edges - 1),
        "eid:edge_ids/0/position/" + nnz,
        "nbr:col_idx/0/position/" + nnz,
    };
    EXPECT_EQ(summary(report), expected) << report.str();
    auto col = report.of("col_idx");
    ASSERT_EQ(col.size(), 1u);
    EXPECT_EQ(col[0].stage, 0);
    // kv is a pure Var: its range is the one the consumers require.
    EXPECT_EQ(col[0].row_range, "[(row_ptr(v) + kv.min), (row_ptr(v) + kv.max)]");
    // A staged tile may run past a row's end: the position is clamped into the array.
    EXPECT_TRUE(col[0].clamped);
}

TEST(RaggedBounds, ReportListsTheSddmmRewrites) {
    {
        PlainSddmm a;
        ext::RaggedBoundsReport report = ext::infer_ragged_bounds({a.out}, a.layout());
        std::vector<std::string> expected = {
            "sddmm_out:L/1/gather/" + range(0, a.num_src - 1),
            "sddmm_out:R/1/gather/" + range(0, a.num_dst - 1),
        };
        EXPECT_EQ(summary(report), expected) << report.str();
    }
    {
        PlainSddmm a(/*dot=*/true);
        ext::RaggedBoundsReport report = ext::infer_ragged_bounds({a.out}, a.layout());
        std::vector<std::string> expected = {
            "sddmm_out:L/1/gather/" + range(0, a.num_src - 1),
            "sddmm_out:R/1/gather/" + range(0, a.num_dst - 1),
        };
        EXPECT_EQ(summary(report), expected) << report.str();
        for (const RaggedRewrite &w : report.rewrites) EXPECT_EQ(w.stage, 1);
    }
}

TEST(RaggedBounds, GatherRangesFollowTheArgumentArithmetic) {
    ImageParam row_ptr(Int(32), 1, "row_ptr"), col_idx(Int(32), 1, "col_idx"), vals(Float(32), 1, "vals");
    ImageParam X(Float(32), 1, "X");
    Param<int32_t> nnz("nnz"), n("n");
    Var v("v");
    Func g("g");
    // X(col_idx(p) + 1): the declared range [0, n - 1] shifted by one. vals(...) is data: a position
    // index is bounded, its value is no index.
    g(v) = X(col_idx(row_ptr(v)) + 1) + vals(row_ptr(v) + 2);
    ext::SparseLayout l;
    l.csr(row_ptr, nnz).nnz_index_array(col_idx, n).nnz_data_array(vals);
    ext::RaggedBoundsReport report = ext::infer_ragged_bounds({g}, l);
    std::vector<std::string> expected = {
        "g:X/0/gather/" + range(1, n),
        "g:col_idx/0/position/" + range(0, nnz - 1),
        "g:vals/0/position/" + range(0, nnz - 1),
    };
    EXPECT_EQ(summary(report), expected) << report.str();
}

TEST(RaggedBounds, LeavesOtherAccessesUntouched) {
    ImageParam row_ptr(Int(32), 1, "row_ptr"), col_idx(Int(32), 1, "col_idx"), X(Float(32), 2, "X");
    Param<int32_t> nnz("nnz"), n("n");
    Var f("f"), v("v");
    Func degree("degree"), scaled("scaled"), weird("weird");
    degree(v) = row_ptr(v + 1) - row_ptr(v);               // row_ptr itself: rectangular, untouched
    scaled(f, v) = X(f, v) * cast<float>(degree(v));       // no sparse index
    weird(f, v) = scaled(f, v) + X(f, (row_ptr(v) * 2) % 7);  // not a CSR position: left alone, noted
    ext::SparseLayout l;
    l.csr(row_ptr, nnz).nnz_index_array(col_idx, n);
    std::vector<Expr> before;
    for (Func fn : {degree, scaled, weird}) before.push_back(fn.value());
    ext::RaggedBoundsReport report = ext::infer_ragged_bounds({weird}, l);
    EXPECT_TRUE(report.empty()) << report.str();
    EXPECT_EQ(report.notes.size(), 1u) << report.str();
    int i = 0;
    for (Func fn : {degree, scaled, weird}) EXPECT_TRUE(fn.value().same_as(before[i++])) << fn.name();
}

// --- (c) idempotence -------------------------------------------------------------------------

/// All Exprs of a Func's definitions, as text.
std::string definitions_text(Func fn) {
    std::ostringstream s;
    const Internal::Function &f = fn.function();
    auto def_text = [&](const Internal::Definition &d) {
        for (const Expr &e : d.args()) s << e << ",";
        s << "=";
        for (const Expr &e : d.values()) s << e << ",";
        if (d.predicate().defined()) s << " if " << d.predicate();
        s << "\n";
    };
    def_text(f.definition());
    for (const auto &u : f.updates()) def_text(u);
    return s.str();
}

TEST(RaggedBounds, IsIdempotent) {
    for (bool staged : {false, true}) {
        PlainSpmm a(staged);
        ext::RaggedBoundsReport first = ext::infer_ragged_bounds({a.out}, a.layout());
        EXPECT_EQ(first.rewrites.size(), 4u);
        std::string once = definitions_text(a.acc) + definitions_text(a.nbr.defined() ? a.nbr : a.acc);
        ext::RaggedBoundsReport second = ext::infer_ragged_bounds({a.out}, a.layout());
        EXPECT_TRUE(second.empty()) << second.str();
        std::string twice = definitions_text(a.acc) + definitions_text(a.nbr.defined() ? a.nbr : a.acc);
        EXPECT_EQ(once, twice);
        // One promise per rewritten argument, not two.
        EXPECT_EQ(once.find("unsafe_promise_clamped(unsafe_promise_clamped"), std::string::npos) << once;
    }
    PlainSddmm s;
    ext::infer_ragged_bounds({s.out}, s.layout());
    std::string once = definitions_text(s.out);
    EXPECT_TRUE(ext::infer_ragged_bounds({s.out}, s.layout()).empty());
    EXPECT_EQ(definitions_text(s.out), once);
}

TEST(RaggedBounds, HandWrittenPromisesAreKept) {
    ImageParam row_ptr(Int(32), 1, "row_ptr"), col_idx(Int(32), 1, "col_idx"), X(Float(32), 1, "X");
    Param<int32_t> nnz("nnz"), n("n");
    Var v("v");
    Func g("g");
    g(v) = X(unsafe_promise_clamped(col_idx(unsafe_promise_clamped(row_ptr(v), 0, nnz - 1)), 0, n - 1));
    ext::SparseLayout l;
    l.csr(row_ptr, nnz).nnz_index_array(col_idx, n);
    Expr before = g.value();
    EXPECT_TRUE(ext::infer_ragged_bounds({g}, l).empty());
    EXPECT_TRUE(g.value().same_as(before));
}

// --- gsparse's algorithms use the pass -------------------------------------------------------

TEST(RaggedBounds, GsparseAlgorithmsCarryThePromises) {
    FeatureLayout layout = plan_features(BinaryOp::Mul, {8}, {8});
    SpmmAlgorithm s = build_spmm_algorithm({BinaryOp::Mul, ReduceOp::Sum}, layout, DType::F32, false);
    std::string nbr = definitions_text(s.nbr), eid = definitions_text(s.eid), acc = definitions_text(s.acc);
    // Loads of ImageParams appear as calls to their wrapper Funcs (col_idx_im...).
    EXPECT_TRUE(std::regex_search(nbr, std::regex(R"(col_idx_im[$0-9]*\(unsafe_promise_clamped\(min\()"))) << nbr;
    EXPECT_TRUE(std::regex_search(eid, std::regex(R"(edge_ids_im[$0-9]*\(unsafe_promise_clamped\(min\()"))) << eid;
    EXPECT_TRUE(std::regex_search(acc, std::regex(R"(lhs_im[$0-9]*\(f0, unsafe_promise_clamped\(spmm_nbr)"))) << acc;
    EXPECT_TRUE(std::regex_search(acc, std::regex(R"(rhs_im[$0-9]*\(f0, unsafe_promise_clamped\(spmm_eid)"))) << acc;
    // Edge ids that are the positions: eid's value is a position, promised (and clamped) as one.
    SpmmAlgorithm si = build_spmm_algorithm({BinaryOp::Mul, ReduceOp::Sum}, layout, DType::F32, true);
    std::string eid_pos = definitions_text(si.eid);
    EXPECT_TRUE(std::regex_search(eid_pos, std::regex(R"(=unsafe_promise_clamped\(min\(row_ptr_im[$0-9]*\(v\) \+ kv)")))
        << eid_pos;
    // Already promised: a second run changes nothing.
    ext::SparseLayout l;
    l.csr(s.row_ptr, s.num_edges).nnz_index_array(s.col_idx, s.num_src).nnz_index_array(s.edge_ids, s.num_edges);
    EXPECT_TRUE(ext::infer_ragged_bounds({s.out}, l).empty());

    SddmmSpec spec{BinaryOp::Add, OperandTarget::Src, OperandTarget::Dst};
    SddmmAlgorithm d = build_sddmm_algorithm(spec, plan_features(BinaryOp::Add, {8}, {8}), DType::F32);
    std::string out = definitions_text(d.out);
    EXPECT_TRUE(std::regex_search(out, std::regex(R"(unsafe_promise_clamped\(src_idx_im[$0-9]*\(e\), 0, num_src)")))
        << out;
    EXPECT_TRUE(std::regex_search(out, std::regex(R"(unsafe_promise_clamped\(dst_idx_im[$0-9]*\(e\), 0, num_dst)")))
        << out;
}

// --- (d) a stage of a k tile is sized by the tile ---------------------------------------------

/// PlainSpmm (staged) with rows in blocks of M, k split by T and nbr staged at the outer split ko:
/// the loop nest is   for vo: for ko: [nbr(kv, v) for kv in the tile, v in the block]; for v: for ki.
void stage_k_tile(PlainSpmm &a, int T, int M, TailStrategy row_tail) {
    Var vo("vo"), vi("vi");
    RVar ko("ko"), ki("ki");
    a.out.split(a.v, vo, vi, M, row_tail);
    a.acc.compute_at(a.out, vo);
    a.acc.update().split(a.k, ko, ki, T).reorder(a.f, ki, a.v, ko);
    a.nbr.compute_at(a.acc, ko);
}

TEST(RaggedBounds, StageAtTheOuterSplitOfKIsATileOfTheBlock) {
    constexpr int T = 4, M = 2;  // kNnzTile, kMTile
    PlainSpmm a(/*staged=*/true);
    ext::infer_ragged_bounds({a.out}, a.layout());
    stage_k_tile(a, T, M, TailStrategy::GuardWithIf);
    Internal::Stmt s = ext::lowered_stmt(Pipeline(a.out), get_host_target());
    ASSERT_TRUE(s.defined());

    // One allocation per k tile (Halide peels the last, partial tiles of k into a second loop); the
    // tile is T x M, smaller only in the tail tiles (last k tile, last row block).
    auto allocs = ext::find_allocations(s, a.nbr.name());
    ASSERT_FALSE(allocs.empty()) << ext::stmt_text(s);
    bool full_tile = false;
    for (const auto &al : allocs) {
        ASSERT_EQ(al.extents.size(), 2u);
        auto ub = al.extent_upper_bounds();
        ASSERT_TRUE(ub.has_value()) << al.expanded_extents[0] << " x " << al.expanded_extents[1];
        EXPECT_LE((*ub)[0], T) << al.expanded_extents[0];
        EXPECT_LE((*ub)[1], M) << al.expanded_extents[1];
        full_tile = full_tile || *ub == std::vector<int64_t>{T, M};
        ASSERT_FALSE(al.enclosing_loops.empty());
        EXPECT_TRUE(ext::name_matches(al.enclosing_loops.back(), "*.ko*")) << al.enclosing_loops.back();
    }
    EXPECT_TRUE(full_tile);
    // eid is inlined: no allocation; edge_ids is read in the update, col_idx only by the stage.
    EXPECT_TRUE(ext::find_allocations(s, a.eid.name()).empty());
    for (const auto &l : ext::find_loads(s, "col_idx")) {
        bool in_stage = false;
        for (const auto &loop : l.enclosing_loops) in_stage = in_stage || loop.rfind(a.nbr.name() + ".", 0) == 0;
        EXPECT_TRUE(in_stage) << l.index;
    }

    // Still computes the right thing.
    bind_spmm_inputs(a, SmallCsr());
    expect_spmm_result(a.out.realize({kF, 5}));
}

TEST(RaggedBounds, ConstantStageTileReadsPastRowEndsInsideTheArray) {
    // A fixed T x M tile: every row of the block reads T positions from each tile start, past the
    // ends of short rows (and past nnz for the last rows); the pass clamps those positions into
    // col_idx, and the guarded update never uses them.
    constexpr int T = 4, M = 2;
    PlainSpmm a(/*staged=*/true);
    ext::RaggedBoundsReport report = ext::infer_ragged_bounds({a.out}, a.layout());
    ASSERT_EQ(report.of("col_idx").size(), 1u);
    EXPECT_TRUE(report.of("col_idx")[0].clamped);
    stage_k_tile(a, T, M, TailStrategy::ShiftInwards);
    a.nbr.bound_extent(a.kv, T);
    Internal::Stmt s = ext::lowered_stmt(Pipeline(a.out), get_host_target());
    auto allocs = ext::find_allocations(s, a.nbr.name());
    ASSERT_FALSE(allocs.empty());
    for (const auto &al : allocs) EXPECT_EQ(al.constant_elements(), T * M) << al.expanded_extents[0];
    // The stage fills the tile with a T (kv) x M (v) loop nest.
    auto loops = ext::list_loops(s, a.nbr.name() + ".s0.*");
    ASSERT_FALSE(loops.empty());
    for (const auto &l : loops) {
        if (ext::name_matches(l.name, "*.kv*")) EXPECT_EQ(l.constant_extent(), T) << l.name;
        else EXPECT_EQ(l.constant_extent(), M) << l.name;
    }
    // The stage's loads of col_idx are clamped to the array's last position.
    auto loads = ext::find_loads(s, "col_idx");
    ASSERT_FALSE(loads.empty());
    for (const auto &l : loads) EXPECT_NE(str(l.index).find("num_edges + -1"), std::string::npos) << l.index;

    SmallCsr g;
    bind_spmm_inputs(a, g);
    // col_idx exactly nnz long, so that any read past its end would be an error of the input-bounds
    // checks or of the clamp.
    expect_spmm_result(a.out.realize({kF, 5}));
}

TEST(RaggedBounds, StageTileInGpuSharedMemoryIsKNnzTileByKMTile) {
    // Compiled for CUDA (no device needed): a block of M rows, one thread per row, k split by T, the
    // neighbour-id tile staged in shared memory at the outer split ko: T x M ids.
    constexpr int T = 8, M = 4;
    PlainSpmm a(/*staged=*/true);
    ext::infer_ragged_bounds({a.out}, a.layout());
    Var vo("vo"), vi("vi");
    RVar ko("ko"), ki("ki");
    a.out.bound(a.f, 0, kF);
    a.out.split(a.v, vo, vi, M, TailStrategy::GuardWithIf).reorder(a.f, vi, vo).gpu_blocks(vo).gpu_threads(vi);
    a.acc.compute_at(a.out, vo).store_in(MemoryType::Register).bound_extent(a.v, M).gpu_threads(a.v);
    a.acc.update().split(a.k, ko, ki, T, TailStrategy::GuardWithIf).reorder(a.f, ki, a.v, ko).gpu_threads(a.v);
    a.nbr.compute_at(a.acc, ko).store_in(MemoryType::GPUShared).bound_extent(a.kv, T).gpu_threads(a.v);
    Target t = get_host_target().with_feature(Target::CUDA).with_feature(Target::CUDACapability70);
    Internal::Stmt s = ext::lowered_stmt(Pipeline(a.out), t);

    // GPU lowering names the shared allocation "<func>.0" and folds its constant extents.
    auto allocs = ext::find_allocations(s, a.nbr.name() + ".*");
    ASSERT_EQ(allocs.size(), 1u) << ext::stmt_text(s);
    EXPECT_EQ(allocs[0].memory_type, MemoryType::GPUShared);
    EXPECT_EQ(allocs[0].elements_upper_bound(), T * M) << allocs[0].expanded_extents[0];
    // The tile is read through the staged ids, col_idx only by the stage (clamped into the array).
    for (const auto &l : ext::find_loads(s, "col_idx"))
        EXPECT_NE(str(l.index).find("num_edges + -1"), std::string::npos) << l.index;
    // Barriers around the tile are reached by every thread of the block.
    auto barriers = ext::find_calls(s, "gpu_thread_barrier");
    EXPECT_FALSE(barriers.empty());
    for (const auto &b : barriers) {
        EXPECT_FALSE(b.under_thread_dependent_condition);
        EXPECT_FALSE(b.under_thread_dependent_loop);
    }
}

}  // namespace
}  // namespace gsparse
