// gsparse-tune: finds the fastest schedule of a sparse operator for a graph and feature length.
//
//   gsparse-tune                                   # g-SpMM copy_lhs/sum, F = 32, on the built-in
//                                                  # default graph (reddit twin at scale 0.01), CPU
//   gsparse-tune --graph cora.mtx --op sddmm --binary dot --feat 64 --json result.json
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <regex>
#include <thread>

#include "autotune/cli_options.h"
#include "autotune/cost_model.h"
#include "autotune/device_mirror.h"
#include "autotune/features.h"
#include "autotune/records.h"
#include "autotune/replay.h"
#include "autotune/search_space.h"
#include "autotune/shipped_models.h"
#include "autotune/tuner.h"
#include "autotune/user_schedule_search.h"
#include "api/gsparse.h"
#include "api/tuning_key.h"
#include "runtime/aot.h"
#include "runtime/cuda_launch.h"
#include "core/error.h"
#include "dsl/plugin.h"
#include "graph/convert.h"
#include "schedules/gpu_schedules.h"
#include "twin/twin.h"

using namespace gsparse;
using namespace gsparse::autotune;

namespace {

struct Args {
    std::string graph_file, dataset = "reddit";
    TwinArgs twin;
    OperatorArgs op;
    std::string mode = "genetic", target = "cpu", json_out, cache_file, model_prefix = "auto", records_file, emit_dir, replay,
                emit_name = "gsparse_kernel";
    bool no_cache = false;
    bool segments = false;
    bool resume = false;
    size_t budget = 0;
    int runs = 10, threads = 0;
    double cutoff = TuneOptions{}.cutoff, cutoff_slack_ms = TuneOptions{}.cutoff_slack_ms;
    uint64_t seed = 1;
    int polish = GeneticOptions{}.polish;
    bool quiet = false;
    bool show_default = false;
    std::string plugin, program, schedule_def;
};

Graph load_problem_graph(const Args &a, std::string &name) {
    if (!a.graph_file.empty()) {
        name = a.graph_file;
        return Graph::load(a.graph_file);
    }
    return make_twin(a.dataset, a.twin, name);
}

void print_summary(const TuneResult &r, const std::string &model) {
    if (r.from_cache) {
        std::printf("operator      %s, lhs features %s, rhs features %s\n", r.op.c_str(), shape_str(r.lhs_feat).c_str(),
                    shape_str(r.rhs_feat).c_str());
        std::printf("best schedule %-50s %9.3f ms (from the tuning cache; --no-cache to tune afresh)\n",
                    r.best.schedule.str().c_str(), r.best.mean_ms);
        return;
    }
    std::printf("operator      %s, lhs features %s, rhs features %s\n", r.op.c_str(), shape_str(r.lhs_feat).c_str(),
                shape_str(r.rhs_feat).c_str());
    std::printf("graph         %s: %lld nodes, %lld edges, avg row %.1f, max row %lld, row COV %.2f\n",
                r.graph.c_str(), static_cast<long long>(r.stats.num_rows), static_cast<long long>(r.stats.nnz),
                r.stats.avg_row_length, static_cast<long long>(r.stats.max_row_length), r.stats.row_length_cov);
    std::printf("search        %s over %zu kernels (valid points%s) of %zu points on %s (%u hardware threads), %.1f s\n",
                r.mode.c_str(), r.valid_size,
                r.alias_size ? (", less " + std::to_string(r.alias_size) + " that name the same kernel as another").c_str() : "",
                r.space_size, r.device.c_str(), std::thread::hardware_concurrency(), r.wall_s);
    if (!model.empty()) std::printf("model         %s\n", model.c_str());
    size_t reused = r.expert_default.recorded ? 1 : 0;
    for (const auto &c : r.candidates) reused += c.recorded && !(c.schedule == r.expert_default.schedule);
    if (reused) std::printf("measured      %zu candidates, %zu of them from earlier records (--resume)\n", r.candidates.size() + 1, reused);
    else std::printf("measured      %zu candidates\n", r.candidates.size() + 1);
    std::printf("time          %.1f s enumerating the space, %.1f s ranking it, %.1f s waiting for compiles, "
                "%.1f s loading kernels, %.1f s warming up, %.1f s timed runs\n",
                r.phases.space_s, r.phases.rank_s, r.phases.compile_wait_s, r.phases.load_s, r.phases.warmup_s,
                r.phases.timed_s);
    std::printf("expert        %-50s %9.3f ms\n", r.expert_default.schedule.str().c_str(), r.expert_default.mean_ms);
    if (r.best.recorded)
        std::printf("best schedule %-50s %9.3f ms (recorded earlier)\n", r.best.schedule.str().c_str(), r.best.mean_ms);
    else
        std::printf("best schedule %-50s %9.3f ms (mean of %zu runs)\n", r.best.schedule.str().c_str(),
                    r.best.mean_ms, r.best.run_ms.size());
    std::printf("speedup over the expert default: %.2fx\n", r.speedup_over_default());
}

/// Operands of fixed pseudo-random values in [0.5, 1.5) for a user program's declared operands on g.
std::map<std::string, Tensor> random_operands(const std::vector<dsl::OperandInfo> &declared, const Graph &g, int F,
                                              DType dtype, uint64_t seed) {
    std::map<std::string, Tensor> operands;
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> value(0.5, 1.5);
    for (const auto &o : declared) {
        const int64_t rows = o.at == dsl::At::Src ? g.num_src() : o.at == dsl::At::Dst ? g.num_dst() : g.num_edges();
        Tensor t = Tensor::empty({rows, o.columns > 0 ? o.columns : o.broadcast ? 1 : F}, dtype);
        for (int64_t i = 0; i < t.numel(); ++i) {
            if (dtype == DType::F64) t.data_as<double>()[i] = value(rng);
            else t.data_as<float>()[i] = static_cast<float>(value(rng));
        }
        operands.emplace(o.name, t);
    }
    return operands;
}

/// Where a plugin's program is measured: its operands and output on the host (--target cpu), or
/// mirrored on the GPU (--target cuda), where timing waits for the device after each run.
struct PluginOperands {
    Device device = Device::CPU;
    std::map<std::string, Tensor> host, operands;
    Tensor host_out, out;
    std::unique_ptr<DeviceMirror> mirror;

    PluginOperands(const std::string &target, std::map<std::string, Tensor> values, Tensor result)
        : device(target == "cuda" ? Device::CUDA : Device::CPU), host(std::move(values)), operands(host),
          host_out(std::move(result)), out(host_out) {
        if (device != Device::CUDA) return;
        mirror = std::make_unique<DeviceMirror>();
        for (auto &kv : operands) kv.second = mirror->upload(kv.second);
        out = mirror->upload(host_out);
    }
    CudaLaunch launch() const { return mirror ? mirror->launch() : CudaLaunch{}; }
    std::function<void()> sync() const {
        if (!mirror) return nullptr;
        return [m = mirror.get()] { m->sync(); };
    }
    /// The last result, on the host.
    Tensor result() { return mirror ? mirror->download(out) : out; }
};

/// The largest difference between got and want relative to want's magnitude (NaN in both agree).
template <typename T>
double largest_relative_difference(const Tensor &got, const Tensor &want) {
    double worst = 0;
    for (int64_t i = 0; i < want.numel(); ++i) {
        const double g = static_cast<double>(got.data_as<T>()[i]), w = static_cast<double>(want.data_as<T>()[i]);
        if (std::isnan(g) && std::isnan(w)) continue;
        const double d = std::isnan(g) || std::isnan(w) ? INFINITY : std::abs(g - w) / std::max(std::abs(w), 1e-6);
        worst = std::max(worst, d);
    }
    return worst;
}

/// Checks a plugin program's result against the program under its default schedule on the CPU;
/// throws KernelError when they differ by more than rounding. Prints the largest difference.
void check_against_cpu(const std::string &what, const Tensor &got, const Tensor &want) {
    const double worst = want.dtype() == DType::F64 ? largest_relative_difference<double>(got, want)
                                                    : largest_relative_difference<float>(got, want);
    const double tolerance = want.dtype() == DType::F64 ? 1e-9 : 1e-3;
    std::printf("checked       %s against the CPU default: largest relative difference %.2e\n", what.c_str(), worst);
    if (!(worst <= tolerance))
        fail<KernelError>(what, " differs from the program's CPU result by ", worst, " (relative; tolerance ",
                          tolerance, ")");
}

/// The points a plugin program's search measures: all of space, or with a budget below its size the
/// default and budget - 1 others drawn without replacement (seeded), in the space's order.
std::vector<std::map<std::string, int64_t>> sample_points(const std::vector<std::map<std::string, int64_t>> &space,
                                                          const std::map<std::string, int64_t> &dflt, size_t budget,
                                                          uint64_t seed) {
    if (budget == 0 || budget >= space.size()) return space;
    std::vector<size_t> others;
    size_t at_default = space.size();
    for (size_t i = 0; i < space.size(); ++i) {
        if (space[i] == dflt) at_default = i;
        else others.push_back(i);
    }
    std::mt19937_64 rng(seed);
    std::shuffle(others.begin(), others.end(), rng);
    const size_t drawn = at_default < space.size() ? budget - 1 : budget;
    others.resize(std::min(drawn, others.size()));
    if (at_default < space.size()) others.push_back(at_default);
    std::sort(others.begin(), others.end());
    std::vector<std::map<std::string, int64_t>> points;
    for (size_t i : others) points.push_back(space[i]);
    return points;
}

/// Searches the schedule def of a plugin's program (g-SpMM-shaped, or per edge: per_edge) on the
/// graph: every valid point for --target's device, --budget of them (the default among them), or
/// the genetic search's (genetic), measured on operands of fixed pseudo-random values, fastest
/// first; the fastest point's result is checked against the program's CPU result; --json writes
/// every point.
template <class Program, class Def>
int search_plugin_program(const Args &a, bool genetic, std::ofstream &json_file, const Program &program,
                          const Def &def, bool per_edge) {
    std::string graph_name;
    const Graph g = load_problem_graph(a, graph_name);
    const int F = static_cast<int>(a.op.feat);
    const DType dtype = program.type() == Halide::Float(64) ? DType::F64 : DType::F32;
    if (program.type() != Halide::Float(32) && program.type() != Halide::Float(64))
        fail<Error>("--plugin tuning fills operands with floating-point values; program ", a.program, " is of another type");
    const int64_t out_rows = per_edge ? g.num_edges() : g.num_dst();
    PluginOperands p(a.target, random_operands(program.operands(), g, F, dtype, a.seed),
                     Tensor::empty({out_rows, F}, dtype));
    const char *where = p.device == Device::CUDA ? "GPU" : "CPU";
    const auto space = def.space(F, p.device);
    if (space.empty()) fail<Error>("schedule ", def.name, " has no valid point for ", F, " features on the ", where);
    const auto dflt = def.complete({}, F, p.device);
    const auto points = genetic ? space : sample_points(space, dflt, a.budget, a.seed);
    const auto t0 = std::chrono::steady_clock::now();
    GeneticOptions gopt;
    gopt.seed = a.seed;
    gopt.polish = a.polish;
    const auto ranked =
        genetic ? genetic_user_search(program, def, F, p.device, g, p.operands, p.out, p.launch(), a.runs, p.sync(), gopt)
                : dsl::measure_points(program, def, points, F, p.device, g, p.operands, p.out, p.launch(), a.runs,
                                      p.sync());
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const dsl::MeasuredPoint *at_default = nullptr;
    for (const auto &m : ranked)
        if (m.point == dflt) at_default = &m;
    std::printf("%s %s from %s, %d features\n", per_edge ? "per-edge program" : "program      ", a.program.c_str(),
                a.plugin.c_str(), F);
    std::printf("graph         %s: %lld rows, %lld edges\n", graph_name.c_str(), static_cast<long long>(g.num_dst()),
                static_cast<long long>(g.num_edges()));
    if (genetic)
        std::printf("search        genetic search over the %zu valid points of %s on the %s (seed %llu): %zu measured, "
                    "%.1f s\n",
                    space.size(), def.name.c_str(), where, static_cast<unsigned long long>(a.seed), ranked.size(), wall);
    else if (points.size() == space.size())
        std::printf("search        every valid point of %s (%zu) on the %s, %.1f s\n", def.name.c_str(), space.size(),
                    where, wall);
    else
        std::printf("search        %zu of the %zu valid points of %s (the default and %zu drawn with seed %llu, "
                    "--budget) on the %s, %.1f s\n",
                    points.size(), space.size(), def.name.c_str(), points.size() - 1,
                    static_cast<unsigned long long>(a.seed), where, wall);
    if (at_default)
        std::printf("default       %-50s %9.3f ms\n", dsl::point_str(def, at_default->point).c_str(), at_default->median_ms);
    std::printf("best schedule %-50s %9.3f ms (median of %d runs)\n", dsl::point_str(def, ranked[0].point).c_str(),
                ranked[0].median_ms, a.runs);
    // The fastest point once more, its result against the program's default on the CPU.
    program.compile(F, p.device, def, ranked[0].point).run(g, p.operands, p.out, p.launch());
    if (const auto sync = p.sync()) sync();
    Tensor want = Tensor::empty({out_rows, F}, dtype);
    program.compile(F).run(g, p.host, want);
    check_against_cpu("the best schedule's result", p.result(), want);
    if (json_file) {
        nlohmann::json j;
        j["program"] = a.program;
        j["plugin"] = a.plugin;
        j["shape"] = per_edge ? "per-edge" : "g-SpMM";
        j["schedule"] = def.name;
        j["graph"] = graph_name;
        j["features"] = F;
        j["device"] = gsparse::device_label(p.device);
        j["best"] = dsl::point_str(def, ranked[0].point);
        if (at_default) j["default"] = {{"point", dsl::point_str(def, at_default->point)}, {"median_ms", at_default->median_ms}};
        j["search"] = genetic ? "genetic" : points.size() == space.size() ? "exhaustive" : "sample";
        j["points"] = nlohmann::json::array();
        for (const auto &m : ranked) j["points"].push_back({{"point", dsl::point_str(def, m.point)}, {"median_ms", m.median_ms}});
        json_file << j.dump(1) << "\n";
    }
    return 0;
}

/// Tunes a plugin's user program (dsl/plugin.h) on the graph: the knobs of its schedule
/// (--schedule-def: one of the plugin's schedules, or edge schedules for a per-edge program; else
/// the default user schedule or default edge schedule), searched by search_plugin_program.
int tune_plugin_program(const Args &a, CLI::App &app) {
    for (const char *flag : {"--op", "--binary", "--reduce", "--lhs-target", "--rhs-target", "--edge-feat",
                             "--model", "--records", "--resume", "--replay", "--cache", "--no-cache",
                             "--emit-lib", "--emit-name", "--cutoff", "--cutoff-slack", "--threads"})
        if (app.count(flag)) fail<Error>(flag, " applies to built-in operators; a --plugin program's points are measured (all, or --budget of them)");
    if (a.program.empty()) fail<Error>("--plugin needs --program");
    // --plugin measures every point (or --budget of them) unless --mode genetic is given.
    const bool genetic = app.count("--mode") && a.mode == "genetic";
    if (app.count("--mode") && a.mode == "random")
        fail<Error>("--mode random applies to built-in operators; with --plugin, --budget measures a random sample");
    if (genetic && app.count("--budget"))
        fail<Error>("--budget samples the points of an exhaustive --plugin search; --mode genetic measures what its "
                    "search visits (--polish sets its final local search)");
    if (app.count("--polish") && !genetic) fail<Error>("--polish applies to --mode genetic");
    std::ofstream json_file;
    if (!a.json_out.empty()) {
        json_file.open(a.json_out);
        if (!json_file) fail<Error>("cannot write ", a.json_out);
    }
    const dsl::Plugin plugin = dsl::load_plugin(a.plugin);
    const std::vector<std::string> edge_programs = plugin.registry.edge_program_names();
    if (std::find(edge_programs.begin(), edge_programs.end(), a.program) != edge_programs.end()) {
        const dsl::SddmmProgram program = plugin.registry.make_edge_program(a.program);
        const dsl::EdgeScheduleDef def = a.schedule_def.empty() ? dsl::default_edge_schedule()
                                                                : plugin.registry.make_edge_schedule(a.schedule_def);
        return search_plugin_program(a, genetic, json_file, program, def, true);
    }
    const dsl::SpmmProgram program = plugin.registry.make_program(a.program);
    const dsl::ScheduleDef def =
        a.schedule_def.empty() ? dsl::default_schedule() : plugin.registry.make_schedule(a.schedule_def);
    return search_plugin_program(a, genetic, json_file, program, def, false);
}

}  // namespace

int main(int argc, char **argv) {
    Args a;
    CLI::App app{"gsparse-tune: find the fastest schedule of a g-SpMM / g-SDDMM kernel for a graph"};
    app.set_version_flag("--version", "gsparse-tune 0.1.0");
    auto *graph_opt = app.add_option("--graph", a.graph_file, "graph file (.mtx, .gcsr, edge list)")->check(CLI::ExistingFile);
    app.add_option("--dataset", a.dataset, "built-in twin used when --graph is absent")
        ->check(CLI::IsMember(datasets::twin_names()))
        ->excludes(graph_opt);
    for (CLI::Option *o : add_twin_options(app, a.twin)) o->excludes(graph_opt);
    add_operator_options(app, a.op);
    app.add_option("--mode", a.mode, "search mode: genetic (cost-model seeded genetic search; with --plugin: "
                                     "measured, from the schedule's default), random (3 samples by default), "
                                     "exhaustive (with --plugin, the default: every point, or --budget of them)")
        ->check(CLI::IsMember({"genetic", "exhaustive", "random"}));
    app.add_option("--budget", a.budget, "candidates measured in random mode; with --plugin: points measured (the "
                                         "default and others drawn with --seed; all when absent)")->check(CLI::PositiveNumber);
    app.add_option("--cache", a.cache_file, "tuning cache file (default: " + TuningCache::default_path() + ")");
    app.add_flag("--no-cache", a.no_cache, "tune afresh even when the cache has this problem (the result is stored)");
    app.add_option("--model", a.model_prefix, "cost model that ranks the space for the genetic search: PREFIX (PREFIX.pt + "
                                              "PREFIX.json from gsparse-train-cost-model), auto (the model shipped for the "
                                              "problem's schedule, if any) or none (random seeds)")
        ->capture_default_str();
    auto *records_opt = app.add_option("--records", a.records_file, "append every measurement to this JSON Lines file as it is "
                                                "taken (training data for gsparse-train-cost-model)");
    auto *resume_opt = app.add_flag("--resume", a.resume, "reuse the times that --records already holds for this problem "
                                                          "(device, operator, graph, F) instead of measuring those points "
                                                          "again: an interrupted exhaustive sweep continues where it stopped")
                           ->needs(records_opt);
    app.add_option("--replay", a.replay, "search the measurements of a recorded exhaustive tune of the "
                                                            "same problem (its --json) instead of compiling and timing "
                                                            "candidates: evaluates search strategies; uses no cache")
                           ->check(CLI::ExistingFile)
                           ->excludes(records_opt)
                           ->excludes(resume_opt);
    app.add_option("--runs", a.runs, "timed runs per candidate (after one warm-up)")->check(CLI::Range(1, 10000));
    add_cutoff_options(app, a.cutoff, a.cutoff_slack_ms, "candidate");
    app.add_option("--threads", a.threads, "candidates compiled in parallel (0: one per hardware thread)")
        ->check(CLI::Range(0, 1024));
    app.add_option("--seed", a.seed, "seed of the search");
    app.add_option("--polish", a.polish, "genetic mode: points measured by the final local search around the best "
                                         "(each knob one choice up or down; 0: none)")
        ->check(CLI::Range(0, 1000));
    app.add_option("--target", a.target, "device to tune for")->check(CLI::IsMember({"cpu", "cuda"}));
    app.add_option("--json", a.json_out, "write the full result as JSON to this file");
    app.add_option("--emit-lib", a.emit_dir, "write the best kernel (g-SpMM or g-SDDMM, for --target) as a static library and "
                                             "headers into this folder (see docs/aot.md)");
    app.add_option("--emit-name", a.emit_name, "name of the emitted kernel (a C identifier)");
    app.add_flag("--segments", a.segments, "g-SpMM sum / mean: also measure g-SpMM by nonzeros (spmm_segments, every "
                 "run length; on CUDA its feature tiles and warp lanes) after the search; its points run through the operator API and the tuning cache, they are "
                 "not emitted ahead of time (not with --emit-lib or --replay)");
    app.add_flag("--quiet", a.quiet, "no progress bar");
    app.add_flag("--show-default", a.show_default, "print the schedule point the operator runs on this graph, op and F for "
                 "--target when none is given (the default schedule's choice from the graph's statistics) and exit: "
                 "nothing is compiled or measured, and no GPU is needed");
    app.add_option("--plugin", a.plugin, "a shared module of user programs (dsl/plugin.h): tune one of them, --program");
    app.add_option("--program", a.program, "with --plugin: the user program to tune");
    app.add_option("--schedule-def", a.schedule_def, "with --plugin: the plugin's schedule whose knobs are searched, an "
                                                     "edge schedule for a per-edge program (default: the default user "
                                                     "schedule, edge_default for per-edge programs)");
    CLI11_PARSE(app, argc, argv);

    try {
        if (a.show_default && !a.plugin.empty())
            fail<Error>("--show-default names the default of gsparse's own operators, not of a plugin's program");
        if (!a.plugin.empty()) return tune_plugin_program(a, app);
        if (!a.program.empty() || !a.schedule_def.empty()) fail<Error>("--program and --schedule-def need --plugin");
        std::ofstream json_file;
        if (!a.json_out.empty()) {
            json_file.open(a.json_out);  // fail before spending time on tuning
            if (!json_file) fail<Error>("cannot write ", a.json_out);
        }
        TuningProblem p;
        p.device = a.target == "cuda" ? Device::CUDA : Device::CPU;
        p.graph = load_problem_graph(a, p.graph_name);
        set_operator(p, a.op);
        if (a.show_default) {
            if (!a.replay.empty() || !a.emit_dir.empty() || !a.json_out.empty() || !a.records_file.empty() || a.segments)
                fail<Error>("--show-default measures nothing: it cannot be combined with --replay, --emit-lib, --json, "
                            "--records or --segments");
            const ScheduleParams d =
                p.kind == OpKind::Spmm
                    ? gspmm_default_schedule(p.graph, p.spmm, p.lhs_feat, p.rhs_feat, DType::F32, p.device)
                    : gsddmm_default_schedule(p.graph, p.sddmm, p.lhs_feat, p.rhs_feat, DType::F32, p.device);
            std::printf("graph         %s (%lld rows, %lld sources, %lld edges)\n", p.graph_name.c_str(),
                        static_cast<long long>(p.graph.num_dst()), static_cast<long long>(p.graph.num_src()),
                        static_cast<long long>(p.graph.num_edges()));
            std::printf("operator      %s, F = %lld, %s\n", p.op_name().c_str(), static_cast<long long>(a.op.feat),
                        a.target.c_str());
            std::printf("default       %s\n", d.str().c_str());
            return 0;
        }
        if (a.replay.empty()) p.prepare(a.seed);
        else p.plan_layout();
        const SearchMode mode = parse_search_mode(a.mode);
        // --model auto (the default): the model shipped for this problem's schedule.
        ModelChoice choice = choose_model(a.model_prefix, schedule_space(p).schedule,
                                          mode == SearchMode::Genetic, CostModel::available());
        const std::string &model_prefix = choice.prefix;
        std::optional<CostModel> model;
        if (!model_prefix.empty()) {
            try {
                model = CostModel::load(model_prefix);
            } catch (const Error &e) {
                // A model named on the command line must load; a shipped one that does not (a
                // corrupted install) is reported and ignored, never trusted.
                if (a.model_prefix != "auto") throw;
                std::fprintf(stderr, "gsparse-tune: warning: ignoring the shipped cost model: %s\n", e.what());
                choice.prefix.clear();
                choice.line = "none (the shipped model did not load; see the warning)";
            }
        }
        TuningCache cache(a.cache_file.empty() ? TuningCache::default_path() : a.cache_file);
        const size_t open_warnings = cache.warnings().size();
        for (const std::string &w : cache.warnings()) std::fprintf(stderr, "gsparse-tune: warning: %s\n", w.c_str());
        TuneOptions opt;
        opt.cache = &cache;
        opt.read_cache = !a.no_cache;
        opt.mode = mode;
        opt.budget = a.budget;
        opt.runs = a.runs;
        opt.cutoff = a.cutoff;
        opt.cutoff_slack_ms = a.cutoff_slack_ms;
        opt.compile_threads = a.threads;
        opt.seed = a.seed;
        opt.genetic.polish = a.polish;
        opt.progress = !a.quiet;
        // Ahead-of-time emission and recorded sweeps know the row schedules only.
        if (a.segments && (!a.replay.empty() || !a.emit_dir.empty()))
            fail<Error>("--segments cannot be combined with --replay or --emit-lib (g-SpMM by nonzeros is not emitted "
                        "ahead of time)");
        opt.segments = a.segments;
        if (!a.replay.empty()) {
            opt.cache = nullptr;
            opt.measure = replayed_measurements(a.replay, p);
        }
        if (model) {
            opt.rank = [&](const std::vector<ScheduleParams> &points) {
                for (const auto &q : points) {
                    if (model->knows_schedule(q.schedule)) continue;
                    std::string known;
                    for (const auto &k : model->report().schedules) known += (known.empty() ? "" : ", ") + k;
                    fail<Error>("cost model '", model_prefix, "' was trained on ", known, " points, not ",
                                q.schedule, ": pass a model of ", q.schedule, " (autotune/models/README.md) or none");
                }
                std::vector<std::vector<float>> features;
                for (const auto &q : points) features.push_back(candidate_features(p, q));
                return model->predict(features);
            };
        }
        std::optional<RecordAppender> records;
        if (!a.records_file.empty()) {
            if (a.resume && std::filesystem::exists(a.records_file)) {
                const auto earlier = read_records(a.records_file);
                const RecordedMeasurements lookup = recorded_measurements(earlier, p);
                opt.recorded = lookup;
                std::printf("resume        %zu of this problem's points have times in %s\n", lookup.size(),
                            a.records_file.c_str());
            }
            records.emplace(a.records_file);
            opt.on_measurement = [&](const Measurement &m) {
                if (!m.ok || m.recorded || !has_features(m.schedule.schedule)) return;
                records->append(measurement_record(p, m));
            };
        }
        if (!a.emit_dir.empty() && !std::regex_match(a.emit_name, std::regex("[A-Za-z_][A-Za-z0-9_]*")))
            fail<Error>("--emit-name '", a.emit_name, "' is not a C identifier");
        TuneResult r = tune(p, opt);
        const std::vector<std::string> cache_warnings = cache.warnings();
        for (size_t i = open_warnings; i < cache_warnings.size(); i++)
            std::fprintf(stderr, "gsparse-tune: warning: %s\n", cache_warnings[i].c_str());
        print_summary(r, r.from_cache ? std::string() : choice.line);
        if (!a.emit_dir.empty()) {
            EmittedKernel k;
            if (p.kind == OpKind::Sddmm) {
                SddmmKernelKey key;
                key.spec = p.sddmm;
                key.layout = p.layout;
                key.device = p.device;
                key.schedule = r.best.schedule;
                key.large_buffers = false;
                // Emitted g-SDDMM entry points take the COO in edge-id order: a destination-ordered
                // point is emitted in edge-id order, and the summary says so.
                if (key.schedule.get_or("groupByDst", 0) != 0) {
                    key.schedule.values["groupByDst"] = 0;
                    if (key.schedule.values.count("kSrcTile")) key.schedule.values["kSrcTile"] = 0;
                    std::printf("note          emitting %s: emitted kernels process edges in edge-id order "
                                "(groupByDst = 0)\n", key.schedule.str().c_str());
                }
                k = emit_sddmm_library(key, a.emit_dir, a.emit_name);
            } else {
                SpmmKernelKey key;
                key.spec = p.spmm;
                key.layout = p.layout;
                key.identity_edge_ids = spmm_identity_edge_ids(p.spmm, p.graph);
                key.device = p.device;
                key.schedule = r.best.schedule;
                // Emitted g-SpMM entry points take the CSR in row order: a source-tiled point is
                // emitted without tiles, and the summary says so.
                if (key.schedule.get_or("kSrcTile", 0) != 0) {
                    key.schedule.values["kSrcTile"] = 0;
                    std::printf("note          emitting %s: emitted kernels read rows in CSR order (kSrcTile = 0)\n",
                                key.schedule.str().c_str());
                }
                // A point on the relabeled graph is emitted in the same row order without the relabeling.
                if (runs_on_relabeled_graph(key.schedule)) {
                    key.schedule.values["rowBalance"] = 2;
                    std::printf("note          emitting %s: emitted kernels take the graph's own CSR (rowBalance = 2, "
                                "not relabeled)\n", key.schedule.str().c_str());
                }
                // Row tails need their table at run time: emitted with the same segments combined
                // through the partial buffer instead.
                if (key.schedule.get_or("rowTails", 0) != 0) {
                    key.schedule.values["rowTails"] = 0;
                    std::printf("note          emitting %s: emitted kernels combine row segments through a buffer "
                                "(rowTails = 0)\n", key.schedule.str().c_str());
                }
                k = emit_spmm_library(key, a.emit_dir, a.emit_name);
            }
            std::printf("emitted       %s, %s (gsparse_kernels::%s)\n", k.library.c_str(), k.wrapper_header.c_str(),
                        k.name.c_str());
        }
        if (!a.json_out.empty()) {
            nlohmann::json j = r.to_json();
            // The model that seeded the search: only the genetic search is seeded by one.
            if (!r.from_cache)
                j["model"] = model_prefix.empty() || mode != SearchMode::Genetic ? nlohmann::json()
                                                                                      : nlohmann::json(model_prefix);
            json_file << j.dump(2) << "\n";
            if (!json_file) fail<Error>("writing ", a.json_out, " failed");
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "gsparse-tune: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
