// gsparse-bench-sddmm: times g-SDDMM u_dot_v of gsparse against cached cusparseSDDMM on dataset twins
// and real graphs, in one process, on one stream, with CUDA events; records the lane width gsparse
// chose per F.
//
//   gsparse-bench-sddmm [--graphs reddit,ogbn-proteins,ogbn-products,cora,...] [--scale 1.0]
//                       [--order both] [--feats 1,2,4,...,1024] [--ops dot] [--runs 10] [--warmup 3]
//                       [--schedules points.json | --grid-threads 32,64,128,256]
//                       [--max-feats-per-lane 0] [--screen-runs 0 --finalists 2]
//                       [--measure-copy-bw] [--json out.json] [--md out.md]
//
// For every graph x F x op: X (sources) and Y (destinations) are generated deterministically; a CPU
// reference (fp64) is computed on sampled edges (all edges of small graphs); cuSPARSE (dot only) is
// set up once (descriptors, workspace, cusparseSDDMM_preprocess) and its output is checked on the
// sample; every gsparse schedule point runs once (compiling on first use; points gsparse rejects with
// ScheduleError are recorded with the reason), is checked on the sample, and is timed. With
// --screen-runs N every checked point is first timed with 1 warm-up + N runs and only the
// --finalists fastest are timed with the full --warmup/--runs; the screening times are kept. Then
// cuSPARSE is timed. The JSON and markdown outputs are rewritten after every case.
//
// Schedule points: --schedules FILE (the format of gsparse-bench-spmm, benchmarks/README.md), or the
// built-in grid: gpu_sddmm{kLaneWidth = L, kVecWidth = V in {1, 4}, kMTile = T / L} for L in 1..32 and T (threads per block) in
// --grid-threads, plus kFeatChunk = 64 for L = 4 and 8 with V = 4 at F = 256..2048, plus kMRegTile = 2 and 4 (edges
// per thread) for L = 2..16 with V = 4 at 128 threads, plus edges grouped by source tiles (groupByDst = 1,
// kSrcTile = 512 and 4096) for L4 R2, L8 R2, L8 R4 and L16 R2 of those at F = 64..2048, kSrcTile = 131072 and
// 524288 for L8 R2, L8 R4 and L16 R2 at F = 32..512, and kSrcTile = 32768 for L = 1, V = 1, 256 threads at
// F = 1, 2 (with 128 and 256 among the thread counts it contains
// gsparse's expert defaults). --max-feats-per-lane N (0: off) leaves out built-in grid points
// with more than N features per lane and pass (ceil(min(F, kFeatChunk) / L) > N); they are listed in the record's
// "pruned_points".
//
// Exit codes: 0 success (including recorded per-case failures), 1 a fatal error, 2 a command-line error.
#include <CLI/CLI.hpp>
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "api/gsparse.h"
#include "bench_common.h"
#include "bench_util.h"
#include "cuda_check.h"
#include "cusparse_sddmm.h"
#include "cusparse_spmm.h"
#include "device_buffer.h"
#include "event_timer.h"
#include "sddmm_util.h"

#ifndef GSPARSE_REAL_GRAPHS_DIR_DEFAULT
#define GSPARSE_REAL_GRAPHS_DIR_DEFAULT ""
#endif

using json = nlohmann::json;
using namespace gsparse;
using namespace gsparse::bench;

namespace {

struct Args {
    std::vector<std::string> graphs{"reddit", "ogbn-proteins", "ogbn-products", "cora", "citeseer",
                                    "pubmed", "ca-CondMat", "p2p-Gnutella31"};
    double scale = 1.0;
    std::string order = "both";
    bool shuffle_edge_ids = false;
    uint64_t twin_seed = 1;
    int threads = 0;
    std::string real_dir;
    std::vector<int64_t> feats{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
    std::vector<std::string> ops{"dot"};
    int runs = 10;
    int warmup = 3;
    bool no_flush_l2 = false;
    std::string schedules_file;
    std::vector<int64_t> grid_threads{32, 64, 128, 256};
    int64_t max_feats_per_lane = 0;
    int screen_runs = 0;
    int finalists = 2;
    bool measure_copy_bw = false;
    std::string json_out;
    std::string md_out;
    uint64_t seed = 42;
    int64_t sample_edges = 16384;
};

const int64_t kLaneWidths[] = {1, 2, 4, 8, 16, 32};
/// Vector widths of the built-in grid (gpu_sddmm also has 2).
const int64_t kVecWidths[] = {1, 4};

/// A schedule point of the built-in grid, or one from a file (never pruned).
struct Point {
    SchedulePoint sp;
    bool grid = false;
};

std::vector<Point> builtin_grid(const std::vector<int64_t> &threads) {
    // No "default" point: gpu_sddmm's expert defaults (lanes, vector width and edges per thread by F) are
    // points of this grid whenever 128 and 256 are among the thread counts, so every winner has a known
    // lane width.
    std::vector<Point> pts;
    for (int64_t t : threads)
        for (int64_t lanes : kLaneWidths)
            for (int64_t vec : kVecWidths) {
                if (t % lanes != 0) continue;
                Point p;
                p.grid = true;
                ScheduleParams s;
                s.schedule = "gpu_sddmm";
                s.values = {{"kMTile", t / lanes}, {"kLaneWidth", lanes}, {"kVecWidth", vec}};
                p.sp.params = s;
                p.sp.label = "L" + std::to_string(lanes) + " V" + std::to_string(vec) + " T" + std::to_string(t);
                pts.push_back(p);
                // Feature chunks of 64 (kFeatChunk) for long rows, with 4 and 8 lanes of 4-wide loads.
                if (vec == 4 && (lanes == 4 || lanes == 8)) {
                    p.sp.params->values["kFeatChunk"] = 64;
                    p.sp.label += " C64";
                    p.sp.feats = {256, 512, 1024, 2048};
                    pts.push_back(p);
                }
                // Several edges per thread (kMRegTile), for lane groups of 4-wide loads.
                if (vec == 4 && t == 128 && lanes >= 2 && lanes <= 16)
                    for (int64_t r : {2, 4}) {
                        Point q;
                        q.grid = true;
                        q.sp.params = s;
                        q.sp.params->values["kMRegTile"] = r;
                        q.sp.label = "L" + std::to_string(lanes) + " V4 T128 R" + std::to_string(r);
                        pts.push_back(q);
                        // Edges grouped by source tiles (groupByDst = 1, kSrcTile) for long rows.
                        if (lanes < 4 || (lanes == 16 && r == 4) || (lanes == 4 && r == 4)) continue;
                        for (int64_t tile : {512, 4096, 131072, 524288}) {
                            // Large tiles (sparse graphs with many nodes) for L8 and L16 only.
                            if (tile > 4096 && lanes < 8) continue;
                            Point u = q;
                            u.sp.params->values["groupByDst"] = 1;
                            u.sp.params->values["kSrcTile"] = tile;
                            u.sp.label += " S" + std::to_string(tile);
                            u.sp.feats = tile > 4096 ? std::set<int64_t>{32, 64, 128, 256, 512}
                                                     : std::set<int64_t>{64, 128, 256, 512, 1024, 2048};
                            pts.push_back(u);
                        }
                    }
                // One lane, edges grouped by large source tiles, for the shortest rows.
                if (t == 256 && lanes == 1 && vec == 1) {
                    Point u = p;
                    u.sp.params->values["groupByDst"] = 1;
                    u.sp.params->values["kSrcTile"] = 32768;
                    u.sp.label += " S32768";
                    u.sp.feats = {1, 2};
                    pts.push_back(u);
                }
            }
    return pts;
}

json params_json(const std::optional<ScheduleParams> &p) {
    if (!p) return nullptr;
    json j = json::object();
    for (const auto &[k, v] : p->values) j[k] = v;
    return j;
}

class Bench {
public:
    explicit Bench(const Args &a) : a_(a) {
        for (const auto &op : a_.ops) specs_.push_back(parse_sddmm_bench_op(op));
        for (int64_t f : a_.feats)
            if (f <= 0) fail<Error>("--feats: feature lengths must be positive, got ", f);
        for (int64_t t : a_.grid_threads)
            if (t < 32 || t > 1024 || (t & (t - 1)))
                fail<Error>("--grid-threads: threads per block must be powers of two in [32, 1024], got ", t);
        if (!a_.schedules_file.empty()) {
            for (auto &sp : load_schedule_points(a_.schedules_file)) points_.push_back(Point{sp, false});
        } else {
            points_ = builtin_grid(a_.grid_threads);
        }
        check_writable(a_.json_out);
        check_writable(a_.md_out);

        int count = 0;
        GSPARSE_CUDA_CHECK(cudaGetDeviceCount(&count));
        if (count == 0) fail<Error>("no CUDA device");
        GSPARSE_CUDA_CHECK(cudaFree(nullptr));  // initializes the primary context of the current device
        GSPARSE_CU_CHECK(cuCtxGetCurrent(&ctx_));
        if (!ctx_) fail<Error>("no current CUDA context after cudaFree(0)");
        GSPARSE_CUDA_CHECK(cudaStreamCreate(&stream_));
        handle_ = std::make_unique<CusparseHandle>(stream_);
        timer_ = std::make_unique<EventTimer>(stream_, TimingOptions{a_.warmup, a_.runs, !a_.no_flush_l2});
        if (a_.screen_runs > 0)
            screen_timer_ = std::make_unique<EventTimer>(stream_, TimingOptions{1, a_.screen_runs, !a_.no_flush_l2});
        dev_ = query_device();
        dev_.cusparse_version = CusparseHandle::version_string();
        date_ = utc_date();
        meta_ = metadata();
    }

    ~Bench() {
        screen_timer_.reset();
        timer_.reset();
        handle_.reset();
        if (stream_) cudaStreamDestroy(stream_);
    }

    void set_command_line(const std::string &cmd) { meta_["command_line"] = cmd; }

    void measure_copy_bandwidth_pass() {
        copy_bw_ = copy_bandwidth_pass(*timer_, a_.runs, meta_);
        write_outputs();
    }

    void run_all() {
        GraphSelection sel = graph_selection(a_, GSPARSE_REAL_GRAPHS_DIR_DEFAULT);
        sel.shuffle_edge_ids = a_.shuffle_edge_ids;
        for_each_graph(
            sel, [&](GraphCase &gc) { run_graph(gc); },
            [&](const std::string &name, const std::string &reason) {
                meta_["skipped"].push_back(json::object({{"graph", name}, {"reason", reason}}));
                write_outputs();
            });
        write_outputs();
    }

    void write_outputs() {
        if (!a_.json_out.empty()) {
            json doc{{"metadata", meta_}, {"records", records_}};
            write_file_atomically(a_.json_out, doc.dump(1) + "\n");
        }
        if (!a_.md_out.empty()) write_file_atomically(a_.md_out, markdown());
    }

    std::string markdown() const;

private:
    json metadata() const {
        json m = device_metadata("gsparse-bench-sddmm", dev_, date_);
        json points = json::array();
        for (const auto &p : points_)
            points.push_back({{"schedule", p.sp.schedule_string()}, {"label", p.sp.label}, {"grid", p.grid}});
        m["options"] = {{"runs", a_.runs},
                        {"warmup", a_.warmup},
                        {"flush_l2", !a_.no_flush_l2},
                        {"flush_bytes", timer_ ? timer_->flush_bytes() : 0},
                        {"scale", a_.scale},
                        {"order", a_.order},
                        {"twin_seed", a_.twin_seed},
                        {"feature_seed", a_.seed},
                        {"feats", a_.feats},
                        {"ops", a_.ops},
                        {"graphs", a_.graphs},
                        {"sample_edges", a_.sample_edges},
                        {"schedules_file", a_.schedules_file},
                        {"grid_threads", a_.grid_threads},
                        {"max_feats_per_lane", a_.max_feats_per_lane},
                        {"screen_runs", a_.screen_runs},
                        {"finalists", a_.finalists},
                        {"schedule_points", points}};
        m["timing"] =
            "CUDA events around each call on one stream; warm-up calls first; median of the timed runs; "
            "with flush_l2 a 2 x L2 scratch buffer is written before every call, outside the timed interval; "
            "with screen_runs > 0 gsparse points are ranked by 1 warm-up + screen_runs runs first and only the "
            "finalists get the full timing";
        m["bytes"] =
            "index = row_ptr + col_idx (CSR); compulsory = index + X + Y + Z once; "
            "gathered = index + 2 * nnz * F * 4 + Z";
        m["inputs"] = "X[u][f] = hashed_unit(seed, u*F+f) (sources), Y[v][f] = hashed_unit(seed+1, v*F+f) (destinations)";
        return m;
    }

    json case_base(const GraphCase &gc, int64_t feat, const SddmmSpec &spec, const std::string &op_text) const {
        const Graph &g = gc.graph;
        const GraphStats &st = g.stats();
        const CaseBytes bytes = sddmm_bytes(g.num_dst(), g.num_src(), g.num_edges(), feat, spec);
        json r;
        r["graph"] = gc.name;
        r["source"] = gc.source;
        r["order"] = gc.order;
        r["scale"] = gc.source == "twin" ? gc.scale : 1.0;
        r["nodes"] = g.num_dst();
        r["num_src"] = g.num_src();
        r["nnz"] = g.num_edges();
        r["avg_degree"] = st.avg_row_length;
        r["max_degree"] = st.max_row_length;
        r["degree_cov"] = st.row_length_cov;
        r["F"] = feat;
        r["op"] = op_text;
        r["op_dgl"] = spec.name();
        r["kind"] = "sddmm";
        r["device"] = dev_.name;
        r["date"] = date_;
        r["bytes"] = {{"index", bytes.index}, {"compulsory", bytes.compulsory}, {"gathered", bytes.gathered}};
        r["results"] = json::array();
        r["pruned_points"] = json::array();
        r["gsparse_schedule"] = nullptr;
        r["gsparse_label"] = nullptr;
        r["gsparse_params"] = nullptr;
        r["gsparse_lane_width"] = nullptr;
        r["gsparse_median_ms"] = nullptr;
        r["gsparse_error"] = nullptr;
        r["cusparse_median_ms"] = nullptr;
        r["cusparse_error"] = nullptr;
        r["speedup_vs_cusparse"] = nullptr;
        return r;
    }

    void run_graph(GraphCase &gc);
    json run_case(const GraphCase &gc, int64_t feat, const SddmmSpec &spec, const std::string &op_text,
                  const DeviceBuffer<float> &x, const DeviceBuffer<float> &y, const DeviceCsrPattern &pattern,
                  const SampledEdges &sample);

    const Args &a_;
    std::vector<SddmmSpec> specs_;
    std::vector<Point> points_;
    CUcontext ctx_ = nullptr;
    cudaStream_t stream_ = nullptr;
    std::unique_ptr<CusparseHandle> handle_;
    std::unique_ptr<EventTimer> timer_;
    std::unique_ptr<EventTimer> screen_timer_;
    DeviceInfo dev_;
    std::string date_;
    double copy_bw_ = 0;
    json meta_;
    json records_ = json::array();
};

void Bench::run_graph(GraphCase &gc) {
    const Graph &g = gc.graph;
    const std::string tag = "[" + gc.name + "/" + gc.order + "]";
    std::printf("%s %lld nodes, %lld edges (avg %.1f, max %lld, cov %.2f), ready in %.1f s\n", tag.c_str(),
                static_cast<long long>(g.num_dst()), static_cast<long long>(g.num_edges()), g.stats().avg_row_length,
                static_cast<long long>(g.stats().max_row_length), g.stats().row_length_cov, gc.load_s);
    std::fflush(stdout);

    DeviceCsrPattern pattern;
    std::unique_ptr<SampledEdges> sample;
    try {
        pattern = DeviceCsrPattern::upload(g.csr());
        sample = std::make_unique<SampledEdges>(g, a_.sample_edges, a_.seed + 7);
    } catch (const std::exception &e) {
        std::printf("%s setup failed: %s\n", tag.c_str(), e.what());
        if (!cuda_context_healthy()) throw FatalError(std::string("CUDA context lost: ") + e.what());
        for (int64_t feat : a_.feats)
            for (size_t i = 0; i < specs_.size(); ++i) {
                json r = case_base(gc, feat, specs_[i], a_.ops[i]);
                r["error"] = std::string("graph setup failed: ") + e.what();
                records_.push_back(std::move(r));
            }
        write_outputs();
        return;
    }

    for (int64_t feat : a_.feats) {
        size_t done = 0;
        try {
            DeviceBuffer<float> x(static_cast<size_t>(g.num_src()) * static_cast<size_t>(feat));
            DeviceBuffer<float> y(static_cast<size_t>(g.num_dst()) * static_cast<size_t>(feat));
            upload_features(x, g.num_src(), feat, a_.seed);
            upload_features(y, g.num_dst(), feat, a_.seed + 1);
            for (size_t i = 0; i < specs_.size(); ++i) {
                records_.push_back(run_case(gc, feat, specs_[i], a_.ops[i], x, y, pattern, *sample));
                ++done;
                write_outputs();
            }
        } catch (const FatalError &) {
            write_outputs();
            throw;
        } catch (const std::exception &e) {
            std::printf("%s F=%lld failed: %s\n", tag.c_str(), static_cast<long long>(feat), e.what());
            std::fflush(stdout);
            if (!cuda_context_healthy()) {
                write_outputs();
                throw FatalError(std::string("CUDA context lost: ") + e.what());
            }
            for (size_t i = done; i < specs_.size(); ++i) {
                json r = case_base(gc, feat, specs_[i], a_.ops[i]);
                r["error"] = e.what();
                records_.push_back(std::move(r));
            }
            write_outputs();
        }
    }
}

json Bench::run_case(const GraphCase &gc, int64_t feat, const SddmmSpec &spec, const std::string &op_text,
                     const DeviceBuffer<float> &x, const DeviceBuffer<float> &y, const DeviceCsrPattern &pattern,
                     const SampledEdges &sample) {
    const Graph &g = gc.graph;
    json rec = case_base(gc, feat, spec, op_text);
    const CaseBytes bytes = sddmm_bytes(g.num_dst(), g.num_src(), g.num_edges(), feat, spec);
    const double tol = sddmm_tolerance(spec);
    const int64_t cols = sddmm_out_cols(spec, feat);
    const int64_t out_elems = g.num_edges() * cols;
    const std::string tag = "[" + gc.name + "/" + gc.order + "] F=" + std::to_string(feat) + " " + op_text;

    const std::vector<double> ref = sddmm_reference(sample, spec, feat, a_.seed, a_.seed + 1);
    rec["check_sample"] = {{"edges", sample.size()}, {"all_edges", sample.all}};

    // cuSPARSE (dot only): set up once, output checked on the sample before anything is timed.
    std::unique_ptr<CusparseSddmm> cs;
    DeviceBuffer<float> z_cs;
    if (spec.op == BinaryOp::Dot) {
        z_cs.allocate(static_cast<size_t>(g.num_edges()));
        CusparseSddmm::Problem p;
        p.num_rows = g.num_dst();
        p.num_cols = g.num_src();
        p.nnz = g.num_edges();
        p.row_ptr = pattern.row_ptr.data();
        p.col_idx = pattern.col_idx.data();
        p.values = z_cs.data();
        p.feat = feat;
        p.x = x.data();
        p.y = y.data();
        cs = std::make_unique<CusparseSddmm>(*handle_, p);
        json chk = nullptr;
        if (cs->usable()) {
            try {
                z_cs.fill_zero(stream_);
                cs->run();
                DeviceGather gather(*handle_, sample_indices_by_position(sample, 1));
                const std::vector<float> got = gather.gather(z_cs.data(), g.num_edges());
                chk = comparison_json(compare_outputs(got.data(), ref.data(), got.size()), tol);
                chk["layout"] = cs->layout();
            } catch (const std::exception &e) {
                chk = {{"error", e.what()}, {"ok", false}};
                if (!cuda_context_healthy()) throw FatalError(std::string("CUDA context lost in cuSPARSE: ") + e.what());
            }
        }
        rec["check"] = {{"cusparse_vs_cpu_sample", chk}};
    } else {
        rec["cusparse_note"] = "no cuSPARSE equivalent";
    }

    // gsparse: every applicable point runs once (compiling), is checked, then timed.
    DeviceBuffer<float> z_gs(static_cast<size_t>(out_elems));
    DeviceGather gs_gather(*handle_, sample_indices_by_edge_id(sample, cols));
    Tensor lhs = Tensor::wrap(const_cast<float *>(x.data()), {g.num_src(), feat}, DType::F32, Device::CUDA);
    Tensor rhs = Tensor::wrap(const_cast<float *>(y.data()), {g.num_dst(), feat}, DType::F32, Device::CUDA);
    Tensor out = Tensor::wrap(z_gs.data(), {g.num_edges(), cols}, DType::F32, Device::CUDA);
    std::vector<json> entries;
    std::vector<std::function<void()>> calls;
    std::string first_error;
    for (const auto &pt : points_) {
        if (!pt.sp.applies(gc.name, feat, op_text)) continue;
        if (pt.grid && a_.max_feats_per_lane > 0) {
            const int64_t lanes = pt.sp.params->values.at("kLaneWidth");
            const int64_t chunk = pt.sp.params->get_or("kFeatChunk", 0);
            const int64_t per_pass = chunk > 0 ? std::min(feat, chunk) : feat;
            if ((per_pass + lanes - 1) / lanes > a_.max_feats_per_lane) {
                rec["pruned_points"].push_back(pt.sp.schedule_string());
                continue;
            }
        }
        json e;
        e["competitor"] = "gsparse";
        e["schedule"] = pt.sp.schedule_string();
        e["label"] = pt.sp.label;
        e["params"] = params_json(pt.sp.params);
        OpOptions opt;
        opt.schedule = pt.sp.params;
        opt.cache = nullptr;
        opt.cuda = CudaLaunch{static_cast<void *>(ctx_), static_cast<void *>(stream_)};
        auto call = [&g, spec, lhs, rhs, out, opt]() mutable { gsddmm_into(g, spec, lhs, rhs, out, opt); };
        try {
            z_gs.fill_zero(stream_);
            GSPARSE_CUDA_CHECK(cudaStreamSynchronize(stream_));
            const auto t0 = std::chrono::steady_clock::now();
            call();  // the first call compiles the kernel
            GSPARSE_CUDA_CHECK(cudaStreamSynchronize(stream_));
            e["first_call_ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            const std::vector<float> got = gs_gather.gather(z_gs.data(), out_elems);
            json chk;
            const Comparison c = compare_outputs(got.data(), ref.data(), got.size());
            chk["cpu_sample"] = comparison_json(c, tol);
            chk["ok"] = c.ok(tol);
            e["check"] = chk;
            e["ok"] = true;
            if (c.ok(tol) && screen_timer_) {
                const TimingResult t = screen_timer_->time(call);
                e["screen"] = {{"median_ms", t.median_ms}, {"times_ms", t.times_ms}, {"runs", a_.screen_runs}};
            } else if (c.ok(tol)) {
                e.update(timing_json(timer_->time(call), bytes));
            }
        } catch (const ScheduleError &ex) {
            e["ok"] = false;
            e["rejected"] = true;
            e["error"] = std::string("schedule rejected: ") + ex.what();
        } catch (const std::exception &ex) {
            e["ok"] = false;
            e["error"] = ex.what();
            if (first_error.empty()) first_error = ex.what();
            if (!cuda_context_healthy()) {
                rec["results"].push_back(e);
                records_.push_back(rec);
                throw FatalError(std::string("CUDA context lost in gsparse: ") + ex.what());
            }
        }
        entries.push_back(std::move(e));
        calls.push_back(call);
    }
    if (screen_timer_) {
        // Full timing for the finalists: the fastest screened points.
        std::vector<size_t> order;
        for (size_t i = 0; i < entries.size(); ++i)
            if (entries[i].contains("screen")) order.push_back(i);
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
            return entries[a]["screen"]["median_ms"].get<double>() < entries[b]["screen"]["median_ms"].get<double>();
        });
        if (order.size() > static_cast<size_t>(std::max(a_.finalists, 1))) order.resize(std::max(a_.finalists, 1));
        for (size_t i : order) {
            try {
                entries[i].update(timing_json(timer_->time(calls[i]), bytes));
                entries[i]["finalist"] = true;
            } catch (const std::exception &ex) {
                entries[i]["ok"] = false;
                entries[i]["error"] = ex.what();
                if (!cuda_context_healthy()) throw FatalError(std::string("CUDA context lost in gsparse: ") + ex.what());
            }
        }
    }
    json best = nullptr;
    bool any_ran = false;
    for (auto &e : entries) {
        any_ran = any_ran || e.value("ok", false);
        if (e.value("ok", false) && e["check"].value("ok", false) && e.contains("median_ms") &&
            (best.is_null() || e["median_ms"].get<double>() < best["median_ms"].get<double>()))
            best = e;
        rec["results"].push_back(std::move(e));
    }
    double gs_ms = NAN;
    if (!best.is_null()) {
        gs_ms = best["median_ms"].get<double>();
        rec["gsparse_schedule"] = best["schedule"];
        rec["gsparse_label"] = best["label"];
        rec["gsparse_params"] = best["params"];
        if (best["params"].is_object() && best["params"].contains("kLaneWidth"))
            rec["gsparse_lane_width"] = best["params"]["kLaneWidth"];
        rec["gsparse_median_ms"] = gs_ms;
        rec["gsparse_compulsory_bytes_per_s"] = best["compulsory_bytes_per_s"];
        rec["gsparse_gathered_bytes_per_s"] = best["gathered_bytes_per_s"];
    } else if (!first_error.empty()) {
        rec["gsparse_error"] = first_error;
    } else if (any_ran) {
        rec["gsparse_error"] = "output check failed (see results[].check)";
    } else {
        rec["gsparse_error"] = "no schedule point applies to this case (or all were rejected)";
    }

    // cuSPARSE timing.
    double cs_ms = NAN;
    if (cs) {
        const CusparseAlgResult r = cs->time(*timer_);
        json e;
        e["competitor"] = "cusparse.SDDMM";
        e["algorithm"] = "CUSPARSE_SDDMM_ALG_DEFAULT";
        e["layout"] = cs->layout();
        e["preprocessed"] = r.preprocessed;
        e["workspace_bytes"] = r.workspace_bytes;
        e["check"] = rec["check"]["cusparse_vs_cpu_sample"];
        e["ok"] = r.ok;
        if (r.ok) {
            e.update(timing_json(r.timing, bytes));
            cs_ms = r.timing.median_ms;
            rec["cusparse_median_ms"] = cs_ms;
            rec["cusparse_compulsory_bytes_per_s"] = e["compulsory_bytes_per_s"];
            rec["cusparse_gathered_bytes_per_s"] = e["gathered_bytes_per_s"];
        } else {
            e["error"] = r.error;
            rec["cusparse_error"] = r.error;
        }
        rec["results"].push_back(std::move(e));
        if (!cuda_context_healthy()) throw FatalError("CUDA context lost while timing cuSPARSE");
    }
    if (std::isfinite(gs_ms) && std::isfinite(cs_ms) && gs_ms > 0) rec["speedup_vs_cusparse"] = cs_ms / gs_ms;
    if (copy_bw_ > 0) rec["copy_bandwidth_bytes_per_s"] = copy_bw_;

    std::printf("%s: gsparse %s%s | cuSPARSE %s | speedup %s\n", tag.c_str(),
                std::isfinite(gs_ms) ? fmt("%.3f ms", gs_ms).c_str() : "—",
                !best.is_null() ? (" (" + best["schedule"].get<std::string>() + ")").c_str() : "",
                std::isfinite(cs_ms) ? fmt("%.3f ms", cs_ms).c_str() : "—",
                rec["speedup_vs_cusparse"].is_number() ? fmt("%.2fx", rec["speedup_vs_cusparse"].get<double>()).c_str()
                                                        : "—");
    if (!rec["gsparse_error"].is_null())
        std::printf("%s: gsparse: %s\n", tag.c_str(), rec["gsparse_error"].get<std::string>().c_str());
    std::fflush(stdout);
    return rec;
}

std::string Bench::markdown() const {
    std::ostringstream md;
    md << "# g-SDDMM benchmark: gsparse vs cached cusparseSDDMM\n\n";
    md << "- device: " << dev_.name << " (cc " << dev_.cc_major << "." << dev_.cc_minor << ", " << dev_.multiprocessors
       << " SMs, L2 " << dev_.l2_bytes / (1024 * 1024) << " MiB)\n";
    md << "- date (UTC): " << date_ << "; driver " << cuda_version_string(dev_.driver_version) << ", runtime "
       << cuda_version_string(dev_.runtime_version) << ", cuSPARSE " << dev_.cusparse_version << "\n";
    md << "- timing: CUDA events, " << a_.warmup << " warm-up + median of " << a_.runs << " runs, L2 flush "
       << (a_.no_flush_l2 ? "off" : "on");
    if (a_.screen_runs > 0)
        md << "; gsparse points screened with 1 + " << a_.screen_runs << " runs, " << a_.finalists
           << " finalists timed in full";
    md << "\n";
    if (copy_bw_ > 0) md << "- device-to-device copy bandwidth (read + write): " << fmt("%.2f", copy_bw_ / 1e12) << " TB/s\n";
    md << "- times in ms; speedup = cuSPARSE / gsparse; GB/s = compulsory / gathered bytes per second\n\n";
    md << "| graph | order | nodes | nnz | op | F | gsparse | lanes | schedule | cuSPARSE | speedup | gsparse GB/s | "
          "cuSPARSE GB/s | check |\n";
    md << "|---|---|---:|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---|\n";
    ErrorLog errors;
    for (const auto &r : records_) {
        md << "| " << r.value("graph", "") << " | " << r.value("order", "") << " | " << r.value("nodes", 0) << " | "
           << r.value("nnz", 0) << " | " << r.value("op", "") << " | " << r.value("F", 0) << " | "
           << fmt_ms(r["gsparse_median_ms"]) << " | "
           << (r["gsparse_lane_width"].is_number() ? std::to_string(r["gsparse_lane_width"].get<int64_t>()) : "—")
           << " | " << (r["gsparse_schedule"].is_string() ? r["gsparse_schedule"].get<std::string>() : "—") << " | "
           << fmt_ms(r["cusparse_median_ms"]) << " | "
           << (r["speedup_vs_cusparse"].is_number() ? fmt("%.2fx", r["speedup_vs_cusparse"].get<double>()) : "—")
           << " | " << fmt_gbs(r.value("gsparse_compulsory_bytes_per_s", json())) << " / "
           << fmt_gbs(r.value("gsparse_gathered_bytes_per_s", json())) << " | "
           << fmt_gbs(r.value("cusparse_compulsory_bytes_per_s", json())) << " / "
           << fmt_gbs(r.value("cusparse_gathered_bytes_per_s", json())) << " | " << gsparse_check_cell(r) << " |\n";
        errors.add(r);
    }
    md << errors.markdown(meta_, "Errors and rejected schedule points");
    return md.str();
}

}  // namespace

int main(int argc, char **argv) {
    Args a;
    CLI::App app{"gsparse-bench-sddmm: g-SDDMM (u_dot_v) of gsparse against cached cusparseSDDMM (CUDA events)"};
    add_common_options(app, a);
    app.add_option("--ops", a.ops, "ops: dot (u_dot_v), add, sub, mul, div (u_OP_v, F outputs per edge)")
        ->delimiter(',')
        ->capture_default_str();
    app.add_option("--schedules", a.schedules_file,
                   "JSON list of gsparse schedule points (default: the built-in gpu_sddmm grid)");
    app.add_flag("--shuffle-edge-ids", a.shuffle_edge_ids,
                 "number the twins' edges in random order (results are still compared in edge-id order)");
    app.add_option("--grid-threads", a.grid_threads,
                   "threads per block of the built-in grid (kMTile = threads / kLaneWidth)")
        ->delimiter(',')
        ->capture_default_str();
    app.add_option("--max-feats-per-lane", a.max_feats_per_lane,
                   "leave out built-in grid points with more than this many features per lane (0: keep all)")
        ->check(CLI::Range(int64_t(0), int64_t(1) << 30))
        ->capture_default_str();
    app.add_option("--screen-runs", a.screen_runs,
                   "rank gsparse points with 1 warm-up + this many runs first, time only the finalists in full "
                   "(0: time every point in full)")
        ->check(CLI::Range(0, 1000))
        ->capture_default_str();
    app.add_option("--finalists", a.finalists, "points timed in full after screening")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    app.add_option("--seed", a.seed, "seed of the features (X: seed, Y: seed + 1)")->capture_default_str();
    app.add_option("--sample-edges", a.sample_edges,
                   "edges checked against the CPU reference per case (every edge of smaller graphs)")
        ->check(CLI::Range(int64_t(1), int64_t(1) << 40))
        ->capture_default_str();
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp &e) {
        return app.exit(e);
    } catch (const CLI::ParseError &e) {
        app.exit(e);
        return 2;
    }
    if (a.runs < 10) std::fprintf(stderr, "gsparse-bench-sddmm: warning: --runs %d is below 10\n", a.runs);
    for (const auto &op : a.ops) {
        try {
            (void)parse_sddmm_bench_op(op);
        } catch (const std::exception &e) {
            std::cerr << "gsparse-bench-sddmm: --ops: " << e.what() << "\n";
            return 2;
        }
    }

    try {
        Bench bench(a);
        bench.set_command_line(command_line(argc, argv));
        if (a.measure_copy_bw) bench.measure_copy_bandwidth_pass();
        try {
            bench.run_all();
        } catch (...) {
            try {
                bench.write_outputs();
            } catch (...) {
            }
            throw;
        }
        if (a.json_out.empty() && a.md_out.empty()) std::cout << "\n" << bench.markdown();
    } catch (const std::exception &e) {
        std::fflush(stdout);
        std::cerr << "gsparse-bench-sddmm: error: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
