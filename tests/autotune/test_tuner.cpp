// The CPU tuner: search space, modes, and a full tune whose best kernel matches the reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "api/gsparse.h"
#include "autotune/measure.h"
#include "autotune/replay.h"
#include "autotune/search_space.h"
#include "autotune/sweep.h"
#include "autotune/tuner.h"
#include "core/error.h"
#include "schedules/spmm_segments.h"
#include "support/compare.h"
#include "support/random_graph.h"

namespace gsparse::autotune {
namespace {

TuningProblem small_problem(OpKind kind, int64_t feat) {
    TuningProblem p;
    p.kind = kind;
    p.graph = test::random_graph(31);
    p.graph_name = "random";
    p.spmm = {BinaryOp::Mul, ReduceOp::Max};
    p.sddmm = {BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst};
    p.lhs_feat = {feat};
    p.rhs_feat = {feat};
    p.prepare();
    return p;
}

TEST(SearchSpace, RejectsVectorsWiderThanTheFeatureWithAReason) {
    TuningProblem p = small_problem(OpKind::Spmm, 6);
    SearchSpace s = build_search_space(p);
    EXPECT_EQ(s.valid.size() + s.rejected_count + s.aliases, s.space.size());
    ASSERT_FALSE(s.rejected.empty());
    EXPECT_EQ(s.rejected.size(), std::min(s.rejected_count, SearchSpace::kMaxRejectedExamples));
    for (const auto &[params, why] : s.rejected) {
        EXPECT_GT(params.get("vector_width"), 6);
        EXPECT_NE(why.find("exceeds"), std::string::npos);
    }
    for (const auto &v : s.valid) EXPECT_LE(v.get("vector_width"), 6);
    EXPECT_TRUE(std::find(s.valid.begin(), s.valid.end(), s.expert_default) != s.valid.end());
}

TEST(SearchSpace, ExpertDefaultIsOneOfTheEnumeratedPoints) {
    // Defaults may leave out knobs that have an absent value (gpu_sddmm's kFeatChunk, kMRegTile,
    // groupByDst, kSrcTile); the space's default is completed, so it is the very point the
    // enumeration lists and a sweep counts it once.
    for (OpKind kind : {OpKind::Spmm, OpKind::Sddmm})
        for (Device device : {Device::CPU, Device::CUDA})
            for (int64_t feat : {1, 7, 8, 32, 128, 256}) {
                TuningProblem p = small_problem(kind, feat);
                p.device = device;
                const SearchSpace s = build_search_space(p);
                EXPECT_TRUE(std::find(s.valid.begin(), s.valid.end(), s.expert_default) != s.valid.end())
                    << s.expert_default.str() << " (F = " << feat << ")";
                for (const auto &knob : s.space.knobs) EXPECT_TRUE(s.expert_default.values.count(knob.name)) << knob.name;
            }
}

TEST(SearchSpace, EnumerationMatchesCheckingEveryPointAlone) {
    // The enumeration walks the space with one point updated in place and keeps only the first
    // rejections: point by point, the same valid points (aliases left out) and as many rejections.
    for (Device device : {Device::CPU, Device::CUDA}) {
        TuningProblem p = small_problem(OpKind::Spmm, 12);
        p.device = device;  // the space depends on the device's schedule, not on where the tensors are
        const SearchSpace s = build_search_space(p);
        const auto def = default_spmm_schedule(device);
        const Problem sp = p.schedule_problem();
        std::vector<ScheduleParams> valid;
        size_t rejected = 0, aliases = 0;
        for (size_t i = 0; i < s.space.size(); i++) {
            const ScheduleParams q = s.space.at(i);
            const ScheduleParams c = canonical_point(def, q);
            if (def.invalid_reason(q, sp)) rejected++;
            else if (c == q || def.invalid_reason(c, sp)) valid.push_back(q);
            else aliases++;
        }
        EXPECT_EQ(valid, s.valid);
        EXPECT_EQ(rejected, s.rejected_count);
        EXPECT_EQ(aliases, s.aliases);
        EXPECT_EQ(s.rejected.size(), std::min(rejected, SearchSpace::kMaxRejectedExamples));
        for (const auto &[q, why] : s.rejected) EXPECT_EQ(def.invalid_reason(q, sp).value_or(""), why);
        if (device == Device::CUDA) {
            EXPECT_GT(s.aliases, 0u);
            EXPECT_GT(s.rejected_count, SearchSpace::kMaxRejectedExamples);
        }
    }
}

TEST(Tuner, ExhaustiveSpmmFindsAValidScheduleThatMatchesTheReference) {
    TuningProblem p = small_problem(OpKind::Spmm, 24);
    TuneOptions o;
    o.mode = SearchMode::Exhaustive;
    o.runs = 2;
    o.cutoff = 0;  // every candidate timed fully
    o.progress = false;
    TuneResult r = tune(p, o);
    SearchSpace s = build_search_space(p);
    EXPECT_EQ(r.candidates.size(), s.valid.size());
    EXPECT_TRUE(std::find(s.valid.begin(), s.valid.end(), r.best.schedule) != s.valid.end());
    ASSERT_TRUE(r.best.ok);
    for (const auto &m : r.candidates) {
        EXPECT_TRUE(m.ok) << m.error;
        EXPECT_EQ(m.run_ms.size(), 2u);
        EXPECT_LE(r.best.mean_ms, m.mean_ms);
    }
    EXPECT_LE(r.best.mean_ms, r.expert_default.mean_ms);
    EXPECT_GE(r.speedup_over_default(), 1.0);

    OpOptions opt;
    opt.schedule = r.best.schedule;
    SpmmResult got = gspmm(p.graph, p.spmm, p.lhs, p.rhs, opt);
    EXPECT_TRUE(test::matches_reference(got.out, reference_spmm(p.graph, p.spmm, p.lhs, p.rhs), 1e-5, 1e-6,
                                        &got.arg_u, &got.arg_e));

    nlohmann::json j = r.to_json();
    EXPECT_EQ(j["best"]["schedule"], "cpu_spmm");
    EXPECT_EQ(j["candidates"].size(), r.candidates.size());
}

TEST(Tuner, SegmentsJoinTheSearchForSumAndMean) {
    // With segments on, a g-SpMM sum / mean tune also measures g-SpMM by nonzeros at every run
    // length; the best of all wins and runs through the operator API. max / min tunes do not.
    TuningProblem p = small_problem(OpKind::Spmm, 12);
    p.spmm = {BinaryOp::Mul, ReduceOp::Mean};
    p.prepare();
    TuneOptions o;
    o.mode = SearchMode::Random;
    o.budget = 2;
    o.runs = 1;
    o.progress = false;
    o.segments = true;
    TuneResult r = tune(p, o);
    size_t segments = 0;
    for (const auto &m : r.candidates) {
        if (m.schedule.schedule != "spmm_segments") continue;
        segments++;
        EXPECT_TRUE(m.ok) << m.schedule.str() << ": " << m.error;
        EXPECT_LE(r.best.mean_ms, m.mean_ms);
    }
    EXPECT_EQ(segments, std::size(kSegmentRunChoices));
    OpOptions opt;
    opt.schedule = r.best.schedule;
    SpmmResult got = gspmm(p.graph, p.spmm, p.lhs, p.rhs, opt);
    EXPECT_TRUE(test::matches_reference(got.out, reference_spmm(p.graph, p.spmm, p.lhs, p.rhs), 1e-5, 1e-6));

    TuningProblem q = small_problem(OpKind::Spmm, 12);  // mul / max
    for (const auto &m : tune(q, o).candidates) EXPECT_NE(m.schedule.schedule, "spmm_segments");
}

TEST(Tuner, RandomModeMeasuresTheBudgetDeterministically) {
    TuningProblem p = small_problem(OpKind::Sddmm, 32);
    TuneOptions o;
    o.mode = SearchMode::Random;
    o.budget = 3;
    o.runs = 1;
    o.progress = false;
    TuneResult a = tune(p, o), b = tune(p, o);
    ASSERT_EQ(a.candidates.size(), 3u);
    for (size_t i = 0; i < 3; i++) EXPECT_EQ(a.candidates[i].schedule, b.candidates[i].schedule);
    o.seed = 99;
    TuneResult c = tune(p, o);
    bool differs = false;
    for (size_t i = 0; i < 3; i++) differs |= !(a.candidates[i].schedule == c.candidates[i].schedule);
    EXPECT_TRUE(differs);
    Tensor out = gsddmm(p.graph, p.sddmm, p.lhs, p.rhs, OpOptions{a.best.schedule, nullptr, {}});
    EXPECT_TRUE(test::matches_reference(out, reference_sddmm(p.graph, p.sddmm, p.lhs, p.rhs), 1e-5));
}

TEST(Tuner, EveryMeasuredPointIsReportedOnce) {
    // An exhaustive tune picks the expert default again: it reuses the default's measurement, which
    // was reported (and so recorded) once, when it was taken.
    TuningProblem p = small_problem(OpKind::Spmm, 8);
    TuneOptions o;
    o.mode = SearchMode::Exhaustive;
    o.runs = 1;
    o.progress = false;
    std::map<std::string, int> reported;
    o.on_measurement = [&](const Measurement &m) { reported[m.schedule.str()]++; };
    TuneResult r = tune(p, o);
    EXPECT_EQ(reported[r.expert_default.schedule.str()], 1);
    for (const auto &[point, n] : reported) EXPECT_EQ(n, 1) << point;
    EXPECT_EQ(reported.size(), build_search_space(p).valid.size());
}

TEST(Tuner, GeneticModeSeededByARankingMeasuresTheTopPoints) {
    TuningProblem p = small_problem(OpKind::Spmm, 24);
    TuneOptions o;
    o.mode = SearchMode::Genetic;
    o.runs = 1;
    o.progress = false;
    o.keep = 3;
    o.genetic.population = 4;
    o.genetic.elite = 2;
    o.genetic.generations = 1;
    // A ranking that prefers scalar code: the first measured candidates are its top points.
    o.rank = [](const std::vector<ScheduleParams> &pts) {
        std::vector<double> s;
        for (const auto &q : pts) s.push_back(static_cast<double>(q.get("vector_width") * 1000 + q.get("rows_per_task")));
        return s;
    };
    TuneResult r = tune(p, o);
    ASSERT_GE(r.candidates.size(), 3u);
    for (size_t i = 0; i < 3; i++) EXPECT_EQ(r.candidates[i].schedule.get("vector_width"), 1);
    EXPECT_LE(r.candidates.size(), 8u + static_cast<size_t>(o.genetic.polish));  // population 4, one generation, polish
    EXPECT_TRUE(r.best.ok);
}

TEST(Tuner, CutoffTimesSlowCandidatesOnce) {
    // With the tightest cutoff a candidate is timed once when its warm-up run (or its first timed
    // run) is slower than the fastest median so far, which is never faster than the fastest median
    // of the whole tune. A candidate cut off by its warm-up has that run as its time.
    TuningProblem p = small_problem(OpKind::Spmm, 24);
    TuneOptions o;
    o.mode = SearchMode::Exhaustive;
    o.runs = 3;
    o.cutoff = 1.0;
    o.cutoff_slack_ms = 0;  // kernels of microseconds: the factor alone decides
    o.progress = false;
    TuneResult r = tune(p, o);
    double fastest = r.expert_default.median_ms;
    for (const auto &m : r.candidates)
        if (m.ok && !m.cut_off) fastest = std::min(fastest, m.median_ms);
    size_t by_warmup = 0;
    for (const auto &m : r.candidates) {
        ASSERT_TRUE(m.ok) << m.error;
        EXPECT_GT(m.load_ms, 0.0);
        if (m.cut_off) {
            EXPECT_EQ(m.run_ms.size(), 1u);
            EXPECT_GT(m.run_ms[0], fastest);
            EXPECT_TRUE(r.to_json()["candidates"][&m - r.candidates.data()]["cut_off"].get<bool>());
            by_warmup += m.warmup_ms == 0.0;
        } else {
            EXPECT_EQ(m.run_ms.size(), 3u);
            EXPECT_GT(m.warmup_ms, 0.0);
        }
    }
    EXPECT_GT(by_warmup, 0u);
    EXPECT_FALSE(r.best.cut_off);
    Measurer measurer(p);
    EXPECT_THROW(measurer.set_cutoff(0.5), Error);
    EXPECT_THROW(measurer.set_cutoff(-1), Error);
    EXPECT_NO_THROW(measurer.set_cutoff(0));
}

TEST(Measurer, RecordedReferenceSetsTheCutoff) {
    // A time recorded earlier (a resumed sweep's) sets the cutoff's pace as one timed now would: a
    // candidate far slower than it is timed once. Failed or cut-off references set nothing.
    TuningProblem p = small_problem(OpKind::Spmm, 24);
    const ScheduleParams q = build_search_space(p).expert_default;
    Measurement fast;
    fast.ok = true;
    fast.recorded = true;
    fast.median_ms = fast.mean_ms = 1e-9;
    Measurement failed = fast, single = fast;
    failed.ok = false;
    single.cut_off = true;

    Measurer plain(p, 3, 1);
    plain.set_cutoff(1.5);
    plain.note_reference(failed);
    plain.note_reference(single);
    const Measurement full = plain.measure(q);
    ASSERT_TRUE(full.ok) << full.error;
    EXPECT_FALSE(full.cut_off);
    EXPECT_EQ(full.run_ms.size(), 3u);

    Measurer resumed(p, 3, 1);
    resumed.set_cutoff(1.5);
    resumed.note_reference(fast);
    const Measurement once = resumed.measure(q);
    ASSERT_TRUE(once.ok) << once.error;
    EXPECT_TRUE(once.cut_off);
    EXPECT_EQ(once.run_ms.size(), 1u);

    // The slack is added to the limit: with an hour of it, nothing is cut, however fast the reference.
    Measurer slack(p, 3, 1);
    slack.set_cutoff(1.5, 3.6e6);
    slack.note_reference(fast);
    const Measurement timed = slack.measure(q);
    ASSERT_TRUE(timed.ok) << timed.error;
    EXPECT_FALSE(timed.cut_off);
    EXPECT_EQ(timed.run_ms.size(), 3u);
    EXPECT_THROW(slack.set_cutoff(1.5, -1), Error);
}

TEST(Sweep, ResumedSweepCutsOffAgainstRecordedTimes) {
    // Resumed from records whose expert default is far faster than any kernel here, a sweep times
    // every fresh point once; without the records (or without a cutoff) it times the fastest fully.
    TuningProblem a = small_problem(OpKind::Spmm, 8);
    TuneOptions o;
    o.runs = 2;
    o.cutoff = 1.5;
    o.cutoff_slack_ms = 0;  // kernels of microseconds: the factor alone decides
    o.compile_threads = 2;
    const ScheduleParams d = build_search_space(a).expert_default;
    std::vector<SweepProblem> problems(1);
    problems[0].problem = &a;
    problems[0].recorded = [&](const ScheduleParams &q) -> std::optional<Measurement> {
        if (!(q == d)) return std::nullopt;
        Measurement m;
        m.schedule = q;
        m.ok = m.recorded = true;
        m.median_ms = m.mean_ms = m.min_ms = 1e-9;
        return m;
    };
    const TuneResult resumed = sweep_together(problems, o).front();
    ASSERT_GT(resumed.candidates.size(), 2u);
    for (const auto &m : resumed.candidates)
        if (!m.recorded) {
            ASSERT_TRUE(m.ok) << m.error;
            EXPECT_TRUE(m.cut_off) << m.schedule.str();
        }
    problems[0].recorded = nullptr;
    const TuneResult fresh = sweep_together(problems, o).front();
    size_t full = 0;
    for (const auto &m : fresh.candidates) full += m.ok && !m.cut_off;
    EXPECT_GT(full, 0u);
}

TEST(TuningProblem, LoadProblemHasTheOperatorAndTheKindOfEdgeIds) {
    // The graph every kernel is first called on: small, square, with empty rows and a row of every
    // node, the problem's feature shapes, and the problem graph's kind of edge ids (kernels that read
    // edge ids are compiled for one kind).
    for (bool shuffled : {false, true}) {
        test::RandomGraphOptions go;
        go.shuffle_edge_ids = shuffled;
        TuningProblem p;
        p.graph = test::random_graph(5, go);
        p.spmm = {BinaryOp::Mul, ReduceOp::Sum};
        p.lhs_feat = {4, 3};
        p.rhs_feat = {1, 3};
        p.prepare();
        TuningProblem q = p.load_problem();
        EXPECT_EQ(q.graph.num_dst(), 64);
        EXPECT_EQ(q.graph.num_src(), 64);
        EXPECT_EQ(q.graph.csr().identity_edge_ids(), p.graph.csr().identity_edge_ids()) << shuffled;
        EXPECT_EQ(q.graph.max_row_length(), 64);
        EXPECT_GT(q.graph.stats().empty_rows, 0);
        EXPECT_EQ(q.layout.key(), p.layout.key());
        EXPECT_EQ(q.out.size(0), 64);
        EXPECT_EQ(q.rhs.size(0), q.graph.num_edges());
        EXPECT_EQ(q.device, p.device);
        // A kernel of the problem runs on it and matches the reference there.
        SearchSpace space = build_search_space(p);
        auto kernel = SpmmKernel::get(measured_spmm_key(p, space.expert_default));
        kernel->run(q.graph, q.lhs, q.rhs, q.out, nullptr, nullptr);
        EXPECT_TRUE(test::matches_reference(q.out, reference_spmm(q.graph, p.spmm, q.lhs, q.rhs), 1e-5)) << shuffled;
    }
}

TEST(Measurer, BackgroundCompilesOverlapMeasurements) {
    // Candidates handed to background compilation are measured while the others compile; a second
    // batch replaces the first, and the measurer joins its workers when it goes away.
    TuningProblem p = small_problem(OpKind::Spmm, 8);
    SearchSpace s = build_search_space(p);
    ASSERT_GE(s.valid.size(), 6u);
    Measurer measurer(p, 2, 1);
    std::vector<ScheduleParams> first(s.valid.begin(), s.valid.begin() + 3), second(s.valid.begin() + 3, s.valid.begin() + 6);
    measurer.precompile(first, 3, true);
    for (const auto &pt : first) {
        Measurement m = measurer.measure(pt);
        EXPECT_TRUE(m.ok) << m.error;
        EXPECT_EQ(m.run_ms.size(), 2u);
    }
    measurer.precompile(second, 3, true);
    Measurement m = measurer.measure(second.back());
    EXPECT_TRUE(m.ok) << m.error;
    // The next batch starts before this one's candidates were measured; the destructor joins it.
    measurer.precompile(first, 3, true);
}

TEST(Measurer, CompileWorkersPrepareTheGraphsHostArrays) {
    // A source-tiled candidate's edges in tile order and their runs are built by the compile
    // workers, on the problem's graph and on the graphs prepare_also() names for that candidate.
    TuningProblem p = small_problem(OpKind::Spmm, 8);
    p.spmm = {BinaryOp::Mul, ReduceOp::Sum};  // source tiles reduce with sum and mean
    p.prepare();
    const ScheduleSpace space = schedule_space(p);
    const ScheduleParams tiled =
        space.complete(ScheduleParams{"cpu_spmm", {{"vector_width", 4}, {"rows_per_task", 16}, {"kSrcTile", 64}}});
    const ScheduleParams plain = build_search_space(p).expert_default;
    ASSERT_EQ(plain.get("kSrcTile"), 0);
    Graph wanted = test::random_graph(32), unwanted = test::random_graph(33);
    auto tile_keys = [](const Graph &g) {
        size_t n = 0;
        for (const auto &k : g.attachment_keys()) n += k.find("src_tile/64") != std::string::npos;
        return n;
    };
    ASSERT_EQ(tile_keys(p.graph), 0u);
    Measurer measurer(p, 2, 1);
    measurer.prepare_also(wanted, [&](const ScheduleParams &q) { return q == tiled; });
    measurer.prepare_also(unwanted, [](const ScheduleParams &) { return false; });
    measurer.precompile({plain}, 2);
    EXPECT_EQ(tile_keys(p.graph), 0u);
    EXPECT_EQ(tile_keys(wanted), 0u);
    measurer.precompile({tiled, plain}, 2);
    EXPECT_GE(tile_keys(p.graph), 2u);  // the tiled edges and their runs
    EXPECT_GE(tile_keys(wanted), 2u);
    EXPECT_EQ(tile_keys(unwanted), 0u);
    const Measurement m = measurer.measure(tiled);
    ASSERT_TRUE(m.ok) << m.error;
    EXPECT_EQ(m.run_ms.size(), 2u);
}

TEST(Measurer, MeasuresTheKernelsTheOperatorApiRuns) {
    // Small tensors: the API compiles g-SDDMM with 32-bit indexing (gpu_sddmm's register form), and
    // a tuner timing the 64-bit kernel would rank a different kernel from the one users get.
    TuningProblem p = small_problem(OpKind::Sddmm, 32);
    SearchSpace s = build_search_space(p);
    ASSERT_FALSE(s.valid.empty());
    SddmmKernelKey key = measured_sddmm_key(p, s.valid.front());
    EXPECT_FALSE(key.large_buffers);
    EXPECT_NE(key.str().find("/i32"), std::string::npos) << key.str();
    EXPECT_EQ(key.schedule.str(), s.valid.front().str());

    // fit_indexing resets the flag from the tensors it is given, skipping missing and undefined ones.
    SddmmKernelKey other = key;
    other.large_buffers = true;
    other.fit_indexing({&p.lhs, nullptr, &p.out});
    EXPECT_FALSE(other.large_buffers);
    Tensor undefined;
    other.fit_indexing({&undefined});
    EXPECT_FALSE(other.large_buffers);

    TuningProblem q = small_problem(OpKind::Spmm, 8);
    SpmmKernelKey skey = measured_spmm_key(q, build_search_space(q).valid.front());
    EXPECT_EQ(skey.spec.reduce, q.spmm.reduce);
    EXPECT_EQ(skey.identity_edge_ids, spmm_identity_edge_ids(q.spmm, q.graph));
}

TEST(Replay, LooksUpPointsThatListOnlySomeKnobs) {
    // A GPU sweep records every knob of its points; the expert default lists only those it sets.
    // The replay completes both sides, so the default finds its recorded time.
    TuningProblem p;
    p.kind = OpKind::Sddmm;
    p.device = Device::CUDA;  // nothing runs: the lookup needs the layout and the graph's size
    p.graph = test::random_graph(5);
    p.sddmm = {BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst};
    p.lhs_feat = p.rhs_feat = {32};
    p.plan_layout();
    const SddmmScheduleDef &def = default_sddmm_schedule(Device::CUDA);
    const ScheduleParams partial = def.default_params(p.schedule_problem());
    const ScheduleParams full = def.space(p.schedule_problem()).complete(partial);
    ASSERT_LT(partial.values.size(), full.values.size()) << partial.str();
    nlohmann::json cand = full.to_json();
    cand["ok"] = true;
    cand["mean_ms"] = 1.25;
    cand["run_ms"] = {1.25};
    const GraphStats st = p.graph.stats();
    nlohmann::json result = {{"op", p.op_name()}, {"lhs_feat", p.lhs_feat},
                             {"graph", {{"nodes", st.num_rows}, {"edges", st.nnz}}},
                             {"candidates", nlohmann::json::array({cand})}};
    const std::string path = ::testing::TempDir() + "/gsparse_replay_test.json";
    std::ofstream(path) << result.dump();
    auto lookup = replayed_measurements(path, p);
    for (const ScheduleParams &q : {partial, full}) {
        Measurement m = lookup(q);
        EXPECT_TRUE(m.ok) << q.str() << ": " << m.error;
        EXPECT_DOUBLE_EQ(m.mean_ms, 1.25);
    }
    ScheduleParams other = full;
    other.values["kMTile"] = full.get("kMTile") * 2;
    Measurement miss = lookup(other);
    EXPECT_FALSE(miss.ok);
    EXPECT_NE(miss.error.find("not measured"), std::string::npos) << miss.error;

    // Another problem's sweep is refused.
    TuningProblem q = p;
    q.lhs_feat = q.rhs_feat = {16};
    q.plan_layout();
    EXPECT_THROW(replayed_measurements(path, q), Error);
}

TEST(Resume, RecordedPointsAreNotMeasuredAgain) {
    // Records of this problem (same device, operator, graph and feature length) give their points'
    // times; records of another device, graph or feature length do not; the latest record of a
    // point wins. An exhaustive tune measures only the other points.
    TuningProblem p = small_problem(OpKind::Spmm, 8);
    const SearchSpace space = build_search_space(p);
    ASSERT_GE(space.valid.size(), 4u);
    auto record = [&](const ScheduleParams &q, double ms) {
        MeasurementRecord r;
        r.schedule = q;
        r.device = p.device_label();
        r.op = p.op_name();
        r.graph_fingerprint = p.graph.fingerprint();
        r.feat = record_feature_length(p);
        r.time_ms = ms;
        return r;
    };
    std::vector<MeasurementRecord> records;
    std::set<std::string> recorded;
    for (size_t i = 0; i < space.valid.size(); i += 2) {
        records.push_back(record(space.valid[i], 50.0));
        records.push_back(record(space.valid[i], 100.0 + static_cast<double>(i)));  // the latest wins
        recorded.insert(space.valid[i].str());
    }
    MeasurementRecord other_device = record(space.valid[1], 1.0), other_graph = other_device, other_feat = other_device;
    other_device.device = "another device";
    other_graph.graph_fingerprint ^= 1;
    other_feat.feat += 1;
    records.insert(records.end(), {other_device, other_graph, other_feat});

    auto lookup = recorded_measurements(records, p);
    EXPECT_FALSE(lookup(space.valid[1]).has_value());
    ASSERT_TRUE(lookup(space.valid[0]).has_value());
    EXPECT_TRUE(lookup(space.valid[0])->recorded);
    EXPECT_DOUBLE_EQ(lookup(space.valid[0])->mean_ms, 100.0);

    TuneOptions opt;
    opt.mode = SearchMode::Exhaustive;
    opt.runs = 2;
    opt.cutoff = 0;  // every measured point timed fully
    opt.progress = false;
    opt.recorded = lookup;
    TuneResult r = tune(p, opt);
    std::vector<Measurement> all = r.candidates;
    all.push_back(r.expert_default);
    size_t reused = 0, timed = 0;
    for (const Measurement &m : all) {
        if (recorded.count(m.schedule.str())) {
            EXPECT_TRUE(m.recorded) << m.schedule.str();
            EXPECT_TRUE(m.run_ms.empty()) << m.schedule.str();
            EXPECT_GE(m.mean_ms, 100.0) << m.schedule.str();
            reused++;
        } else {
            EXPECT_FALSE(m.recorded) << m.schedule.str();
            if (m.ok) {
                EXPECT_EQ(m.run_ms.size(), 2u) << m.schedule.str();
            }
            timed++;
        }
    }
    EXPECT_GE(reused, recorded.size());
    EXPECT_GE(timed, space.valid.size() - recorded.size());
    EXPECT_EQ(r.to_json()["candidates"][0].value("recorded", false), r.candidates[0].recorded);
}

TEST(Tuner, ModelSeedsSkipPointsTheModelCannotTellApart) {
    // A model that sees only the vector width ranks every rows_per_task alike: the seeds (the first
    // measured candidates) cover the distinct vector widths before any tie.
    TuningProblem p = small_problem(OpKind::Spmm, 8);
    SearchSpace s = build_search_space(p);
    std::set<int64_t> widths;
    for (const auto &q : s.valid) widths.insert(q.get("vector_width"));
    ASSERT_GE(widths.size(), 2u);
    TuneOptions o;
    o.runs = 1;
    o.progress = false;
    o.keep = widths.size();
    o.genetic.population = static_cast<int>(widths.size());
    o.genetic.elite = 1;
    o.genetic.generations = 0;
    o.rank = [](const std::vector<ScheduleParams> &pts) {
        std::vector<double> score;
        for (const auto &q : pts) score.push_back(static_cast<double>(q.get("vector_width")));
        return score;
    };
    TuneResult r = tune(p, o);
    std::set<int64_t> seen;
    for (const auto &m : r.candidates) seen.insert(m.schedule.get("vector_width"));
    EXPECT_EQ(seen, widths);
}

TEST(Tuner, BadOptions) {
    EXPECT_THROW(parse_search_mode("annealing"), Error);
    EXPECT_EQ(parse_search_mode("genetic"), SearchMode::Genetic);
    TuningProblem p = small_problem(OpKind::Spmm, 8);
    EXPECT_THROW(Measurer(p, 0), Error);
}

TEST(Sweep, TimeLimitLeavesPointsUnmeasuredAndNoLimitMeasuresThemAll) {
    TuningProblem a = small_problem(OpKind::Spmm, 8), b = small_problem(OpKind::Spmm, 8);
    b.graph = test::random_graph(7);
    b.prepare();
    TuneOptions o;
    o.runs = 1;
    o.compile_threads = 2;
    std::vector<SweepProblem> problems(2);
    problems[0].problem = &a;
    problems[1].problem = &b;
    EXPECT_THROW(sweep_together(problems, o, -1), Error);
    // A limit already passed when the first chunk would start: only the expert defaults.
    for (const TuneResult &r : sweep_together(problems, o, 1e-9)) {
        EXPECT_TRUE(r.expert_default.ok);
        EXPECT_TRUE(r.candidates.empty());
        ASSERT_GT(r.valid_size, 2u);
        EXPECT_EQ(r.unmeasured, r.valid_size - 1);
        EXPECT_EQ(r.to_json()["complete"], false);
        EXPECT_EQ(r.to_json()["unmeasured_points"], r.valid_size - 1);
    }
    for (const TuneResult &r : sweep_together(problems, o)) {
        EXPECT_EQ(r.unmeasured, 0u);
        EXPECT_EQ(r.candidates.size(), r.valid_size);
        EXPECT_EQ(r.to_json()["complete"], true);
    }
}

}  // namespace
}  // namespace gsparse::autotune
