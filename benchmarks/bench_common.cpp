// Schedule-point files, graph selection, JSON helpers and file writes shared by the benchmarks.
#include "bench_common.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "twin/twin.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace gsparse::bench {

// --- Schedule points ------------------------------------------------------------------------------

SchedulePoint parse_schedule_point(const json &item) {
    SchedulePoint p;
    if (item.is_string()) {
        const std::string text = item.get<std::string>();
        if (text == "expert") p.expert = true;
        else if (text == "default-rows") p.row_default = true;
        else if (text != "default") p.params = ScheduleParams::parse(text);
    } else if (item.is_object()) {
        const std::string name = item.value("schedule", std::string());
        const bool is_default = name == "default" || item.value("default", false);
        p.expert = name == "expert";
        p.row_default = name == "default-rows";
        if (!is_default && !p.expert && !p.row_default) p.params = ScheduleParams::from_json(item);
        if (item.contains("label")) p.label = item["label"].get<std::string>();
        if (item.contains("feats")) p.feats = item["feats"].get<std::set<int64_t>>();
        if (item.contains("ops")) p.ops = item["ops"].get<std::set<std::string>>();
        if (item.contains("graphs")) p.graphs = item["graphs"].get<std::set<std::string>>();
    } else {
        fail<Error>("an item must be an object or a string");
    }
    return p;
}

std::vector<SchedulePoint> load_schedule_points(const std::string &path) {
    std::ifstream in(path);
    if (!in) fail<Error>("cannot read the schedule file '", path, "'");
    json j;
    try {
        in >> j;
    } catch (const std::exception &e) {
        fail<Error>("schedule file '", path, "' is not valid JSON: ", e.what());
    }
    if (j.is_object() && j.contains("points")) j = j["points"];
    else if (j.is_object() && j.contains("best")) j = json::array({j["best"]});
    if (!j.is_array()) fail<Error>("schedule file '", path, "' must hold a JSON list of schedule points");
    std::vector<SchedulePoint> points;
    for (const auto &item : j) {
        try {
            points.push_back(parse_schedule_point(item));
        } catch (const std::exception &e) {
            fail<Error>("schedule file '", path, "': item ", item.dump(), ": ", e.what());
        }
    }
    if (points.empty()) fail<Error>("schedule file '", path, "' lists no schedule point");
    return points;
}

// --- Graphs ---------------------------------------------------------------------------------------

std::vector<std::string> real_dir_candidates(const GraphSelection &sel) {
    if (!sel.real_dir.empty()) return {sel.real_dir};
    std::vector<std::string> c;
    if (!sel.default_real_dir.empty()) c.push_back(sel.default_real_dir);
    c.push_back("datasets/real");
    return c;
}

std::string find_real_graph(const GraphSelection &sel, const std::string &name, std::string *searched) {
    if (fs::is_regular_file(name)) return name;
    std::string tried;
    for (const auto &dir : real_dir_candidates(sel)) {
        for (const char *ext : {".mtx", ".gcsr", ".el"}) {
            const fs::path p = fs::path(dir) / (name + ext);
            if (fs::is_regular_file(p)) return p.string();
        }
        tried += (tried.empty() ? "" : ", ") + dir;
    }
    if (searched) *searched = tried;
    return {};
}

void for_each_graph(const GraphSelection &sel, const std::function<void(GraphCase &)> &run,
                    const std::function<void(const std::string &, const std::string &)> &skipped) {
    const std::vector<std::string> twins = datasets::twin_names();
    std::vector<std::string> orders;
    if (sel.order == "both") orders = {"shuffled", "community"};
    else orders = {sel.order};
    for (const auto &name : sel.graphs) {
        if (std::find(twins.begin(), twins.end(), name) != twins.end()) {
            for (const auto &order : orders) {
                GraphCase gc;
                gc.name = name;
                gc.source = "twin";
                gc.order = order;
                gc.scale = sel.scale;
                std::printf("[%s/%s] generating the twin at scale %g...\n", name.c_str(), order.c_str(), sel.scale);
                std::fflush(stdout);
                const auto t0 = std::chrono::steady_clock::now();
                datasets::TwinOptions opt;
                opt.scale = sel.scale;
                opt.seed = sel.twin_seed;
                opt.order = datasets::parse_node_order(order);
                opt.threads = sel.threads;
                CSR csr = datasets::generate_twin(datasets::twin_spec(name), opt);
                if (sel.shuffle_edge_ids) {
                    csr.edge_ids.resize(static_cast<size_t>(csr.nnz()));
                    std::iota(csr.edge_ids.begin(), csr.edge_ids.end(), index_t{0});
                    std::shuffle(csr.edge_ids.begin(), csr.edge_ids.end(), std::mt19937_64(sel.twin_seed + 99));
                    gc.order += "+edge-ids";
                }
                gc.graph = Graph::from_csr(std::move(csr));
                gc.load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                run(gc);
            }
            continue;
        }
        std::string searched;
        const std::string path = find_real_graph(sel, name, &searched);
        if (path.empty()) {
            std::printf("[%s] skipped: not a twin name and no %s.{mtx,gcsr,el} in %s\n", name.c_str(), name.c_str(),
                        searched.c_str());
            skipped(name, "file not found in " + searched);
            continue;
        }
        GraphCase gc;
        gc.name = fs::is_regular_file(name) ? fs::path(name).stem().string() : name;
        gc.source = fs::is_regular_file(name) ? "file" : "real";
        gc.order = "file";
        gc.path = path;
        std::printf("[%s] loading %s...\n", gc.name.c_str(), path.c_str());
        std::fflush(stdout);
        const auto t0 = std::chrono::steady_clock::now();
        try {
            gc.graph = Graph::load(path);
        } catch (const gsparse::Error &e) {
            std::printf("[%s] skipped: %s\n", gc.name.c_str(), e.what());
            skipped(gc.name, e.what());
            continue;
        }
        if (sel.positions_as_edge_ids && !gc.graph.csr().identity_edge_ids()) {
            CSR csr = gc.graph.csr();
            csr.edge_ids.clear();
            gc.graph = Graph::from_csr(std::move(csr));
            gc.order += "+positions";
        }
        gc.load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        run(gc);
    }
}

// --- JSON and text helpers --------------------------------------------------------------------------

json number_or_null(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

json timing_json(const TimingResult &t, const CaseBytes &bytes) {
    json j;
    j["median_ms"] = t.median_ms;
    j["min_ms"] = t.min_ms;
    j["mean_ms"] = t.mean_ms;
    j["max_ms"] = t.max_ms;
    j["times_ms"] = t.times_ms;
    const double s = t.median_ms * 1e-3;
    j["compulsory_bytes_per_s"] = s > 0 ? number_or_null(bytes.compulsory / s) : json(nullptr);
    j["gathered_bytes_per_s"] = s > 0 ? number_or_null(bytes.gathered / s) : json(nullptr);
    return j;
}

json comparison_json(const Comparison &c, double tol) {
    return {{"max_rel_err", number_or_null(c.max_rel_err)},
            {"max_abs_err", number_or_null(c.max_abs_err)},
            {"worst_index", c.worst_index},
            {"mismatched_nonfinite", c.mismatched_nonfinite},
            {"elements", c.elements},
            {"tolerance", tol},
            {"ok", c.ok(tol)}};
}

std::string fmt(const char *format, double x) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, x);
    return buf;
}

std::string fmt_ms(const json &v) { return v.is_number() ? fmt("%.3f", v.get<double>()) : "—"; }
std::string fmt_gbs(const json &v) { return v.is_number() ? fmt("%.0f", v.get<double>() / 1e9) : "—"; }

void check_writable(const std::string &path) {
    if (path.empty()) return;
    const fs::path p(path);
    if (p.has_parent_path() && !fs::is_directory(p.parent_path()))
        fail<Error>("cannot write '", path, "': the folder ", p.parent_path().string(), " does not exist");
    if (fs::is_directory(p)) fail<Error>("cannot write '", path, "': it is a directory");
}

void write_file_atomically(const std::string &path, const std::string &text) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) fail<Error>("cannot write '", tmp, "'");
        out << text;
        if (!out) fail<Error>("writing '", tmp, "' failed");
    }
    fs::rename(tmp, path);
}

std::string command_line(int argc, char **argv) {
    std::string cmd;
    for (int i = 0; i < argc; ++i) cmd += (i ? " " : "") + std::string(argv[i]);
    return cmd;
}

json device_metadata(const std::string &benchmark, const DeviceInfo &dev, const std::string &date) {
    json m;
    m["benchmark"] = benchmark;
    m["device"] = dev.name;
    m["device_info"] = {{"index", dev.index},
                        {"name", dev.name},
                        {"compute_capability", std::to_string(dev.cc_major) + "." + std::to_string(dev.cc_minor)},
                        {"multiprocessors", dev.multiprocessors},
                        {"l2_bytes", dev.l2_bytes},
                        {"global_mem_bytes", dev.global_mem_bytes}};
    m["date"] = date;
    m["timestamp"] = utc_timestamp();
    m["driver_version"] = cuda_version_string(dev.driver_version);
    m["runtime_version"] = cuda_version_string(dev.runtime_version);
    m["cusparse_version"] = dev.cusparse_version;
    m["copy_bandwidth"] = nullptr;
    m["skipped"] = json::array();
    return m;
}

double copy_bandwidth_pass(EventTimer &timer, int runs, json &meta) {
    std::printf("measuring device-to-device copy bandwidth (1 GiB)...\n");
    std::fflush(stdout);
    try {
        const CopyBandwidth bw = measure_copy_bandwidth(timer);
        meta["copy_bandwidth"] = {{"bytes", bw.bytes},
                                  {"median_ms", bw.timing.median_ms},
                                  {"times_ms", bw.timing.times_ms},
                                  {"read_write_bytes_per_s", bw.read_write_bytes_per_s},
                                  {"note", "cudaMemcpyAsync device to device; counts bytes read plus bytes written"}};
        std::printf("copy bandwidth %.2f TB/s (read + write, median of %d)\n", bw.read_write_bytes_per_s / 1e12, runs);
        return bw.read_write_bytes_per_s;
    } catch (const std::exception &e) {
        meta["copy_bandwidth"] = {{"error", e.what()}};
        std::printf("copy bandwidth: failed: %s\n", e.what());
        if (!cuda_context_healthy()) throw FatalError(std::string("CUDA context lost: ") + e.what());
        return 0;
    }
}

// --- Markdown reports -----------------------------------------------------------------------------

std::string gsparse_check_cell(const nlohmann::json &record) {
    std::string check = "—";
    for (const auto &e : record["results"])
        if (e.value("competitor", "") == "gsparse" && e.contains("check")) {
            check = e["check"].value("ok", false) ? "ok" : "FAIL";
            if (check == "FAIL") break;
        }
    return check;
}

void ErrorLog::add(const nlohmann::json &r) {
    const std::string where = r.value("graph", "") + "/" + r.value("order", "") + " F=" + std::to_string(r.value("F", 0)) +
                              " " + r.value("op", "");
    if (r.contains("error") && r["error"].is_string()) cases_[r["error"].get<std::string>()].push_back(where);
    for (const auto &e : r["results"])
        if (e.contains("error") && e["error"].is_string())
            cases_[e.value("competitor", "?") + ": " + e["error"].get<std::string>()].push_back(where);
}

std::string ErrorLog::markdown(const nlohmann::json &meta, const std::string &heading) const {
    std::ostringstream md;
    if (meta.contains("skipped") && !meta["skipped"].empty()) {
        md << "\n## Skipped graphs\n\n";
        for (const auto &s : meta["skipped"]) md << "- " << s.value("graph", "") << ": " << s.value("reason", "") << "\n";
    }
    if (!cases_.empty()) {
        md << "\n## " << heading << "\n\n";
        for (const auto &[err, cases] : cases_) {
            md << "- " << err << " — " << cases.size() << " case(s): " << cases.front();
            if (cases.size() > 1) md << ", ..., " << cases.back();
            md << "\n";
        }
    }
    return md.str();
}

}  // namespace gsparse::bench

