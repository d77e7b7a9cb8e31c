// gsparse-bench-spmm: times g-SpMM of gsparse against cached cuSPARSE (every CSR algorithm, the
// best reported) on dataset twins and real graphs, in one process, on one stream, with CUDA events.
//
//   gsparse-bench-spmm [--graphs reddit,ogbn-proteins,cora,...] [--scale 1.0] [--order both]
//                      [--feats 1,2,4,...,512] [--ops copy_lhs:sum,mul:sum,copy_lhs:max]
//                      [--runs 10] [--warmup 3] [--no-flush-l2] [--schedules points.json]
//                      [--measure-copy-bw] [--json out.json] [--md out.md]
//
// For every graph x F x op: the inputs are generated deterministically (features in [0, 1), edge
// weights in [0.5, 1.5) or the graph's own values); cuSPARSE (for copy_lhs:sum with values 1 and
// mul:sum with the weights as values) is set up once per case and its output is checked against a
// CPU reference on sampled rows; gsparse runs once per schedule point (compiling on first use), its
// output is checked against cuSPARSE's (sum ops, relative error <= 1e-4) and the CPU sample (every
// op, arg outputs included), then it is timed; then every cuSPARSE algorithm is timed. Failures
// (gsparse's GPU path missing, an algorithm rejecting a configuration, out of memory) are recorded
// per case and the run goes on. The JSON and markdown outputs are rewritten after every case.
//
// Exit codes: 0 success (including recorded per-case failures), 1 a fatal error (no GPU, a lost
// CUDA context, unwritable output), 2 a command-line error.
#include <CLI/CLI.hpp>
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "api/gsparse.h"
#include "bench_common.h"
#include "bench_util.h"
#include "cuda_check.h"
#include "cusparse_spmm.h"
#include "device_buffer.h"
#include "event_timer.h"
#include "graph/io.h"
#include "schedules/gpu_schedules.h"
#include "twin/twin.h"

#ifndef GSPARSE_REAL_GRAPHS_DIR_DEFAULT
#define GSPARSE_REAL_GRAPHS_DIR_DEFAULT ""
#endif

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace gsparse;
using namespace gsparse::bench;

namespace {

struct Args {
    std::vector<std::string> graphs{"reddit", "ogbn-proteins", "ogbn-products", "cora", "citeseer",
                                    "pubmed", "ca-CondMat", "p2p-Gnutella31"};
    double scale = 1.0;
    std::string order = "both";
    uint64_t twin_seed = 1;
    int threads = 0;
    std::string real_dir;
    std::vector<int64_t> feats{1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
    std::vector<std::string> ops{"copy_lhs:sum", "mul:sum", "copy_lhs:max"};
    int runs = 10;
    int warmup = 3;
    bool no_flush_l2 = false;
    std::string schedules_file;
    bool measure_copy_bw = false;
    std::string json_out;
    std::string md_out;
    uint64_t seed = 42;
    int64_t sample_rows = 512;
    std::vector<std::string> cusparse_algs;  ///< empty: all
    std::string edge_ids = "file";           ///< graph files' edge ids: "file" or "positions"
};

// --- The benchmark --------------------------------------------------------------------------------

class Bench {
public:
    explicit Bench(const Args &a) : a_(a) {
        for (const auto &op : a_.ops) specs_.push_back(parse_bench_op(op));
        for (int64_t f : a_.feats)
            if (f <= 0) fail<Error>("--feats: feature lengths must be positive, got ", f);
        if (!a_.schedules_file.empty()) points_ = load_schedule_points(a_.schedules_file);
        else points_.push_back(SchedulePoint{});
        for (const auto &name : a_.cusparse_algs) {
            bool found = false;
            for (const auto &alg : default_cusparse_algorithms())
                if (alg.name == name) {
                    algs_.push_back(alg);
                    found = true;
                }
            if (!found) fail<Error>("--cusparse-algs: unknown algorithm '", name, "' (ALG_DEFAULT, CSR_ALG1, CSR_ALG2, CSR_ALG3)");
        }
        if (algs_.empty()) algs_ = default_cusparse_algorithms();
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
        dev_ = query_device();
        dev_.cusparse_version = CusparseHandle::version_string();
        date_ = utc_date();
        meta_ = metadata();
    }

    ~Bench() {
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
        sel.positions_as_edge_ids = a_.edge_ids == "positions";
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
        json m = device_metadata("gsparse-bench-spmm", dev_, date_);
        json points = json::array();
        for (const auto &p : points_)
            points.push_back({{"schedule", p.schedule_string()}, {"label", p.label}});
        m["options"] = {{"runs", a_.runs},
                        {"warmup", a_.warmup},
                        {"flush_l2", !a_.no_flush_l2},
                        {"flush_bytes", timer_ ? timer_->flush_bytes() : 0},
                        {"scale", a_.scale},
                        {"order", a_.order},
                        {"edge_ids", a_.edge_ids},
                        {"twin_seed", a_.twin_seed},
                        {"feature_seed", a_.seed},
                        {"feats", a_.feats},
                        {"ops", a_.ops},
                        {"graphs", a_.graphs},
                        {"sample_rows", a_.sample_rows},
                        {"schedules_file", a_.schedules_file},
                        {"schedule_points", points}};
        m["timing"] =
            "CUDA events around each call on one stream; warm-up calls first; median of the timed runs; "
            "with flush_l2 a 2 x L2 scratch buffer is written before every call, outside the timed interval";
        m["bytes"] =
            "compulsory = row_ptr + col_idx (+ edge weights) + X + Z (+ arg_u, arg_e) once; "
            "gathered = row_ptr + col_idx (+ edge weights) + nnz * F * 4";
        return m;
    }

    void run_graph(GraphCase &gc);
    json run_case(const GraphCase &gc, int64_t feat, const SpmmSpec &spec, const std::string &op_text,
                  const DeviceBuffer<float> &x, DeviceBuffer<float> *z_cusparse, DeviceBuffer<float> &z_gsparse,
                  DeviceBuffer<int32_t> *arg_u, DeviceBuffer<int32_t> *arg_e, const float *d_ones,
                  const float *d_weights_pos, const float *d_weights_edge, const DeviceCsrPattern &pattern,
                  const std::vector<float> &weights);
    json case_base(const GraphCase &gc, int64_t feat, const std::string &op_text, const SpmmSpec &spec) const;

    const Args &a_;
    std::vector<SpmmSpec> specs_;
    std::vector<SchedulePoint> points_;
    std::vector<CusparseAlgorithm> algs_;
    CUcontext ctx_ = nullptr;
    cudaStream_t stream_ = nullptr;
    std::unique_ptr<CusparseHandle> handle_;
    std::unique_ptr<EventTimer> timer_;
    DeviceInfo dev_;
    std::string date_;
    double copy_bw_ = 0;
    json meta_;
    json records_ = json::array();
};

/// Whether cuSPARSE computes spec: copy_lhs:sum (values 1) and mul:sum (values = weights).
bool has_cusparse_equivalent(const SpmmSpec &spec) {
    return spec.reduce == ReduceOp::Sum && (spec.op == BinaryOp::CopyLhs || spec.op == BinaryOp::Mul);
}

json Bench::case_base(const GraphCase &gc, int64_t feat, const std::string &op_text, const SpmmSpec &spec) const {
    const Graph &g = gc.graph;
    const GraphStats &st = g.stats();
    const SpmmBytes bytes = spmm_bytes(g.num_dst(), g.num_src(), g.num_edges(), feat, spec);
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
    r["device"] = dev_.name;
    r["date"] = date_;
    r["bytes"] = {{"index", bytes.index}, {"compulsory", bytes.compulsory}, {"gathered", bytes.gathered}};
    r["results"] = json::array();
    r["gsparse_schedule"] = nullptr;
    r["gsparse_label"] = nullptr;
    r["gsparse_median_ms"] = nullptr;
    r["gsparse_error"] = nullptr;
    r["cusparse_median_ms"] = nullptr;
    r["cusparse_errors"] = nullptr;
    r["cusparse_best"] = nullptr;
    r["cusparse_best_median_ms"] = nullptr;
    r["speedup_vs_cusparse_best"] = nullptr;
    return r;
}

void Bench::run_graph(GraphCase &gc) {
    const Graph &g = gc.graph;
    const CSR &csr = g.csr();
    const std::string tag = "[" + gc.name + "/" + gc.order + "]";
    std::printf("%s %lld nodes, %lld edges (avg %.1f, max %lld, cov %.2f), ready in %.1f s\n", tag.c_str(),
                static_cast<long long>(g.num_dst()), static_cast<long long>(g.num_edges()), g.stats().avg_row_length,
                static_cast<long long>(g.stats().max_row_length), g.stats().row_length_cov, gc.load_s);
    std::fflush(stdout);

    bool need_ones = false, need_weights = false, need_cusparse = false, need_args = false;
    for (const auto &s : specs_) {
        need_ones |= s.op == BinaryOp::CopyLhs && s.reduce == ReduceOp::Sum;
        need_weights |= uses_rhs(s.op);
        need_cusparse |= has_cusparse_equivalent(s);
        need_args |= has_arg_outputs(s.reduce);
    }

    // Per-graph device state: index arrays, values 1, weights by position and by edge id.
    DeviceCsrPattern pattern;
    DeviceBuffer<float> d_ones, d_w_edge, d_w_pos;
    std::vector<float> weights;
    const float *w_pos_ptr = nullptr;
    try {
        if (need_cusparse) pattern = DeviceCsrPattern::upload(csr);
        if (need_ones) d_ones = DeviceBuffer<float>(std::vector<float>(static_cast<size_t>(g.num_edges()), 1.0f));
        if (need_weights) {
            weights = edge_weights(g, a_.seed + 1);
            d_w_edge = DeviceBuffer<float>(weights);
            if (csr.identity_edge_ids()) {
                w_pos_ptr = d_w_edge.data();
            } else {
                d_w_pos = DeviceBuffer<float>(values_by_position(csr, weights));
                w_pos_ptr = d_w_pos.data();
            }
        }
    } catch (const std::exception &e) {
        std::printf("%s setup failed: %s\n", tag.c_str(), e.what());
        if (!cuda_context_healthy()) throw FatalError(std::string("CUDA context lost: ") + e.what());
        for (int64_t feat : a_.feats)
            for (size_t i = 0; i < specs_.size(); ++i) {
                json r = case_base(gc, feat, bench_op_string(specs_[i]), specs_[i]);
                r["error"] = std::string("graph setup failed: ") + e.what();
                records_.push_back(std::move(r));
            }
        write_outputs();
        return;
    }

    for (int64_t feat : a_.feats) {
        size_t done = 0;
        try {
            const size_t x_elems = static_cast<size_t>(g.num_src()) * static_cast<size_t>(feat);
            const size_t z_elems = static_cast<size_t>(g.num_dst()) * static_cast<size_t>(feat);
            DeviceBuffer<float> x(x_elems), z_gsparse(z_elems), z_cusparse;
            DeviceBuffer<int32_t> arg_u, arg_e;
            if (need_cusparse) z_cusparse.allocate(z_elems);
            if (need_args) {
                arg_u.allocate(z_elems);
                arg_e.allocate(z_elems);
            }
            upload_features(x, g.num_src(), feat, a_.seed);
            for (size_t i = 0; i < specs_.size(); ++i) {
                json r = run_case(gc, feat, specs_[i], bench_op_string(specs_[i]), x,
                                  need_cusparse ? &z_cusparse : nullptr, z_gsparse, need_args ? &arg_u : nullptr,
                                  need_args ? &arg_e : nullptr, d_ones.data(), w_pos_ptr, d_w_edge.data(), pattern,
                                  weights);
                records_.push_back(std::move(r));
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
                json r = case_base(gc, feat, bench_op_string(specs_[i]), specs_[i]);
                r["error"] = e.what();
                records_.push_back(std::move(r));
            }
            write_outputs();
        }
    }
}

json Bench::run_case(const GraphCase &gc, int64_t feat, const SpmmSpec &spec, const std::string &op_text,
                     const DeviceBuffer<float> &x, DeviceBuffer<float> *z_cusparse, DeviceBuffer<float> &z_gsparse,
                     DeviceBuffer<int32_t> *arg_u, DeviceBuffer<int32_t> *arg_e, const float *d_ones,
                     const float *d_weights_pos, const float *d_weights_edge, const DeviceCsrPattern &pattern,
                     const std::vector<float> &weights) {
    const Graph &g = gc.graph;
    json rec = case_base(gc, feat, op_text, spec);
    const SpmmBytes bytes = spmm_bytes(g.num_dst(), g.num_src(), g.num_edges(), feat, spec);
    const double tol = tolerance_for(spec);
    const std::string tag = "[" + gc.name + "/" + gc.order + "] F=" + std::to_string(feat) + " " + op_text;

    const SampledReference sample(g, spec, feat, a_.seed, weights, a_.sample_rows, a_.seed + 7);

    // cuSPARSE: set up once (descriptors, workspaces, preprocessing), output checked on sampled rows.
    std::unique_ptr<CusparseSpmm> cs;
    std::vector<float> reference;
    std::string reference_name;
    json cusparse_check = nullptr;
    if (has_cusparse_equivalent(spec) && z_cusparse) {
        CusparseSpmm::Problem p;
        p.num_rows = g.num_dst();
        p.num_cols = g.num_src();
        p.nnz = g.num_edges();
        p.row_ptr = pattern.row_ptr.data();
        p.col_idx = pattern.col_idx.data();
        p.values = spec.op == BinaryOp::Mul ? d_weights_pos : d_ones;
        p.feat = feat;
        p.x = x.data();
        p.z = z_cusparse->data();
        cs = std::make_unique<CusparseSpmm>(*handle_, p, algs_);
        const int ri = cs->first_usable();
        if (ri >= 0) {
            try {
                reference = cs->output(static_cast<size_t>(ri));
                reference_name = "cusparse." + cs->algorithm(static_cast<size_t>(ri)).name;
                cusparse_check = comparison_json(sample.check(z_cusparse->data()), tol);
                cusparse_check["algorithm"] = cs->algorithm(static_cast<size_t>(ri)).name;
                cusparse_check["rows"] = sample.rows().size();
            } catch (const std::exception &e) {
                cusparse_check = {{"error", e.what()}};
                reference.clear();
                if (!cuda_context_healthy()) throw FatalError(std::string("CUDA context lost: ") + e.what());
            }
        }
    }
    rec["check"] = {{"cusparse_vs_cpu_sample", cusparse_check}};

    // gsparse, once per applicable schedule point.
    Tensor lhs = Tensor::wrap(const_cast<float *>(x.data()), {g.num_src(), feat}, DType::F32, Device::CUDA);
    Tensor rhs = uses_rhs(spec.op)
                     ? Tensor::wrap(const_cast<float *>(d_weights_edge), {g.num_edges(), 1}, DType::F32, Device::CUDA)
                     : Tensor();
    Tensor out = Tensor::wrap(z_gsparse.data(), {g.num_dst(), feat}, DType::F32, Device::CUDA);
    const bool args = has_arg_outputs(spec.reduce);
    Tensor au, ae;
    if (args) {
        au = Tensor::wrap(arg_u->data(), {g.num_dst(), feat}, DType::I32, Device::CUDA);
        ae = Tensor::wrap(arg_e->data(), {g.num_dst(), feat}, DType::I32, Device::CUDA);
    }
    json best_gs = nullptr;  // a copy of the fastest gsparse entry whose output passed the checks
    json gs_entries = json::array();
    std::string first_gs_error;
    for (const auto &point : points_) {
        if (!point.applies(gc.name, feat, op_text)) continue;
        json e;
        e["competitor"] = "gsparse";
        e["schedule"] = point.schedule_string();
        e["label"] = point.label;
        OpOptions opt;
        opt.schedule = point.params;
        if (point.expert)
            opt.schedule = gpu_spmm_expert_default(
                spmm_problem(spec, plan_features(spec.op, {feat}, {uses_rhs(spec.op) ? int64_t{1} : feat}), g.stats()));
        if (point.row_default) opt.schedule = gspmm_row_default_schedule(g, spec, lhs, rhs, Device::CUDA);
        e["resolved_schedule"] = (opt.schedule ? *opt.schedule : gspmm_default_schedule(g, spec, lhs, rhs, Device::CUDA)).str();
        opt.cache = nullptr;
        opt.cuda = CudaLaunch{static_cast<void *>(ctx_), static_cast<void *>(stream_)};
        auto call = [&] { gspmm_into(g, spec, lhs, rhs, out, args ? &au : nullptr, args ? &ae : nullptr, opt); };
        try {
            z_gsparse.fill_zero(stream_);
            GSPARSE_CUDA_CHECK(cudaStreamSynchronize(stream_));
            const auto t0 = std::chrono::steady_clock::now();
            call();  // the first call compiles the kernel
            GSPARSE_CUDA_CHECK(cudaStreamSynchronize(stream_));
            e["first_call_ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

            json chk;
            const Comparison cpu = sample.check(z_gsparse.data());
            chk["cpu_sample"] = comparison_json(cpu, tol);
            chk["cpu_sample"]["rows"] = sample.rows().size();
            bool ok = cpu.ok(tol);
            if (!reference.empty()) {
                const Comparison c = compare_outputs(z_gsparse.download(), reference);
                chk["reference"] = comparison_json(c, tol);
                chk["reference"]["competitor"] = reference_name;
                ok = ok && c.ok(tol);
            }
            if (args) {
                std::string problem;
                const int64_t bad = sample.check_args(z_gsparse.data(), arg_u->data(), arg_e->data(), &problem);
                chk["args"] = {{"bad", bad}, {"first_problem", problem}, {"ok", bad == 0}};
                ok = ok && bad == 0;
            }
            chk["ok"] = ok;
            e["check"] = chk;

            const TimingResult t = timer_->time(call);
            e.update(timing_json(t, bytes));
            e["ok"] = true;
        } catch (const std::exception &ex) {
            e["ok"] = false;
            e["error"] = ex.what();
            if (first_gs_error.empty()) first_gs_error = ex.what();
            if (!cuda_context_healthy()) {
                rec["results"].push_back(e);
                records_.push_back(rec);
                throw FatalError(std::string("CUDA context lost in gsparse: ") + ex.what());
            }
        }
        gs_entries.push_back(std::move(e));
    }
    for (const auto &e : gs_entries) {
        rec["results"].push_back(e);
        if (e.value("ok", false) && e.contains("check") && e["check"].value("ok", false) &&
            (best_gs.is_null() || e["median_ms"].get<double>() < best_gs["median_ms"].get<double>()))
            best_gs = e;
    }
    double gs_ms = NAN;
    if (!best_gs.is_null()) {
        gs_ms = best_gs["median_ms"].get<double>();
        rec["gsparse_schedule"] = best_gs["schedule"];
        rec["gsparse_label"] = best_gs["label"];
        rec["gsparse_median_ms"] = gs_ms;
    } else if (!first_gs_error.empty()) {
        rec["gsparse_error"] = first_gs_error;
    } else if (!gs_entries.empty()) {
        rec["gsparse_error"] = "output check failed (see results[].check)";
    } else {
        rec["gsparse_error"] = "no schedule point applies to this case";
    }

    // cuSPARSE timings.
    double cs_ms = NAN;
    if (cs) {
        const std::vector<CusparseAlgResult> results = cs->time_all(*timer_);
        json medians = json::object(), errors = json::object();
        for (const auto &r : results) {
            json e;
            e["competitor"] = "cusparse." + r.name;
            e["algorithm"] = r.name;
            e["preprocessed"] = r.preprocessed;
            e["workspace_bytes"] = r.workspace_bytes;
            e["ok"] = r.ok;
            if (r.ok) {
                e.update(timing_json(r.timing, bytes));
                medians[r.name] = r.timing.median_ms;
            } else {
                e["error"] = r.error;
                medians[r.name] = nullptr;
                errors[r.name] = r.error;
            }
            rec["results"].push_back(std::move(e));
        }
        rec["cusparse_median_ms"] = medians;
        rec["cusparse_errors"] = errors;
        if (const CusparseAlgResult *best = best_of(results)) {
            cs_ms = best->timing.median_ms;
            rec["cusparse_best"] = best->name;
            rec["cusparse_best_median_ms"] = cs_ms;
            json b = timing_json(best->timing, bytes);
            rec["cusparse_best_compulsory_bytes_per_s"] = b["compulsory_bytes_per_s"];
            rec["cusparse_best_gathered_bytes_per_s"] = b["gathered_bytes_per_s"];
        }
        if (!cuda_context_healthy()) throw FatalError("CUDA context lost while timing cuSPARSE");
    } else {
        rec["cusparse_note"] = "no cuSPARSE equivalent";
    }
    if (!best_gs.is_null()) {
        rec["gsparse_compulsory_bytes_per_s"] = best_gs["compulsory_bytes_per_s"];
        rec["gsparse_gathered_bytes_per_s"] = best_gs["gathered_bytes_per_s"];
    }
    if (std::isfinite(gs_ms) && std::isfinite(cs_ms) && gs_ms > 0) rec["speedup_vs_cusparse_best"] = cs_ms / gs_ms;
    if (copy_bw_ > 0) rec["copy_bandwidth_bytes_per_s"] = copy_bw_;

    std::printf("%s: gsparse %s%s | cuSPARSE best %s%s | speedup %s\n", tag.c_str(),
                std::isfinite(gs_ms) ? fmt("%.3f ms", gs_ms).c_str() : "—",
                !best_gs.is_null() ? (" (" + best_gs["schedule"].get<std::string>() + ")").c_str() : "",
                std::isfinite(cs_ms) ? fmt("%.3f ms", cs_ms).c_str() : "—",
                rec["cusparse_best"].is_string() ? (" (" + rec["cusparse_best"].get<std::string>() + ")").c_str() : "",
                rec["speedup_vs_cusparse_best"].is_number() ? fmt("%.2fx", rec["speedup_vs_cusparse_best"].get<double>()).c_str()
                                                            : "—");
    if (!rec["gsparse_error"].is_null())
        std::printf("%s: gsparse: %s\n", tag.c_str(), rec["gsparse_error"].get<std::string>().c_str());
    std::fflush(stdout);
    return rec;
}

std::string Bench::markdown() const {
    std::ostringstream md;
    md << "# g-SpMM benchmark: gsparse vs cached cuSPARSE\n\n";
    md << "- device: " << dev_.name << " (cc " << dev_.cc_major << "." << dev_.cc_minor << ", " << dev_.multiprocessors
       << " SMs, L2 " << dev_.l2_bytes / (1024 * 1024) << " MiB)\n";
    md << "- date (UTC): " << date_ << "; driver " << cuda_version_string(dev_.driver_version) << ", runtime "
       << cuda_version_string(dev_.runtime_version) << ", cuSPARSE " << dev_.cusparse_version << "\n";
    md << "- timing: CUDA events, " << a_.warmup << " warm-up + median of " << a_.runs << " runs, L2 flush "
       << (a_.no_flush_l2 ? "off" : "on") << "\n";
    if (copy_bw_ > 0) md << "- device-to-device copy bandwidth (read + write): " << fmt("%.2f", copy_bw_ / 1e12) << " TB/s\n";
    md << "- times in ms; speedup = best cuSPARSE / gsparse; GB/s = compulsory / gathered bytes per second\n\n";
    md << "| graph | order | nodes | nnz | op | F | gsparse | schedule | best cuSPARSE | ALG_DEFAULT | CSR_ALG1 | "
          "CSR_ALG2 | CSR_ALG3 | speedup | gsparse GB/s | cuSPARSE GB/s | check |\n";
    md << "|---|---|---:|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
    ErrorLog errors;
    for (const auto &r : records_) {
        auto alg = [&](const char *name) {
            const json &m = r["cusparse_median_ms"];
            if (!m.is_object()) return std::string("—");
            if (!m.contains(name)) return std::string("—");
            return m[name].is_number() ? fmt_ms(m[name]) : std::string("err");
        };
        md << "| " << r.value("graph", "") << " | " << r.value("order", "") << " | " << r.value("nodes", 0) << " | "
           << r.value("nnz", 0) << " | " << r.value("op", "") << " | " << r.value("F", 0) << " | "
           << fmt_ms(r["gsparse_median_ms"]) << " | "
           << (r["gsparse_schedule"].is_string() ? r["gsparse_schedule"].get<std::string>() : "—") << " | "
           << fmt_ms(r["cusparse_best_median_ms"])
           << (r["cusparse_best"].is_string() ? " (" + r["cusparse_best"].get<std::string>() + ")" : "") << " | "
           << alg("ALG_DEFAULT") << " | " << alg("CSR_ALG1") << " | " << alg("CSR_ALG2") << " | " << alg("CSR_ALG3")
           << " | "
           << (r["speedup_vs_cusparse_best"].is_number() ? fmt("%.2fx", r["speedup_vs_cusparse_best"].get<double>())
                                                         : "—")
           << " | " << fmt_gbs(r.value("gsparse_compulsory_bytes_per_s", json())) << " / "
           << fmt_gbs(r.value("gsparse_gathered_bytes_per_s", json())) << " | "
           << fmt_gbs(r.value("cusparse_best_compulsory_bytes_per_s", json())) << " / "
           << fmt_gbs(r.value("cusparse_best_gathered_bytes_per_s", json())) << " | " << gsparse_check_cell(r) << " |\n";
        errors.add(r);
    }
    md << errors.markdown(meta_, "Errors");
    return md.str();
}

}  // namespace

int main(int argc, char **argv) {
    Args a;
    CLI::App app{"gsparse-bench-spmm: g-SpMM of gsparse against cached cuSPARSE on GNN graphs (CUDA events)"};
    add_common_options(app, a);
    app.add_option("--ops", a.ops, "ops BINARY:REDUCE (copy_lhs, add, sub, mul, div; sum, mean, max, min)")
        ->delimiter(',')
        ->capture_default_str();
    app.add_option("--schedules", a.schedules_file, "JSON list of gsparse schedule points (default: the device default)");
    app.add_option("--seed", a.seed, "seed of the features and generated edge weights")->capture_default_str();
    app.add_option("--sample-rows", a.sample_rows, "rows checked against the CPU reference per case")
        ->check(CLI::Range(int64_t(0), int64_t(1) << 40))
        ->capture_default_str();
    app.add_option("--edge-ids", a.edge_ids,
                   "edge ids of graph files: as stored (file), or their CSR positions (positions: edge weights "
                   "in CSR order, the array cuSPARSE reads, as for the twins)")
        ->check(CLI::IsMember({"file", "positions"}))
        ->capture_default_str();
    app.add_option("--cusparse-algs", a.cusparse_algs, "cuSPARSE algorithms to time (default: all)")->delimiter(',');
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp &e) {
        return app.exit(e);
    } catch (const CLI::ParseError &e) {
        app.exit(e);
        return 2;
    }
    if (a.runs < 10) std::fprintf(stderr, "gsparse-bench-spmm: warning: --runs %d is below 10\n", a.runs);

    const std::string cmd = command_line(argc, argv);

    try {
        Bench bench(a);
        bench.set_command_line(cmd);
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
        std::cerr << "gsparse-bench-spmm: error: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
