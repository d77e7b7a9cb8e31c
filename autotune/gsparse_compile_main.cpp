// gsparse-compile: emits a g-SpMM or g-SDDMM kernel for a given schedule as a static library plus
// headers that an application links (no JIT, no tuner at run time), for the CPU or (--target cuda)
// CUDA.
//
//   gsparse-compile --binary mul --reduce sum --feat 64 --edge-feat 1
//       --schedule "cpu_spmm{rows_per_task=16, vector_width=8}" --out kernels --name gcn_aggregate
//   gsparse-compile --target cuda --binary mul --reduce sum --feat 64 --edge-feat 1 --out kernels --name agg
//   gsparse-compile --op sddmm --binary dot --lhs-target u --rhs-target v --feat 64 --out kernels --name score
//   gsparse-compile --plugin libmy_programs.so --program weighted_max --feat 8 --out kernels --name weighted_max
//   gsparse-compile --plugin libmy_programs.so --program weighted_sum --feat 8 --gradients --out kernels --name ws
#include <algorithm>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <optional>

#include "core/error.h"
#include "dsl/plugin.h"
#include "dsl/user_gradients.h"
#include "runtime/aot.h"
#include "schedules/schedule.h"

using namespace gsparse;

namespace {

/// Emits the derived backward of a plugin program (dsl/user_gradients.h) as static libraries
/// <name>_grad_<operand> (and <name>_grad_scale), default schedules, and prints how each is called.
void emit_gradients(const dsl::ProgramGradients &grads, int feat, Device device, const std::string &out_dir,
                    const std::string &name) {
    const std::string scale = grads.scale ? " * " + name + "_grad_scale(graph)" : "";
    std::printf("gradients of %s: G = grad_out%s, read as the operand '%s'\n", name.c_str(), scale.c_str(),
                grads.grad_operand.c_str());
    auto print_args = [](const std::vector<std::string> &args) {
        for (const auto &a : args) std::printf(" %s", a.c_str());
        std::printf("\n");
    };
    if (grads.row_values) {
        // Max / min / product: per-row values first (the winning edge ids as the bits of the feature
        // type; the product of the nonzero messages and the zero count); the operand libraries read them.
        const dsl::SpmmKernel k = grads.row_values->compile(feat, device);
        k.compile_to_static_library(out_dir, name + "_grad_row_values");
        std::printf("row values %s/%s_grad_row_values.a (the graph; [num_dst, F] each), read as the operand(s)",
                    out_dir.c_str(), name.c_str());
        for (const auto &n : grads.row_value_operands) std::printf(" '%s'", n.c_str());
        std::printf("\n  arguments");
        print_args(k.argument_names());
    }
    if (grads.scale) {
        const dsl::SpmmKernel k = grads.scale->compile(feat, device);
        k.compile_to_static_library(out_dir, name + "_grad_scale");
        std::printf("scale    %s/%s_grad_scale.a (the graph; [num_dst, F])\n  arguments", out_dir.c_str(), name.c_str());
        print_args(k.argument_names());
    }
    for (const dsl::OperandGradient &g : grads.operands) {
        using Form = dsl::OperandGradient::Form;
        const std::string lib = name + "_grad_" + g.operand;
        const char *form = g.form == Form::Rows ? "the graph" : g.form == Form::ReverseRows ? "the reverse graph"
                                                                                          : "the graph's edges";
        std::vector<std::string> args;
        if (g.form == Form::Edges) {
            const dsl::SddmmKernel k = g.edges->compile(feat, device);
            k.compile_to_static_library(out_dir, lib);
            args = k.argument_names();
        } else {
            const dsl::SpmmKernel k = g.rows->compile(feat, device);
            k.compile_to_static_library(out_dir, lib);
            args = k.argument_names();
        }
        const std::string columns = g.columns > 0 ? ", " + std::to_string(g.columns) + " columns" : "";
        std::printf("operand  %s (read at the %s%s%s): %s/%s.a on %s%s\n  arguments", g.operand.c_str(),
                    dsl::at_name(g.at), g.broadcast ? ", broadcast" : "", columns.c_str(), out_dir.c_str(), lib.c_str(),
                    form,
                    g.broadcast    ? "; sum its features for the gradient"
                    : g.columns > 0 ? "; sum the features that read each column for its gradient"
                                    : "");
        print_args(args);
    }
}

}  // namespace

int main(int argc, char **argv) {
    std::string op = "spmm", binary = "copy_lhs", reduce = "sum", schedule, out_dir, name, target = "cpu";
    std::string lhs_target = "u", rhs_target = "v";
    int64_t feat = 32, edge_feat = 0, rhs_feat = 0;
    bool mapped_edge_ids = false;
    CLI::App app{"gsparse-compile: emit a g-SpMM or g-SDDMM kernel as a static library and headers"};
    app.add_option("--op", op, "operator: spmm (g-SpMM, CSR by destination) or sddmm (g-SDDMM, COO in edge-id order)")
        ->check(CLI::IsMember({"spmm", "sddmm"}));
    app.add_option("--binary", binary, "binary op: add sub mul div copy_lhs copy_rhs (sddmm also dot)")
        ->check(CLI::IsMember({"add", "sub", "mul", "div", "dot", "copy_lhs", "copy_rhs", "copy_u", "copy_e"}));
    app.add_option("--reduce", reduce, "spmm: reduce op")->check(CLI::IsMember({"sum", "mean", "max", "min"}));
    app.add_option("--lhs-target", lhs_target, "sddmm: where lhs rows come from: u (source node), v (destination), e (edge)")
        ->check(CLI::IsMember({"u", "v", "e"}));
    app.add_option("--rhs-target", rhs_target, "sddmm: where rhs rows come from: u, v or e")->check(CLI::IsMember({"u", "v", "e"}));
    app.add_option("--feat", feat, "feature length of node features (sddmm: of lhs)")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
    app.add_option("--edge-feat", edge_feat, "spmm: feature length of edge features (default: --feat)")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
    app.add_option("--rhs-feat", rhs_feat, "sddmm: feature length of rhs (default: --feat)")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
    app.add_option("--schedule", schedule, "schedule point, e.g. \"cpu_spmm{rows_per_task=16, vector_width=8}\" or "
                                           "\"gpu_sddmm{kMTile=64, kLaneWidth=4, kVecWidth=4}\"; "
                                           "knobs left out take the target's expert default");
    app.add_option("--target", target, "device: cpu, or cuda (host code plus PTX for compute capability 8.0+)")
        ->check(CLI::IsMember({"cpu", "cuda"}));
    app.add_flag("--mapped-edge-ids", mapped_edge_ids, "for graphs whose edge ids are not the CSR positions");
    std::string plugin_path, program;
    bool list = false, gradients = false;
    app.add_option("--plugin", plugin_path, "a shared module of user programs and schedules (dsl/plugin.h, docs/dsl.md)");
    app.add_option("--program", program, "with --plugin: the user program to emit; --schedule then names one of the "
                                         "plugin's schedules or the default user schedule, e.g. \"my_rows{rows=8}\" "
                                         "(for a per-edge program: an edge schedule or edge_default)");
    app.add_flag("--list", list, "with --plugin: print its programs and schedules and exit");
    app.add_flag("--gradients", gradients,
                 "with --program: also emit its backward derived from the message (programs that sum, maximise, "
                 "minimise or multiply their message, and per-edge programs), one library <name>_grad_<operand> per "
                 "operand, and for max / min / product <name>_grad_row_values (docs/dsl.md)");
    auto *out_opt = app.add_option("--out", out_dir, "output folder");
    auto *name_opt = app.add_option("--name", name, "kernel name (a C identifier)");
    CLI11_PARSE(app, argc, argv);
    try {
        if (!plugin_path.empty()) {
            for (const char *flag : {"--op", "--binary", "--reduce", "--lhs-target", "--rhs-target", "--edge-feat",
                                     "--rhs-feat", "--mapped-edge-ids"})
                if (app.count(flag)) fail<Error>(flag, " is for built-in operators; a --plugin program defines its own");
            const dsl::Plugin plugin = dsl::load_plugin(plugin_path);
            if (list) {
                std::printf("programs: ");
                for (const auto &n : plugin.registry.program_names()) std::printf("%s ", n.c_str());
                std::printf("\nper-edge programs: ");
                for (const auto &n : plugin.registry.edge_program_names()) std::printf("%s ", n.c_str());
                std::printf("\nschedules: ");
                for (const auto &n : plugin.registry.schedule_names()) std::printf("%s ", n.c_str());
                std::printf("\nper-edge schedules: ");
                for (const auto &n : plugin.registry.edge_schedule_names()) std::printf("%s ", n.c_str());
                std::printf("\n");
                return 0;
            }
            if (program.empty()) fail<Error>("--plugin needs --program (or --list)");
            if (!out_opt->count() || !name_opt->count()) fail<Error>("--out and --name are required");
            const Device device = target == "cuda" ? Device::CUDA : Device::CPU;
            const std::vector<std::string> edge_programs = plugin.registry.edge_program_names();
            if (std::find(edge_programs.begin(), edge_programs.end(), program) != edge_programs.end()) {
                // A per-edge program: --schedule names one of the plugin's edge schedules or the
                // default one (edge_default).
                const dsl::SddmmProgram ep = plugin.registry.make_edge_program(program);
                dsl::EdgeScheduleDef def = dsl::default_edge_schedule();
                std::map<std::string, int64_t> point;
                if (!schedule.empty()) {
                    const ScheduleParams parsed = ScheduleParams::parse(schedule);
                    def = plugin.registry.make_edge_schedule(parsed.schedule);
                    point = parsed.values;
                }
                // The backward first: a program without one fails before anything is written.
                const std::optional<dsl::ProgramGradients> grads =
                    gradients ? std::optional<dsl::ProgramGradients>(dsl::derive_gradients(ep)) : std::nullopt;
                const dsl::SddmmKernel k = ep.compile(static_cast<int>(feat), device, def, point);
                k.compile_to_static_library(out_dir, name);
                std::printf("per-edge program %s from %s (%s, %s)\nlibrary  %s/%s.a\nheader   %s/%s.h\narguments",
                            program.c_str(), plugin_path.c_str(), k.schedule().c_str(), device_name(device),
                            out_dir.c_str(), name.c_str(),
                            out_dir.c_str(), name.c_str());
                for (const auto &a : k.argument_names()) std::printf(" %s", a.c_str());
                std::printf("\n");
                if (grads) emit_gradients(*grads, static_cast<int>(feat), device, out_dir, name);
                return 0;
            }
            const dsl::SpmmProgram p = plugin.registry.make_program(program);
            dsl::ScheduleDef def = dsl::default_schedule();
            std::map<std::string, int64_t> point;
            if (!schedule.empty()) {
                const ScheduleParams parsed = ScheduleParams::parse(schedule);
                def = plugin.registry.make_schedule(parsed.schedule);
                point = parsed.values;
            }
            const std::optional<dsl::ProgramGradients> grads =
                gradients ? std::optional<dsl::ProgramGradients>(dsl::derive_gradients(p)) : std::nullopt;
            const dsl::SpmmKernel k = p.compile(static_cast<int>(feat), device, def, point);
            k.compile_to_static_library(out_dir, name);
            std::printf("program  %s from %s (%s, %s)\nlibrary  %s/%s.a\nheader   %s/%s.h\narguments", program.c_str(),
                        plugin_path.c_str(), dsl::point_str(def, def.complete(point, static_cast<int>(feat), device)).c_str(),
                        device_name(device), out_dir.c_str(), name.c_str(), out_dir.c_str(), name.c_str());
            for (const auto &a : k.argument_names()) std::printf(" %s", a.c_str());
            std::printf("\n");
            if (grads) emit_gradients(*grads, static_cast<int>(feat), device, out_dir, name);
            return 0;
        }
        if (!program.empty() || list || gradients) fail<Error>("--program, --list and --gradients need --plugin");
        if (!out_opt->count() || !name_opt->count()) fail<Error>("--out and --name are required");
        const Device device = target == "cuda" ? Device::CUDA : Device::CPU;
        // Knobs a --schedule point leaves out take the expert default's values.
        auto with_defaults = [&](const ScheduleParams &defaults) {
            ScheduleParams params = schedule.empty() ? defaults : ScheduleParams::parse(schedule);
            if (params.schedule == defaults.schedule)
                for (const auto &[knob, value] : defaults.values) params.values.emplace(knob, value);
            return params;
        };
        EmittedKernel k;
        std::string what;
        if (op == "sddmm") {
            if (app.count("--reduce") || app.count("--edge-feat") || mapped_edge_ids)
                fail<Error>("--reduce, --edge-feat and --mapped-edge-ids are for --op spmm (g-SDDMM takes --rhs-feat; "
                            "its COO arrays are in edge-id order)");
            SddmmKernelKey key;
            key.spec = {parse_binary_op(binary), parse_target(lhs_target), parse_target(rhs_target)};
            key.layout = plan_features(key.spec.op, {feat}, {rhs_feat ? rhs_feat : feat});
            key.device = device;
            key.large_buffers = false;
            key.schedule = with_defaults(default_sddmm_schedule(device).default_params(sddmm_problem(key.layout, {}, key.dtype)));
            k = emit_sddmm_library(key, out_dir, name);
            what = key.spec.name() + ", " + key.schedule.str();
        } else {
            if (app.count("--lhs-target") || app.count("--rhs-target") || app.count("--rhs-feat"))
                fail<Error>("--lhs-target, --rhs-target and --rhs-feat are for --op sddmm");
            SpmmKernelKey key;
            key.spec = {parse_binary_op(binary), parse_reduce_op(reduce)};
            check_spmm_spec(key.spec);
            const int64_t ef = edge_feat ? edge_feat : feat;
            key.layout = plan_features(key.spec.op, {feat}, {ef});
            key.identity_edge_ids = !mapped_edge_ids;
            key.device = device;
            key.schedule = with_defaults(default_spmm_schedule(device).default_params(spmm_problem(key.spec, key.layout, {}, key.dtype)));
            k = emit_spmm_library(key, out_dir, name);
            what = key.spec.name() + ", " + key.schedule.str();
        }
        std::printf("kernel   gsparse_kernels::%s (%s, %s)\nlibrary  %s\nheaders  %s, %s\n", k.name.c_str(), what.c_str(),
                    device_name(device), k.library.c_str(), k.wrapper_header.c_str(), k.halide_header.c_str());
        if (!k.runtime.empty()) std::printf("runtime  %s\n", k.runtime.c_str());
    } catch (const std::exception &e) {
        std::fprintf(stderr, "gsparse-compile: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
