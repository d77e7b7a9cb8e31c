#include "runtime/aot_cuda.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "core/error.h"
#include "runtime/aot_source.h"

namespace gsparse {

using aot_source::product;
using aot_source::sizes;

std::string cuda_wrapper_source(const SpmmKernelKey &key, const SpmmAlgorithm &a, const std::string &name) {
    const bool args = has_arg_outputs(key.spec.reduce);
    const std::string T = key.dtype == DType::F64 ? "double" : "float";
    std::ostringstream h;
    h << "// " << name << ": g-SpMM " << key.spec.name() << " for CUDA, emitted by gsparse (" << key.str() << ").\n"
      << "// Z[v] = reduce over in-edges (u -> v, e) of X[u] op Y[e]; CSR by destination; a node without\n"
      << "// in-edges gets 0" << (args ? " and arg ids -1" : "") << ". Feature tensors are row-major device arrays with "
      << product(key.layout.lhs_extents()) << " (lhs), " << product(key.layout.rhs_extents()) << " (rhs) and "
      << key.layout.out_len() << " (out) elements per row.\n"
      << "#pragma once\n\n#include \"gsparse_cuda.h\"\n#include \"" << name << "_halide.h\"\n\n"
      << "namespace gsparse_kernels {\n\n"
      << "/// Runs on graph (prepared in launch.context) on launch.stream; returns when the kernel is queued.\n"
      << "/// lhs (num_src rows), rhs (nnz rows, by edge id), out (num_dst rows)"
      << (args ? " and arg_u / arg_e (num_dst rows)" : "")
      << " are device pointers\n/// in launch.context; lhs/rhs may be null when the op does not read them. Returns kOk,\n"
      << "/// kNullPointer, kBadAlignment, kBadGraph, kBadContext (checked before any CUDA call) or a Halide\n"
      << "/// error code, with launch.error saying why.\n"
      << "inline int " << name << "(CudaLaunch &launch, CudaGraph &graph, const " << T << " *lhs, const " << T
      << " *rhs, " << T << " *out" << (args ? ", int32_t *arg_u, int32_t *arg_e" : "") << ") {\n"
      << "    launch.error.clear();\n"
      << "    if (!launch.context) return detail::fail(launch, kNullPointer, \"launch.context is null (pass the "
         "application's CUcontext)\");\n"
      << "    if (!out) return detail::fail(launch, kNullPointer, \"out is null\");\n";
    if (a.uses_lhs())
        h << "    if (!lhs) return detail::fail(launch, kNullPointer, \"lhs is null (the op reads source-node features)\");\n";
    else
        h << "    (void)lhs;\n";
    if (a.uses_rhs())
        h << "    if (!rhs) return detail::fail(launch, kNullPointer, \"rhs is null (the op reads edge features)\");\n";
    else
        h << "    (void)rhs;\n";
    if (args)
        h << "    if (!arg_u || !arg_e) return detail::fail(launch, kNullPointer, \"arg_u or arg_e is null\");\n";
    // Schedules with vector loads (gpu_spmm kVecWidth > 1) assume aligned operand rows.
    for (const char *operand : {"lhs", "rhs"}) {
        if (!a.operand_alignment || (operand[0] == 'l' ? !a.uses_lhs() : !a.uses_rhs())) continue;
        h << "    if (reinterpret_cast<uintptr_t>(" << operand << ") % " << a.operand_alignment << ")\n"
          << "        return detail::fail(launch, kBadAlignment, \"" << operand << " is not " << a.operand_alignment
          << "-byte aligned, which this kernel's vector loads need\");\n";
    }
    h << "    if (!graph.prepared()) return detail::fail(launch, kBadGraph, \"the graph is not prepared (CudaGraph::prepare)\");\n"
      << "    if (graph.context() != launch.context)\n"
      << "        return detail::fail(launch, kBadContext, \"the graph was prepared in another CUDA context\");\n";
    if (a.reads_edge_ids) {
        h << "    if (!graph.edge_ids_buffer()->device)\n"
          << "        return detail::fail(launch, kBadGraph, \"this kernel reads edge ids: prepare the graph with edge_ids\");\n";
    } else if (reads_edge_ids(key.spec)) {
        h << "    if (!graph.identity_edge_ids())\n"
          << "        return detail::fail(launch, kBadGraph, \"this kernel takes edge ids to be the CSR positions, but "
             "the graph maps them: emit it with --mapped-edge-ids\");\n";
    }
    h << "    if (graph.num_dst() == 0) return kOk;\n"
      << "    CudaGraph::Rows *rows = nullptr;\n"
      << "    if (int rc = graph.rows(launch, " << a.row_tile << ", " << a.segment_len << ", "
      << (a.rows_bound ? (a.locality_rows ? "CudaGraph::kLocalityOrder" : "CudaGraph::kBalancedOrder") : "CudaGraph::kRowIdOrder")
      << ", &rows)) return rc;\n"
      << "    const int32_t src_rows = std::max(graph.num_src(), 1), edge_rows = std::max(graph.nnz(), 1);\n";
    std::vector<std::pair<std::string, std::string>> views;  // (variable, what)
    if (a.uses_lhs()) {
        h << "    detail::DeviceView<" << T << "> l(launch, lhs, " << sizes(key.layout.lhs_extents(), "src_rows") << ");\n";
        views.emplace_back("l", "lhs");
    }
    if (a.uses_rhs()) {
        h << "    detail::DeviceView<" << T << "> r(launch, rhs, " << sizes(key.layout.rhs_extents(), "edge_rows") << ");\n";
        views.emplace_back("r", "rhs");
    }
    h << "    detail::DeviceView<" << T << "> o(launch, out, " << sizes(key.layout.extents, "graph.num_dst()") << ");\n";
    views.emplace_back("o", "out");
    if (args) {
        h << "    detail::DeviceView<int32_t> au(launch, arg_u, " << sizes(key.layout.extents, "graph.num_dst()") << ");\n"
          << "    detail::DeviceView<int32_t> ae(launch, arg_e, " << sizes(key.layout.extents, "graph.num_dst()") << ");\n";
        views.emplace_back("au", "arg_u");
        views.emplace_back("ae", "arg_e");
    }
    for (const auto &[var, what] : views)
        h << "    if (int rc = " << var << ".status()) return detail::fail(launch, rc, \"wrapping " << what
          << " failed: \" + launch.error);\n";

    // The pipeline's arguments in the order of its AOT signature.
    const std::map<std::string, std::string> value = {
        {a.row_ptr.name(), "rows->row_ptr.raw_buffer()"},
        {a.col_idx.name(), "graph.col_idx_buffer()"},
        {a.edge_ids.name(), "graph.edge_ids_buffer()"},
        {a.lhs.name(), "l.get()"},
        {a.rhs.name(), "r.get()"},
        {a.max_degree.name(), "rows->max_len"},
        {a.num_edges.name(), "edge_rows"},
        {a.num_src.name(), "src_rows"},
        {"row_order", "rows->row_order.raw_buffer()"},
        {"row_segs", "rows->row_segs.raw_buffer()"},
        {a.num_segs.name(), "rows->num_segs"},
        {a.max_segments.name(), "rows->max_segments"},
    };
    std::string call = name + "_halide(&launch";
    for (const Halide::Argument &arg : a.arguments()) {
        auto it = value.find(arg.name);
        if (it == value.end()) fail<KernelError>("emitting ", name, ": no value for pipeline argument ", arg.name);
        call += ", " + it->second;
    }
    call += ", o.get()";
    if (args) call += ", au.get(), ae.get()";
    call += ")";
    h << "    const int rc = " << call << ";\n"
      << "    if (rc) detail::fail(launch, rc, \"" << name << " failed: \" + (launch.error.empty() ? \"Halide error \" + "
         "std::to_string(rc) : launch.error));\n"
      << "    return rc;\n}\n\n"
      << "/// The entry point's type, for gsparse_kernels::Dispatcher (gsparse_dispatch.h).\n"
      << "using " << name << "_fn = decltype(&" << name << ");\n\n}  // namespace gsparse_kernels\n";
    return h.str();
}

std::string emit_cuda_runtime(const Halide::Target &target, const std::string &dir) {
    const std::string path = dir + "/gsparse_cuda_runtime.a";
    const std::string tmp = path + ".tmp" + std::to_string(::getpid());
    try {
        Halide::compile_standalone_runtime({{Halide::OutputFileType::static_library, tmp}}, target);
    } catch (const Halide::Error &e) {
        std::remove(tmp.c_str());
        fail<KernelError>("compiling the Halide runtime for ", target.to_string(), " failed: ", e.what());
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) fail<Error>("cannot write ", path, ": ", ec.message());
    return path;
}

}  // namespace gsparse
