// Records from the default selector's sweep data (autotune/sweep_data.h). The file:
//   {"device": "cuda:<GPU>", "op": "spmm copy_u_sum",
//    "graphs": {"<name>": {"split": "train", "family": "chung-lu",
//                          "stats": {"num_dst", "num_src", "edges", "max_in_degree", "in_degree_cov",
//                                    "empty_rows", "max_out_degree", "out_degree_cov", "empty_cols", ...}}},
//    "cases": [{"graph": "<name>", "feat": F, "times": {"<point>": median ms, ...}}, ...]}
// (the statistics are `gsparse-data stats --json`'s).
#include "autotune/sweep_data.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "autotune/features.h"
#include "core/error.h"
#include "ops/broadcast.h"
#include "schedules/schedule.h"

namespace gsparse::autotune {

namespace {

const nlohmann::json &member(const nlohmann::json &j, const char *name, const std::string &where) {
    if (!j.is_object()) fail<Error>(where, " is not a JSON object");
    auto it = j.find(name);
    if (it == j.end()) fail<Error>(where, " has no field '", name, "'");
    return *it;
}

double number(const nlohmann::json &j, const char *name, const std::string &where) {
    const auto &v = member(j, name, where);
    if (!v.is_number()) fail<Error>(where, ": '", name, "' is not a number");
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < 0) fail<Error>(where, ": '", name, "' = ", x, " is not a finite count >= 0");
    return x;
}

std::string text(const nlohmann::json &j, const char *name, const std::string &where) {
    const auto &v = member(j, name, where);
    if (!v.is_string()) fail<Error>(where, ": '", name, "' is not a string");
    return v.get<std::string>();
}

/// The g-SpMM operator of DGL's name ("copy_u_sum", "u_mul_e_sum", ...).
SpmmSpec spmm_of(const std::string &name, const std::string &where) {
    for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::CopyLhs, BinaryOp::CopyRhs})
        for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min}) {
            SpmmSpec s{op, r};
            if (s.name() == name) return s;
        }
    fail<Error>(where, ": unknown g-SpMM operator '", name, "'");
}

GraphStats stats_of(const nlohmann::json &s, const std::string &where) {
    GraphStats g;
    g.num_rows = static_cast<int64_t>(number(s, "num_dst", where));
    g.num_cols = static_cast<int64_t>(number(s, "num_src", where));
    g.nnz = static_cast<int64_t>(number(s, "edges", where));
    g.avg_row_length = g.num_rows ? static_cast<double>(g.nnz) / static_cast<double>(g.num_rows) : 0.0;
    g.max_row_length = static_cast<int64_t>(number(s, "max_in_degree", where));
    g.empty_rows = static_cast<int64_t>(number(s, "empty_rows", where));
    g.row_length_cov = number(s, "in_degree_cov", where);
    g.max_col_length = static_cast<int64_t>(number(s, "max_out_degree", where));
    g.empty_cols = static_cast<int64_t>(number(s, "empty_cols", where));
    g.col_length_cov = number(s, "out_degree_cov", where);
    if (g.max_row_length > g.nnz || g.empty_rows > g.num_rows || g.empty_cols > g.num_cols)
        fail<Error>(where, ": inconsistent statistics (max_in_degree ", g.max_row_length, ", edges ", g.nnz,
                    ", empty_rows ", g.empty_rows, " of ", g.num_rows, ", empty_cols ", g.empty_cols, " of ",
                    g.num_cols, ")");
    return g;
}

/// FNV-1a of the graph's name: records of one graph and feature length form one problem.
uint64_t fingerprint_of(const std::string &name) {
    uint64_t h = 14695981039346656037ull;
    for (unsigned char c : name) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

}  // namespace

std::vector<MeasurementRecord> records_from_sweep_data(const std::string &path, std::vector<SweepDataGraph> *graphs) {
    nlohmann::json data;
    try {
        data = nlohmann::json::parse(read_possibly_compressed(path));
    } catch (const nlohmann::json::exception &e) {
        fail<Error>(path, ": malformed JSON: ", e.what());
    }
    const std::string device = text(data, "device", path);
    const std::string op = text(data, "op", path);
    if (op.rfind("spmm ", 0) != 0) fail<Error>(path, ": operator '", op, "' is not a g-SpMM operator ('spmm <name>')");
    const SpmmSpec spec = spmm_of(op.substr(5), path);

    const auto &graph_table = member(data, "graphs", path);
    if (!graph_table.is_object()) fail<Error>(path, ": 'graphs' is not an object");
    std::map<std::string, GraphStats> stats;
    for (const auto &[name, g] : graph_table.items()) {
        const std::string where = path + ": graph '" + name + "'";
        stats[name] = stats_of(member(g, "stats", where), where);
        if (graphs) {
            graphs->push_back({name, g.contains("split") ? text(g, "split", where) : "",
                               g.contains("family") ? text(g, "family", where) : ""});
        }
    }

    const auto &cases = member(data, "cases", path);
    if (!cases.is_array()) fail<Error>(path, ": 'cases' is not a list");
    std::vector<MeasurementRecord> records;
    for (size_t i = 0; i < cases.size(); i++) {
        const std::string where = path + ": case " + std::to_string(i + 1);
        const auto &c = cases[i];
        const std::string graph = text(c, "graph", where);
        auto st = stats.find(graph);
        if (st == stats.end()) fail<Error>(where, ": graph '", graph, "' is not in 'graphs'");
        const double f = number(c, "feat", where);
        if (f < 1 || f != std::floor(f)) fail<Error>(where, ": 'feat' = ", f, " is not a feature length >= 1");
        const auto feat = static_cast<int64_t>(f);
        const Problem problem = spmm_problem(spec, plan_features(spec.op, {feat}, {feat}), st->second);
        const auto &times = member(c, "times", where);
        if (!times.is_object()) fail<Error>(where, ": 'times' is not an object");
        for (const auto &[point, t] : times.items()) {
            if (!t.is_number() || !std::isfinite(t.get<double>()) || t.get<double>() <= 0)
                fail<Error>(where, ": the time of ", point, " is not a positive number");
            MeasurementRecord r;
            r.schedule = ScheduleParams::parse(point);
            r.features = candidate_features(problem, true, r.schedule);
            r.device = device;
            r.op = op;
            r.graph = graph;
            r.graph_fingerprint = fingerprint_of(graph);
            r.feat = feat;
            r.time_ms = t.get<double>();
            records.push_back(std::move(r));
        }
    }
    return records;
}

}  // namespace gsparse::autotune
