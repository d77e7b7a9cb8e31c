// gsparse-compile: emits a g-SpMM kernel for a given schedule as a static library plus headers that
// an application links (no JIT, no tuner at run time), for the CPU or (--target cuda) CUDA.
//
//   gsparse-compile --binary mul --reduce sum --feat 64 --edge-feat 1 \
//       --schedule "cpu_spmm{rows_per_task=16, vector_width=8}" --out kernels --name gcn_aggregate
//   gsparse-compile --target cuda --binary mul --reduce sum --feat 64 --edge-feat 1 --out kernels --name agg
#include <CLI/CLI.hpp>

#include <cstdio>

#include "core/error.h"
#include "runtime/aot.h"
#include "schedules/schedule.h"

using namespace gsparse;

int main(int argc, char **argv) {
    std::string binary = "copy_lhs", reduce = "sum", schedule, out_dir, name, target = "cpu";
    int64_t feat = 32, edge_feat = 0;
    bool mapped_edge_ids = false;
    CLI::App app{"gsparse-compile: emit a g-SpMM kernel as a static library and headers"};
    app.add_option("--binary", binary, "binary op: add sub mul div copy_lhs copy_rhs")
        ->check(CLI::IsMember({"add", "sub", "mul", "div", "copy_lhs", "copy_rhs", "copy_u", "copy_e"}));
    app.add_option("--reduce", reduce, "reduce op")->check(CLI::IsMember({"sum", "mean", "max", "min"}));
    app.add_option("--feat", feat, "feature length of node features")->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
    app.add_option("--edge-feat", edge_feat, "feature length of edge features (default: --feat)")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
    app.add_option("--schedule", schedule, "schedule point, e.g. \"cpu_spmm{rows_per_task=16, vector_width=8}\"; "
                                           "knobs left out take the target's expert default");
    app.add_option("--target", target, "device: cpu, or cuda (host code plus PTX for compute capability 8.0+)")
        ->check(CLI::IsMember({"cpu", "cuda"}));
    app.add_flag("--mapped-edge-ids", mapped_edge_ids, "for graphs whose edge ids are not the CSR positions");
    app.add_option("--out", out_dir, "output folder")->required();
    app.add_option("--name", name, "kernel name (a C identifier)")->required();
    CLI11_PARSE(app, argc, argv);
    try {
        SpmmKernelKey key;
        key.spec = {parse_binary_op(binary), parse_reduce_op(reduce)};
        check_spmm_spec(key.spec);
        const int64_t ef = edge_feat ? edge_feat : feat;
        key.layout = plan_features(key.spec.op, {feat}, {ef});
        key.identity_edge_ids = !mapped_edge_ids;
        key.device = target == "cuda" ? Device::CUDA : Device::CPU;
        // Knobs a --schedule point leaves out take the expert default's values.
        const ScheduleParams defaults = default_spmm_schedule(key.device).default_params(Problem{key.layout, {}});
        key.schedule = schedule.empty() ? defaults : ScheduleParams::parse(schedule);
        if (key.schedule.schedule == defaults.schedule)
            for (const auto &[knob, value] : defaults.values) key.schedule.values.emplace(knob, value);
        EmittedKernel k = emit_spmm_library(key, out_dir, name);
        std::printf("kernel   gsparse_kernels::%s (%s, %s, %s)\nlibrary  %s\nheaders  %s, %s\n", k.name.c_str(),
                    key.spec.name().c_str(), key.schedule.str().c_str(), device_name(key.device), k.library.c_str(),
                    k.wrapper_header.c_str(), k.halide_header.c_str());
        if (!k.runtime.empty()) std::printf("runtime  %s\n", k.runtime.c_str());
    } catch (const std::exception &e) {
        std::fprintf(stderr, "gsparse-compile: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
