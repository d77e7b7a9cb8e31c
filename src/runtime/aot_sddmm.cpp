// Wrapper headers of emitted g-SDDMM kernels (runtime/aot_sddmm.h). Both entry points take the
// graph as COO in edge-id order (src_idx[e] -> dst_idx[e]), which is the order of the output rows,
// check every argument before the kernel runs and return error codes instead of aborting.
#include "runtime/aot_sddmm.h"

#include <map>
#include <sstream>

#include "core/error.h"
#include "runtime/aot_source.h"

namespace gsparse {

const char *const kKernelErrorCodes =
    "#ifndef GSPARSE_KERNEL_ERROR_CODES\n#define GSPARSE_KERNEL_ERROR_CODES\n"
    "/// Return codes of emitted kernels (Halide's own error codes are other negative values).\n"
    "enum : int { kOk = 0, kNullPointer = -10001, kBadShape = -10002, kBadGraph = -10003, kBadContext = -10004,\n"
    "             kBadAlignment = -10005 };\n#endif\n\n";

namespace {

using aot_source::product;
using aot_source::sizes;

/// The row count of an operand on target t, spelled with the given prefix ("" or "graph.").
std::string rows_of(OperandTarget t, const std::string &prefix) {
    const char *what = t == OperandTarget::Src ? "num_src" : t == OperandTarget::Dst ? "num_dst" : "num_edges";
    return prefix + what + (prefix.empty() ? "" : "()");
}

const char *target_words(OperandTarget t) {
    return t == OperandTarget::Src ? "source node" : t == OperandTarget::Dst ? "destination node" : "edge";
}

struct Operand {
    std::string name, var, rows;
    std::vector<int64_t> extents;
    OperandTarget target;
};

/// The operands the kernel reads, with their row counts (spelled with prefix).
std::vector<Operand> operands(const SddmmKernelKey &key, const SddmmAlgorithm &a, const std::string &prefix) {
    std::vector<Operand> ops;
    if (a.uses_lhs()) ops.push_back({"lhs", "l", rows_of(key.spec.lhs, prefix), key.layout.lhs_extents(), key.spec.lhs});
    if (a.uses_rhs()) ops.push_back({"rhs", "r", rows_of(key.spec.rhs, prefix), key.layout.rhs_extents(), key.spec.rhs});
    return ops;
}

std::string header_comment(const SddmmKernelKey &key, const SddmmAlgorithm &a, const std::string &name, bool cuda) {
    std::ostringstream h;
    h << "// " << name << ": g-SDDMM " << key.spec.name() << (cuda ? " for CUDA" : "") << ", emitted by gsparse ("
      << key.str() << ").\n"
      << "// out[e] = lhs[" << target_name(key.spec.lhs) << "] " << binary_op_name(key.spec.op) << " rhs["
      << target_name(key.spec.rhs) << "] for every edge e = (u -> v) of a COO graph in edge-id order;\n"
      << "// out has one row per edge. Feature tensors are row-major" << (cuda ? " device arrays" : "") << " with ";
    for (const Operand &o : operands(key, a, ""))
        h << product(o.extents) << " (" << o.name << ", one row per " << target_words(o.target) << "), ";
    h << key.layout.out_len() << " (out) elements per row.\n"
      << "// Compiled with 32-bit indexing: every tensor must have fewer than 2^31 - 1 elements.\n";
    return h.str();
}

}  // namespace

std::string sddmm_wrapper_source(const SddmmKernelKey &key, const SddmmAlgorithm &a, const std::string &name) {
    const std::string T = key.dtype == DType::F64 ? "double" : "float";
    const auto ops = operands(key, a, "");
    std::ostringstream h;
    h << header_comment(key, a, name, false) << "#pragma once\n\n#include <HalideBuffer.h>\n\n#include <cstdint>\n"
      << "#include <vector>\n\n#include \"" << name << "_halide.h\"\n\nnamespace gsparse_kernels {\n\n"
      << kKernelErrorCodes
      << "/// src_idx / dst_idx: the source and destination node of every edge (either may be null when the op\n"
      << "/// does not read it); lhs / rhs may be null when the op does not read them. With validate, every\n"
      << "/// node id is checked first (O(num_edges)). Returns kOk, kNullPointer, kBadShape (a negative count\n"
      << "/// or a tensor too large for 32-bit indexing), kBadGraph (a node id out of range) or a Halide error code.\n"
      << "inline int " << name << "(int32_t num_edges, int32_t num_src, int32_t num_dst, const int32_t *src_idx,\n"
      << "    const int32_t *dst_idx, const " << T << " *lhs, const " << T << " *rhs, " << T
      << " *out, bool validate = true) {\n"
      << "    if (num_edges < 0 || num_src < 0 || num_dst < 0) return kBadShape;\n"
      << "    const int64_t limit = (int64_t(1) << 31) - 1;\n"
      << "    if (int64_t(num_edges) * " << key.layout.out_len() << " >= limit) return kBadShape;\n";
    for (const Operand &o : ops)
        h << "    if (int64_t(" << o.rows << ") * " << product(o.extents) << " >= limit) return kBadShape;\n";
    h << "    if (num_edges == 0) return kOk;\n"
      << "    if (!out) return kNullPointer;\n";
    for (const Operand &o : ops) h << "    if (!" << o.name << ") return kNullPointer;\n";
    if (a.reads_src()) h << "    if (!src_idx) return kNullPointer;\n";
    if (a.reads_dst()) h << "    if (!dst_idx) return kNullPointer;\n";
    if (a.reads_src() || a.reads_dst()) {
        h << "    if (validate)\n        for (int32_t e = 0; e < num_edges; e++) {\n";
        if (a.reads_src()) h << "            if (src_idx[e] < 0 || src_idx[e] >= num_src) return kBadGraph;\n";
        if (a.reads_dst()) h << "            if (dst_idx[e] < 0 || dst_idx[e] >= num_dst) return kBadGraph;\n";
        h << "        }\n";
    }
    if (!a.reads_src()) h << "    (void)src_idx;\n";
    if (!a.reads_dst()) h << "    (void)dst_idx;\n";
    if (!a.uses_lhs()) h << "    (void)lhs;\n";
    if (!a.uses_rhs()) h << "    (void)rhs;\n";
    std::map<std::string, std::string> value = {{a.num_edges.name(), "num_edges"},
                                                {a.num_src.name(), "num_src"},
                                                {a.num_dst.name(), "num_dst"}};
    if (a.reads_src()) {
        h << "    Halide::Runtime::Buffer<int32_t> si(const_cast<int32_t *>(src_idx), num_edges);\n";
        value[a.src_idx.name()] = "si";
    }
    if (a.reads_dst()) {
        h << "    Halide::Runtime::Buffer<int32_t> di(const_cast<int32_t *>(dst_idx), num_edges);\n";
        value[a.dst_idx.name()] = "di";
    }
    for (const Operand &o : ops) {
        h << "    Halide::Runtime::Buffer<" << T << "> " << o.var << "(const_cast<" << T << " *>(" << o.name << "), "
          << sizes(o.extents, o.rows) << ");\n";
        value[o.name == "lhs" ? a.lhs.name() : a.rhs.name()] = o.var;
    }
    h << "    Halide::Runtime::Buffer<" << T << "> o(out, " << sizes(key.layout.extents, "num_edges") << ");\n";
    std::string call = name + "_halide(";
    for (const Halide::Argument &arg : a.arguments()) {
        auto it = value.find(arg.name);
        if (it == value.end()) fail<KernelError>("emitting ", name, ": no value for pipeline argument ", arg.name);
        call += it->second + ", ";
    }
    call += "o)";
    h << "    return " << call << ";\n}\n\n"
      << "/// The entry point's type, for gsparse_kernels::Dispatcher (gsparse_dispatch.h).\n"
      << "using " << name << "_fn = decltype(&" << name << ");\n\n}  // namespace gsparse_kernels\n";
    return h.str();
}

std::string cuda_sddmm_wrapper_source(const SddmmKernelKey &key, const SddmmAlgorithm &a, const std::string &name) {
    const std::string T = key.dtype == DType::F64 ? "double" : "float";
    const auto ops = operands(key, a, "graph.");
    std::ostringstream h;
    h << header_comment(key, a, name, true) << "#pragma once\n\n#include \"gsparse_cuda.h\"\n#include \"" << name
      << "_halide.h\"\n\nnamespace gsparse_kernels {\n\n"
      << "/// Runs on graph (a CudaCoo prepared in launch.context) on launch.stream; returns when the kernel is\n"
      << "/// queued. lhs, rhs and out (graph.num_edges() rows) are device pointers in launch.context; lhs / rhs\n"
      << "/// may be null when the op does not read them";
    if (a.operand_alignment) h << " and must be " << a.operand_alignment << "-byte aligned (vector loads)";
    h << ". Returns kOk, kNullPointer,\n"
      << "/// kBadShape, kBadGraph, kBadContext, kBadAlignment (checked before any CUDA call) or a Halide error\n"
      << "/// code, with launch.error saying why.\n"
      << "inline int " << name << "(CudaLaunch &launch, CudaCoo &graph, const " << T << " *lhs, const " << T
      << " *rhs, " << T << " *out) {\n"
      << "    launch.error.clear();\n"
      << "    if (!launch.context) return detail::fail(launch, kNullPointer, \"launch.context is null (pass the "
         "application's CUcontext)\");\n"
      << "    if (!out) return detail::fail(launch, kNullPointer, \"out is null\");\n";
    for (const Operand &o : ops)
        h << "    if (!" << o.name << ") return detail::fail(launch, kNullPointer, \"" << o.name
          << " is null (the op reads " << target_words(o.target) << " features)\");\n";
    if (!a.uses_lhs()) h << "    (void)lhs;\n";
    if (!a.uses_rhs()) h << "    (void)rhs;\n";
    if (a.operand_alignment)
        for (const Operand &o : ops)
            h << "    if (reinterpret_cast<uintptr_t>(" << o.name << ") % " << a.operand_alignment << ")\n"
              << "        return detail::fail(launch, kBadAlignment, \"" << o.name << " is not " << a.operand_alignment
              << "-byte aligned, which this kernel's vector loads need\");\n";
    h << "    if (!graph.prepared()) return detail::fail(launch, kBadGraph, \"the graph is not prepared (CudaCoo::prepare)\");\n"
      << "    if (graph.context() != launch.context)\n"
      << "        return detail::fail(launch, kBadContext, \"the graph was prepared in another CUDA context\");\n"
      << "    const int64_t limit = (int64_t(1) << 31) - 1;\n";
    auto size_check = [&](const std::string &what, const std::string &rows, int64_t len) {
        h << "    if (int64_t(" << rows << ") * " << len << " >= limit)\n"
          << "        return detail::fail(launch, kBadShape, \"" << what << " has \" + std::to_string(int64_t(" << rows
          << ") * " << len << ") + \" elements; this kernel indexes with 32 bits (fewer than 2^31 - 1)\");\n";
    };
    for (const Operand &o : ops) size_check(o.name, o.rows, product(o.extents));
    size_check("out", "graph.num_edges()", key.layout.out_len());
    h << "    if (graph.num_edges() == 0) return kOk;\n";
    if (key.schedule.schedule == "gpu_sddmm")
        h << "    static_assert(CudaCoo::kEdgePad % " << key.schedule.get("kMTile")
          << " == 0, \"the COO copies must be padded to whole edge tiles\");\n";
    // Operand buffers and node counts are at least 1: padding edges of the last tile gather node 0.
    std::map<std::string, std::string> value = {{a.num_edges.name(), "graph.num_edges()"},
                                                {a.num_src.name(), "std::max(graph.num_src(), 1)"},
                                                {a.num_dst.name(), "std::max(graph.num_dst(), 1)"},
                                                {a.src_idx.name(), "graph.src_buffer()"},
                                                {a.dst_idx.name(), "graph.dst_buffer()"}};
    std::vector<std::pair<std::string, std::string>> views;  // (variable, what)
    for (const Operand &o : ops) {
        h << "    detail::DeviceView<" << T << "> " << o.var << "(launch, " << o.name << ", "
          << sizes(o.extents, "std::max(" + o.rows + ", 1)") << ");\n";
        value[o.name == "lhs" ? a.lhs.name() : a.rhs.name()] = o.var + ".get()";
        views.emplace_back(o.var, o.name);
    }
    h << "    detail::DeviceView<" << T << "> o(launch, out, " << sizes(key.layout.extents, "graph.num_edges()") << ");\n";
    views.emplace_back("o", "out");
    for (const auto &[var, what] : views)
        h << "    if (int rc = " << var << ".status()) return detail::fail(launch, rc, \"wrapping " << what
          << " failed: \" + launch.error);\n";
    std::string call = name + "_halide(&launch";
    for (const Halide::Argument &arg : a.arguments()) {
        auto it = value.find(arg.name);
        if (it == value.end()) fail<KernelError>("emitting ", name, ": no value for pipeline argument ", arg.name);
        call += ", " + it->second;
    }
    call += ", o.get())";
    h << "    const int rc = " << call << ";\n"
      << "    if (rc) detail::fail(launch, rc, \"" << name << " failed: \" + (launch.error.empty() ? \"Halide error \" + "
         "std::to_string(rc) : launch.error));\n"
      << "    return rc;\n}\n\n"
      << "/// The entry point's type, for gsparse_kernels::Dispatcher (gsparse_dispatch.h).\n"
      << "using " << name << "_fn = decltype(&" << name << ");\n\n}  // namespace gsparse_kernels\n";
    return h.str();
}

}  // namespace gsparse
