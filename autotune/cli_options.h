// Command-line options that gsparse-tune and gsparse-sweep share: the operator and its feature
// lengths, the dataset twin a problem runs on, and the measurement cutoff.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "autotune/tuning_problem.h"
#include "graph/graph.h"

namespace gsparse::autotune {

struct OperatorArgs {
    std::string op = "spmm", binary = "copy_lhs", reduce = "sum", lhs_target = "u", rhs_target = "v";
    int64_t feat = 32, edge_feat = 0;
};

/// --op, --binary, --reduce, --lhs-target, --rhs-target, --feat and --edge-feat.
void add_operator_options(CLI::App &app, OperatorArgs &a);
/// The problem's operator and operand feature shapes from the options; throws Error for an operator
/// that does not exist (e.g. dot in g-SpMM).
void set_operator(TuningProblem &p, const OperatorArgs &a);

struct TwinArgs {
    double scale = 0.01;
    uint64_t seed = 1;
    std::string order = "shuffled";
};

/// --scale, --graph-seed and --order (returned, for the caller's excludes()).
std::vector<CLI::Option *> add_twin_options(CLI::App &app, TwinArgs &a);
/// The twin `name` (datasets::twin_names()), and its name in results and records:
/// "reddit twin (scale 0.01, shuffled ids)".
Graph make_twin(const std::string &name, const TwinArgs &a, std::string &graph_name);

/// --cutoff and --cutoff-slack (TuneOptions::cutoff, cutoff_slack_ms), with the caller's defaults
/// in `factor` and `slack_ms`; `what` names a measured thing in the help ("candidate", "point").
void add_cutoff_options(CLI::App &app, double &factor, double &slack_ms, const std::string &what);

}  // namespace gsparse::autotune
