// gsparse-sweep: exhaustive sweeps of one operator and feature length over several dataset twins in
// one process, for evaluating the tuner (benchmarks/run_tune_eval.sh).
//
//   gsparse-sweep --datasets reddit,ogbn-proteins,ogbn-products --feat 32 --target cuda --out-dir DIR
//
// Every valid point of each twin's search space is measured (gsparse-tune --mode exhaustive). The
// kernels do not depend on the graph, so the points go in chunks that are compiled (and, on the
// GPU, loaded) once and measured on every twin (sweep.h): a sweep of three twins costs about one
// sweep's compiles, and one cut short leaves every twin at the same point. For each twin it
// writes DIR/<op>-<twin>-F<F>-exhaustive.json (as gsparse-tune --json) and appends every measurement
// to DIR/<op>-<twin>-F<F>-exhaustive.records.jsonl as it is taken; --resume reuses the times those
// records hold, so a sweep cut short continues where it stopped. --time-limit stops it between chunks
// (its results then say "complete": false and how many points are left) for machines lent by the hour.
//
// --graphs FILE,... sweeps graph files (.gcsr, .mtx, edge lists; named by their file stem) instead
// of, or beside, the twins: the graph zoo (`gsparse-data zoo gen`).
//
// --points FILE and --sample N make a candidate sweep: only the listed points (a JSON list of
// schedule points, as printed by ScheduleParams::str() or as objects; points a problem's space does
// not hold are ignored) and a deterministic sample of N of the other valid points (the same points
// on every graph whose space holds them, chosen by a hash of the point and --sample-seed) are
// measured, plus the expert default. The selector of graph-aware defaults learns from such sweeps
// (autotune/selector/).
//
// --screen RECORDS makes a screened sweep: the records of an earlier sweep of the same twins at another
// feature length (usually the one below) leave out the points that were slower there than
// --screen-factor x the best (sweep.h, screen_by_records). Its results count them ("screened_points")
// and say which records screened them ("screen"); their best is the best of the points measured. A
// later sweep without --screen, with --resume, measures what the screen left out.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "autotune/cli_options.h"
#include "autotune/features.h"
#include "autotune/records.h"
#include "autotune/search_space.h"
#include "autotune/replay.h"
#include "autotune/sweep.h"
#include "autotune/tuner.h"
#include "core/error.h"
#include "twin/twin.h"

using namespace gsparse;
using namespace gsparse::autotune;

namespace {

struct Args {
    std::string datasets, graphs, target = "cuda", out_dir, screen, points;
    size_t sample = 0;
    uint64_t sample_seed = 1;
    TwinArgs twin{1.0};
    OperatorArgs op;
    // The evaluation sweeps' cutoff (1.5x, no slack), not gsparse-tune's.
    double cutoff = 1.5, cutoff_slack_ms = 0, time_limit_s = 0, screen_factor = 3;
    uint64_t seed = 1;
    int runs = 5, threads = 0;
    bool resume = false, quiet = false;
};

std::vector<std::string> split_list(const std::string &list, const char *option) {
    std::vector<std::string> out;
    if (list.empty()) return out;
    std::stringstream in(list);
    for (std::string item; std::getline(in, item, ',');) {
        if (item.empty()) fail<Error>(option, " '", list, "' has an empty name");
        out.push_back(item);
    }
    return out;
}

/// The schedule points of a --points file: a JSON list of strings ("gpu_spmm{kMTile=4, ...}") or
/// point objects. Throws Error naming the file and the item.
std::set<ScheduleParams> read_points(const std::string &path) {
    std::ifstream in(path);
    if (!in) fail<Error>("cannot read the points file '", path, "'");
    nlohmann::json j;
    try {
        in >> j;
    } catch (const std::exception &e) {
        fail<Error>("points file '", path, "' is not valid JSON: ", e.what());
    }
    if (!j.is_array()) fail<Error>("points file '", path, "' must hold a JSON list of schedule points");
    std::set<ScheduleParams> points;
    for (const auto &item : j) {
        try {
            points.insert(item.is_string() ? ScheduleParams::parse(item.get<std::string>())
                                           : ScheduleParams::from_json(item));
        } catch (const std::exception &e) {
            fail<Error>("points file '", path, "': item ", item.dump(), ": ", e.what());
        }
    }
    return points;
}

/// A 64-bit mix of a point's text and a seed (FNV-1a, then splitmix64's finaliser): the sample of a
/// candidate sweep is the same on every graph and machine.
uint64_t point_hash(const ScheduleParams &p, uint64_t seed) {
    uint64_t h = 1469598103934665603ull ^ seed;
    for (unsigned char c : p.str()) h = (h ^ c) * 1099511628211ull;
    h ^= h >> 30, h *= 0xbf58476d1ce4e5b9ull, h ^= h >> 27, h *= 0x94d049bb133111ebull, h ^= h >> 31;
    return h;
}

/// The candidates of a candidate sweep on one problem: the listed points and the `sample` valid
/// points of smallest hash. Returns the predicate that screens everything else out.
std::function<bool(const ScheduleParams &)> candidate_screen(const TuningProblem &p,
                                                             const std::set<ScheduleParams> &listed, size_t sample,
                                                             uint64_t seed) {
    const SearchSpace space = build_search_space(p);
    std::set<ScheduleParams> keep;
    for (const ScheduleParams &q : listed) keep.insert(space.canonical(space.space.complete(q)));
    std::vector<std::pair<uint64_t, const ScheduleParams *>> ranked;
    for (const ScheduleParams &q : space.valid)
        if (!keep.count(q)) ranked.emplace_back(point_hash(q, seed), &q);
    std::sort(ranked.begin(), ranked.end());
    for (size_t i = 0; i < std::min(sample, ranked.size()); i++) keep.insert(*ranked[i].second);
    return [keep = std::move(keep)](const ScheduleParams &q) { return !keep.count(q); };
}

}  // namespace

int main(int argc, char **argv) {
    Args a;
    CLI::App app{"gsparse-sweep: exhaustive sweeps of several dataset twins, each kernel compiled once"};
    app.set_version_flag("--version", "gsparse-sweep 0.1.0");
    auto *datasets = app.add_option("--datasets", a.datasets, "comma-separated twins, e.g. reddit,ogbn-proteins,ogbn-products");
    auto *graphs = app.add_option("--graphs", a.graphs, "comma-separated graph files (.gcsr, .mtx, edge lists), named by their stem");
    app.add_option("--points", a.points, "JSON list of schedule points: measure only these (and --sample, the default)")
        ->check(CLI::ExistingFile);
    app.add_option("--sample", a.sample, "with --points or alone: also measure this many other valid points, a "
                                         "deterministic sample (see --sample-seed)")
        ->check(CLI::Range(size_t(1), size_t(1) << 40));
    app.add_option("--sample-seed", a.sample_seed, "seed of --sample's choice of points")->capture_default_str();
    add_twin_options(app, a.twin);
    add_operator_options(app, a.op);
    app.add_option("--target", a.target, "device")->check(CLI::IsMember({"cpu", "cuda"}));
    app.add_option("--runs", a.runs, "timed runs per point (after one warm-up)")->check(CLI::Range(1, 10000));
    add_cutoff_options(app, a.cutoff, a.cutoff_slack_ms, "point");
    app.add_option("--threads", a.threads, "kernels compiled in parallel (0: one per hardware thread)")
        ->check(CLI::Range(0, 1024));
    app.add_option("--seed", a.seed, "seed of the problems' random feature values");
    app.add_option("--out-dir", a.out_dir, "folder of the results and records")->required();
    app.add_flag("--resume", a.resume, "reuse the times the records in --out-dir hold");
    app.add_option("--time-limit", a.time_limit_s,
                   "start no chunk of points after this many seconds (0: none); the results are then "
                   "marked incomplete and --resume continues")
        ->check(CLI::Range(0.0, 1e9));
    app.add_option("--screen", a.screen,
                   "records of an earlier sweep of the same twins at another feature length: leave out the "
                   "points slower there than --screen-factor x the best")
        ->check(CLI::ExistingFile);
    app.add_option("--screen-factor", a.screen_factor, "see --screen")->capture_default_str()->check(CLI::Range(1.0, 1000.0));
    app.add_flag("--quiet", a.quiet, "no progress bar");
    CLI11_PARSE(app, argc, argv);
    if (datasets->count() == 0 && graphs->count() == 0) {
        std::fprintf(stderr, "gsparse-sweep: error: give --datasets, --graphs or both\n");
        return 2;
    }

    try {
        std::vector<std::string> names = split_list(a.datasets, "--datasets");
        const auto &known = datasets::twin_names();
        for (const auto &n : names)
            if (std::find(known.begin(), known.end(), n) == known.end()) fail<Error>("unknown dataset twin '", n, "'");
        const std::vector<std::string> files = split_list(a.graphs, "--graphs");
        for (const auto &f : files) {
            if (!std::filesystem::is_regular_file(f)) fail<Error>("--graphs: no graph file '", f, "'");
            const std::string stem = std::filesystem::path(f).stem().string();
            if (std::find(names.begin(), names.end(), stem) != names.end())
                fail<Error>("two graphs of the sweep are named '", stem, "'");
            names.push_back(stem);
        }
        if (names.empty()) fail<Error>("no graph to sweep");
        const size_t num_twins = names.size() - files.size();
        std::filesystem::create_directories(a.out_dir);
        // Every graph's problem first (all of them stay in memory for the sweep).
        std::vector<std::unique_ptr<TuningProblem>> problems;
        std::vector<std::string> bases;
        for (size_t i = 0; i < names.size(); i++) {
            const std::string &name = names[i];
            auto p = std::make_unique<TuningProblem>();
            p->device = a.target == "cuda" ? Device::CUDA : Device::CPU;
            if (i < num_twins) {
                p->graph = make_twin(name, a.twin, p->graph_name);
            } else {
                p->graph = Graph::load(files[i - num_twins]);
                p->graph_name = name;
            }
            set_operator(*p, a.op);
            p->prepare(a.seed);
            bases.push_back(a.out_dir + "/" + a.op.op + "-" + name + "-F" + std::to_string(a.op.feat) +
                            (a.points.empty() && a.sample == 0 ? "-exhaustive" : "-candidates"));
            problems.push_back(std::move(p));
        }
        std::set<ScheduleParams> listed;
        if (!a.points.empty()) listed = read_points(a.points);
        std::vector<MeasurementRecord> screen_records;
        if (!a.screen.empty()) screen_records = read_records(a.screen);
        std::vector<nlohmann::json> screens(problems.size());
        std::vector<std::unique_ptr<RecordAppender>> records;
        std::vector<SweepProblem> sweep;
        for (size_t i = 0; i < problems.size(); i++) {
            TuningProblem &p = *problems[i];
            const std::string path = bases[i] + ".records.jsonl";
            SweepProblem sp;
            sp.problem = &p;
            if (a.resume && std::filesystem::exists(path)) sp.recorded = recorded_measurements(read_records(path), p);
            if (!a.screen.empty()) {
                SweepScreen screen = screen_by_records(screen_records, p, a.screen_factor);
                screens[i] = {{"records", a.screen}, {"feat", screen.feat}, {"factor", a.screen_factor},
                              {"recorded_points", screen.recorded}, {"best_ms", screen.best_ms}};
                sp.screened = std::move(screen.screened);
            }
            if (!a.points.empty() || a.sample > 0) {
                auto outside = candidate_screen(p, listed, a.sample, a.sample_seed);
                if (sp.screened)
                    sp.screened = [outside, by_records = sp.screened](const ScheduleParams &q) {
                        return outside(q) || by_records(q);
                    };
                else
                    sp.screened = std::move(outside);
            }
            records.push_back(std::make_unique<RecordAppender>(path));
            RecordAppender &out = *records.back();
            sp.on_measurement = [&p, &out](const Measurement &m) {
                if (m.ok && has_features(m.schedule.schedule)) out.append(measurement_record(p, m));
            };
            sweep.push_back(std::move(sp));
        }
        TuneOptions opt;
        opt.runs = a.runs;
        opt.cutoff = a.cutoff;
        opt.cutoff_slack_ms = a.cutoff_slack_ms;
        opt.compile_threads = a.threads;
        opt.progress = !a.quiet;
        const auto t0 = std::chrono::steady_clock::now();
        const std::vector<TuneResult> results = sweep_together(sweep, opt, a.time_limit_s);
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        for (size_t i = 0; i < results.size(); i++) {
            const TuneResult &r = results[i];
            nlohmann::json result = r.to_json();
            if (!screens[i].is_null()) result["screen"] = screens[i];
            std::ofstream json(bases[i] + ".json");
            json << result.dump(2) << "\n";
            if (!json) fail<Error>("writing ", bases[i], ".json failed");
            if (r.unmeasured > 0)
                std::printf("%-16s F=%lld  %zu of %zu kernels measured (stopped at the time limit), best so far "
                            "%.3f ms, default %.3f ms\n",
                            names[i].c_str(), static_cast<long long>(a.op.feat), r.valid_size - r.unmeasured,
                            r.valid_size, r.best.mean_ms, r.expert_default.mean_ms);
            else if (r.screened > 0 && screens[i].is_null())
                std::printf("%-16s F=%lld  %zu candidates of %zu kernels measured, best %.3f ms, default %.3f ms\n",
                            names[i].c_str(), static_cast<long long>(a.op.feat), r.valid_size - r.screened, r.valid_size,
                            r.best.mean_ms, r.expert_default.mean_ms);
            else if (r.screened > 0)
                std::printf("%-16s F=%lld  %zu of %zu kernels measured (%zu screened out by F=%lld), best %.3f ms, "
                            "default %.3f ms\n",
                            names[i].c_str(), static_cast<long long>(a.op.feat), r.valid_size - r.screened, r.valid_size,
                            r.screened, static_cast<long long>(screens[i].value("feat", int64_t{0})), r.best.mean_ms,
                            r.expert_default.mean_ms);
            else
                std::printf("%-16s F=%lld  %zu kernels (%zu aliases left out), best %.3f ms, default %.3f ms\n",
                            names[i].c_str(), static_cast<long long>(a.op.feat), r.valid_size, r.alias_size,
                            r.best.mean_ms, r.expert_default.mean_ms);
        }
        std::printf("sweep         %zu graphs, %zu kernels compiled, %.1f s\n", results.size(),
                    results.front().kernels_compiled, wall);
        if (std::any_of(results.begin(), results.end(), [](const TuneResult &r) { return r.unmeasured > 0; }))
            std::printf("incomplete: run again with --resume to measure the rest\n");
    } catch (const std::exception &e) {
        std::fprintf(stderr, "gsparse-sweep: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
