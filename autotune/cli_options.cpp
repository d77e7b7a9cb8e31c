#include "autotune/cli_options.h"

#include "ops/op_spec.h"
#include "twin/twin.h"

namespace gsparse::autotune {

void add_operator_options(CLI::App &app, OperatorArgs &a) {
    app.add_option("--op", a.op, "operator")->check(CLI::IsMember({"spmm", "sddmm"}));
    app.add_option("--binary", a.binary, "binary op: add sub mul div dot copy_lhs copy_rhs")
        ->check(CLI::IsMember({"add", "sub", "mul", "div", "dot", "copy_lhs", "copy_rhs", "copy_u", "copy_e"}));
    app.add_option("--reduce", a.reduce, "reduce op of g-SpMM")->check(CLI::IsMember({"sum", "mean", "max", "min"}));
    app.add_option("--lhs-target", a.lhs_target, "g-SDDMM lhs operand: u, v or e")->check(CLI::IsMember({"u", "v", "e"}));
    app.add_option("--rhs-target", a.rhs_target, "g-SDDMM rhs operand: u, v or e")->check(CLI::IsMember({"u", "v", "e"}));
    app.add_option("--feat", a.feat, "feature length F")->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
    app.add_option("--edge-feat", a.edge_feat, "feature length of edge operands (default F; 1 = a scalar per edge)")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
}

void set_operator(TuningProblem &p, const OperatorArgs &a) {
    const int64_t ef = a.edge_feat ? a.edge_feat : a.feat;
    if (a.op == "spmm") {
        p.kind = OpKind::Spmm;
        p.spmm = {parse_binary_op(a.binary), parse_reduce_op(a.reduce)};
        check_spmm_spec(p.spmm);
        p.lhs_feat = {a.feat};
        p.rhs_feat = {ef};
    } else {
        p.kind = OpKind::Sddmm;
        p.sddmm = {parse_binary_op(a.binary), parse_target(a.lhs_target), parse_target(a.rhs_target)};
        p.lhs_feat = {p.sddmm.lhs == OperandTarget::Edge ? ef : a.feat};
        p.rhs_feat = {p.sddmm.rhs == OperandTarget::Edge ? ef : a.feat};
    }
}

std::vector<CLI::Option *> add_twin_options(CLI::App &app, TwinArgs &a) {
    return {app.add_option("--scale", a.scale, "scale of the twin (0, 1]")->check(CLI::Range(1e-6, 1.0)),
            app.add_option("--graph-seed", a.seed, "seed of the twin generator"),
            app.add_option("--order", a.order, "node id order of the twin")->check(CLI::IsMember({"shuffled", "community"}))};
}

Graph make_twin(const std::string &name, const TwinArgs &a, std::string &graph_name) {
    datasets::TwinOptions opt;
    opt.scale = a.scale;
    opt.seed = a.seed;
    opt.order = datasets::parse_node_order(a.order);
    graph_name = name + " twin (scale " + CLI::detail::to_string(a.scale) + ", " + a.order + " ids)";
    return Graph::from_csr(datasets::generate_twin(datasets::twin_spec(name), opt));
}

void add_cutoff_options(CLI::App &app, double &factor, double &slack_ms, const std::string &what) {
    app.add_option("--cutoff", factor,
                   "time a " + what + " once only when its first run is slower than CUTOFF x the fastest so far "
                   "plus --cutoff-slack (0: time every " + what + " fully)")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1000.0));
    app.add_option("--cutoff-slack", slack_ms, "milliseconds added to the cutoff's limit (see --cutoff)")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1e6));
}

}  // namespace gsparse::autotune
