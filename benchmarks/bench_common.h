// Pieces shared by the benchmark executables (gsparse-bench-spmm, gsparse-bench-sddmm): schedule-point
// files, the graph selection (twins generated in-process, real graphs looked up in a folder), JSON
// helpers for timings and comparisons, and atomic output-file writes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "core/error.h"
#include "event_timer.h"
#include "graph/graph.h"
#include "schedules/schedule_params.h"

namespace gsparse::bench {

// --- Schedule points ------------------------------------------------------------------------------

struct SchedulePoint {
    std::optional<ScheduleParams> params;  ///< nullopt: the device's default schedule
    bool expert = false;                   ///< gpu_spmm's expert rules (the default before the learned selector)
    bool row_default = false;              ///< the default row schedule, without the segment gate ("default-rows")
    std::string label;
    std::set<int64_t> feats;               ///< empty: every F
    std::set<std::string> ops, graphs;     ///< empty: every op / graph

    std::string schedule_string() const {
        return params ? params->str() : std::string(expert ? "expert" : row_default ? "default-rows" : "default");
    }
    bool applies(const std::string &graph, int64_t feat, const std::string &op) const {
        return (feats.empty() || feats.count(feat)) && (ops.empty() || ops.count(op)) &&
               (graphs.empty() || graphs.count(graph));
    }
};

/// One item of a schedule-point file: a ScheduleParams JSON object ({"schedule": NAME, "params":
/// {...}}), a "NAME{k=v, ...}" string, "default" or "expert" (gpu_spmm's expert rules); objects may add "label" and the filters
/// "feats", "ops", "graphs". Throws gsparse::Error (or ScheduleError) for malformed items.
SchedulePoint parse_schedule_point(const nlohmann::json &item);

/// Reads a schedule-point file: a JSON list of items as above; {"points": [...]} is read as its list
/// and a gsparse-tune result as its "best" point.
std::vector<SchedulePoint> load_schedule_points(const std::string &path);

// --- Graphs ---------------------------------------------------------------------------------------

/// Which graphs a benchmark runs on and where it finds them.
struct GraphSelection {
    std::vector<std::string> graphs;  ///< twin names, real graph names, or graph file paths
    double scale = 1.0;               ///< twin scale
    std::string order = "both";       ///< twin node order: shuffled, community or both
    uint64_t twin_seed = 1;
    int threads = 0;                  ///< twin generator threads (0: all cores)
    std::string real_dir;             ///< empty: default_real_dir, then datasets/real of the working directory
    std::string default_real_dir;     ///< the repository's datasets/real (GSPARSE_REAL_GRAPHS_DIR), may be empty
    /// Twins' edge ids in random order (as for a graph built from an unsorted edge list) instead of
    /// in CSR order; the order label gets "+edge-ids".
    bool shuffle_edge_ids = false;
    /// Graph files' edges renumbered to their CSR positions (edge ids dropped), as the twins' are:
    /// edge weights by edge id then lie in CSR order, the one array cuSPARSE reads too; the order
    /// label gets "+positions".
    bool positions_as_edge_ids = false;
};

struct GraphCase {
    std::string name;
    std::string source;  ///< "twin", "real" or "file"
    std::string order;   ///< "shuffled", "community" or "file"
    double scale = 1.0;
    std::string path;    ///< the file of a real graph
    Graph graph;
    double load_s = 0;
};

/// The folders searched for real graphs, in order.
std::vector<std::string> real_dir_candidates(const GraphSelection &sel);

/// The file of a real graph NAME: NAME itself when it is an existing file, else NAME.{mtx,gcsr,el}
/// in the first folder that has it. Empty when none is found (searched lists the folders tried).
std::string find_real_graph(const GraphSelection &sel, const std::string &name, std::string *searched);

/// Generates or loads every selected graph in turn (twins in each selected order) and calls run on
/// it; a graph that is missing or fails to load goes to skipped(name, reason) instead. Messages go
/// to stdout. Exceptions of run propagate.
void for_each_graph(const GraphSelection &sel, const std::function<void(GraphCase &)> &run,
                    const std::function<void(const std::string &, const std::string &)> &skipped);

/// The graph selection of a benchmark's options (fields graphs, scale, order, twin_seed, threads and
/// real_dir); default_real_dir is the repository's datasets/real, compiled in.
template <typename Options>
GraphSelection graph_selection(const Options &a, const std::string &default_real_dir) {
    GraphSelection sel;
    sel.graphs = a.graphs;
    sel.scale = a.scale;
    sel.order = a.order;
    sel.twin_seed = a.twin_seed;
    sel.threads = a.threads;
    sel.real_dir = a.real_dir;
    sel.default_real_dir = default_real_dir;
    return sel;
}

/// The options both benchmarks read the same way, bound to the fields of those names: the graph
/// selection (graphs, scale, order, twin_seed, threads, real_dir), feats, timing (runs, warmup,
/// no_flush_l2, measure_copy_bw) and the outputs (json_out, md_out). Each benchmark adds its own.
template <typename Options>
void add_common_options(CLI::App &app, Options &a) {
    app.add_option("--graphs", a.graphs,
                   "twins (reddit, ogbn-proteins, ogbn-products) generated in-process, real graph names looked up "
                   "in --real-dir, or graph file paths")
        ->delimiter(',')
        ->capture_default_str();
    app.add_option("--scale", a.scale, "twin scale in (0, 1]")->check(CLI::Range(1e-9, 1.0))->capture_default_str();
    app.add_option("--order", a.order, "twin node order")
        ->check(CLI::IsMember({"shuffled", "community", "both"}))
        ->capture_default_str();
    app.add_option("--twin-seed", a.twin_seed, "twin generator seed (gsparse-data gen's default is 1)")->capture_default_str();
    app.add_option("--threads", a.threads, "twin generator threads (0: all cores)")->capture_default_str();
    app.add_option("--real-dir", a.real_dir,
                   "folder of real graphs (default: the repository's datasets/real, then datasets/real in the "
                   "working directory)");
    app.add_option("--feats", a.feats, "feature lengths F")->delimiter(',')->capture_default_str();
    app.add_option("--runs", a.runs, "timed runs per measurement (>= 10 for reported numbers)")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    app.add_option("--warmup", a.warmup, "warm-up runs per measurement")->check(CLI::Range(0, 100000))->capture_default_str();
    app.add_flag("--no-flush-l2", a.no_flush_l2, "do not flush L2 between runs (default: flush, for every competitor)");
    app.add_flag("--measure-copy-bw", a.measure_copy_bw, "time a 1 GiB device-to-device copy first");
    app.add_option("--json", a.json_out, "write the records and metadata as JSON to this file");
    app.add_option("--md", a.md_out, "write a markdown table to this file");
}

// --- Markdown reports -----------------------------------------------------------------------------

/// The check cell of a record's row: "ok", "FAIL" (a gsparse result failed its check) or "—".
std::string gsparse_check_cell(const nlohmann::json &record);

/// The errors of a run's records (the record's own and its competitors'), grouped by message, and
/// the report sections that list them and the skipped graphs.
class ErrorLog {
public:
    void add(const nlohmann::json &record);
    /// "## Skipped graphs" (from meta["skipped"]) and "## <heading>" sections; empty when neither has entries.
    std::string markdown(const nlohmann::json &meta, const std::string &heading) const;

private:
    std::map<std::string, std::vector<std::string>> cases_;  ///< error -> "graph/order F=.. op" cases
};

// --- The device side of a run ---------------------------------------------------------------------

/// An error after which a benchmark cannot go on (the CUDA context is lost).
class FatalError : public gsparse::Error {
public:
    using gsparse::Error::Error;
};

/// The device part of a benchmark's metadata: benchmark, device, device_info, date, timestamp, the
/// driver, runtime and cuSPARSE versions, and empty copy_bandwidth / skipped entries.
nlohmann::json device_metadata(const std::string &benchmark, const DeviceInfo &dev, const std::string &date);

/// Measures the device-to-device copy bandwidth with timer (runs: its timed runs, for the message),
/// prints it and records it as meta["copy_bandwidth"]; returns the read + write bytes per second, or
/// 0 when the measurement failed (meta then holds the error). Throws FatalError when the failure
/// lost the CUDA context.
double copy_bandwidth_pass(EventTimer &timer, int runs, nlohmann::json &meta);

// --- JSON and text helpers --------------------------------------------------------------------------

/// x, or null when x is not finite (JSON has no NaN).
nlohmann::json number_or_null(double x);

/// median/min/mean/max/times_ms plus compulsory_bytes_per_s and gathered_bytes_per_s of the byte model.
nlohmann::json timing_json(const TimingResult &t, const CaseBytes &bytes);

/// max_rel_err, max_abs_err, worst_index, mismatched_nonfinite, elements, tolerance, ok.
nlohmann::json comparison_json(const Comparison &c, double tolerance);

/// snprintf of one double.
std::string fmt(const char *format, double x);
/// "1.234" for a JSON number, "—" otherwise.
std::string fmt_ms(const nlohmann::json &v);
/// GB/s ("123") of a JSON bytes-per-second number, "—" otherwise.
std::string fmt_gbs(const nlohmann::json &v);

/// Throws gsparse::Error when path (if not empty) cannot be written: its folder is missing or it
/// is a directory.
void check_writable(const std::string &path);
/// Writes text to path + ".tmp", then renames it over path, so readers never see a partial file.
void write_file_atomically(const std::string &path, const std::string &text);

/// The command line as one string (argv joined by spaces).
std::string command_line(int argc, char **argv);

}  // namespace gsparse::bench
