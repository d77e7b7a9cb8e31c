// Ahead-of-time emission (runtime/aot.h): compiles a scheduled pipeline with Halide's AOT compiler
// and writes the typed wrapper header of g-SpMM CPU kernels; g-SDDMM wrappers are in aot_sddmm.cpp,
// CUDA wrappers in aot_cuda.cpp.
#include "runtime/aot.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "halide_ext/bind_buffer.h"
#include "halide_ext/block_uniform_loop.h"
#include "halide_ext/kernel_register_limit.h"
#include "ops/spmm_algorithm.h"
#include "runtime/aot_cuda.h"
#include "runtime/aot_sddmm.h"
#include "runtime/aot_source.h"
#include "runtime/target.h"
#include "schedules/gpu_schedules.h"
#include "schedules/schedule.h"

namespace gsparse {

namespace {

using aot_source::product;
using aot_source::sizes;

std::string wrapper_source(const SpmmKernelKey &key, const SpmmAlgorithm &a, const std::string &name) {
    const bool args = has_arg_outputs(key.spec.reduce);
    const std::string T = key.dtype == DType::F64 ? "double" : "float";
    std::ostringstream h;
    h << "// " << name << ": g-SpMM " << key.spec.name() << " emitted by gsparse (" << key.str() << ").\n"
      << "// Z[v] = reduce over in-edges (u -> v, e) of X[u] op Y[e]; CSR by destination; a node without\n"
      << "// in-edges gets 0" << (args ? " and arg ids -1" : "") << ". Feature tensors are row-major with "
      << product(key.layout.lhs_extents()) << " (lhs), " << product(key.layout.rhs_extents()) << " (rhs) and "
      << key.layout.out_len() << " (out) elements per row.\n"
      << "#pragma once\n\n#include <HalideBuffer.h>\n\n#include <cstdint>\n#include <vector>\n\n#include \"" << name
      << "_halide.h\"\n\n"
      << "namespace gsparse_kernels {\n\n"
      << kKernelErrorCodes
      << "/// edge_ids may be null when edge ids are the CSR positions; lhs/rhs may be null when the op\n"
      << "/// does not read them. With validate, row_ptr and every index are checked first (O(nnz)).\n"
      << "inline int " << name << "(int32_t num_dst, int32_t num_src, int32_t nnz, const int32_t *row_ptr,\n"
      << "    const int32_t *col_idx, const int32_t *edge_ids, const " << T << " *lhs, const " << T << " *rhs, " << T
      << " *out" << (args ? ", int32_t *arg_u, int32_t *arg_e" : "") << ", bool validate = true) {\n"
      << "    if (num_dst < 0 || num_src < 0 || nnz < 0) return kBadShape;\n"
      << "    if (!row_ptr || !out || (nnz > 0 && !col_idx)) return kNullPointer;\n";
    if (a.uses_lhs()) h << "    if (!lhs && nnz > 0) return kNullPointer;\n";
    if (a.uses_rhs()) h << "    if (!rhs && nnz > 0) return kNullPointer;\n";
    if (args) h << "    if (!arg_u || !arg_e) return kNullPointer;\n";
    h << "    int32_t max_degree = 0;\n"
      << "    if (row_ptr[0] != 0 || row_ptr[num_dst] != nnz) return kBadGraph;\n"
      << "    for (int32_t v = 0; v < num_dst; v++) {\n"
      << "        if (row_ptr[v + 1] < row_ptr[v]) return kBadGraph;\n"
      << "        if (row_ptr[v + 1] - row_ptr[v] > max_degree) max_degree = row_ptr[v + 1] - row_ptr[v];\n"
      << "    }\n"
      << "    if (validate)\n"
      << "        for (int32_t p = 0; p < nnz; p++)\n"
      << "            if (col_idx[p] < 0 || col_idx[p] >= num_src || (edge_ids && (edge_ids[p] < 0 || edge_ids[p] >= nnz)))\n"
      << "                return kBadGraph;\n"
      << "    const int64_t out_len = " << key.layout.out_len() << ";\n"
      << "    if (num_dst == 0) return kOk;\n"
      << "    if (nnz == 0) {\n"
      << "        for (int64_t i = 0; i < int64_t(num_dst) * out_len; i++) out[i] = 0;\n";
    if (args)
        h << "        for (int64_t i = 0; i < int64_t(num_dst) * out_len; i++) arg_u[i] = arg_e[i] = -1;\n";
    h << "        return kOk;\n    }\n";
    h << "    Halide::Runtime::Buffer<int32_t> rp(const_cast<int32_t *>(row_ptr), num_dst + 1);\n"
      << "    Halide::Runtime::Buffer<int32_t> ci(const_cast<int32_t *>(col_idx), nnz);\n";
    std::string call = name + "_halide(rp, ci";
    if (a.reads_edge_ids) {
        h << "    if (!edge_ids) return kNullPointer;\n"
          << "    Halide::Runtime::Buffer<int32_t> ei(const_cast<int32_t *>(edge_ids), nnz);\n";
        call += ", ei";
    } else if (!key.identity_edge_ids) {
        h << "    (void)edge_ids;\n";
    }
    if (a.uses_lhs()) {
        h << "    Halide::Runtime::Buffer<" << T << "> l(const_cast<" << T << " *>(lhs), "
          << sizes(key.layout.lhs_extents(), "num_src") << ");\n";
        call += ", l";
    }
    if (a.uses_rhs()) {
        h << "    Halide::Runtime::Buffer<" << T << "> r(const_cast<" << T << " *>(rhs), "
          << sizes(key.layout.rhs_extents(), "nnz") << ");\n";
        call += ", r";
    }
    call += ", max_degree, nnz, num_src";
    h << "    Halide::Runtime::Buffer<" << T << "> o(out, " << sizes(key.layout.extents, "num_dst") << ");\n";
    call += ", o";
    if (args) {
        h << "    Halide::Runtime::Buffer<int32_t> au(arg_u, " << sizes(key.layout.extents, "num_dst") << ");\n"
          << "    Halide::Runtime::Buffer<int32_t> ae(arg_e, " << sizes(key.layout.extents, "num_dst") << ");\n";
        call += ", au, ae";
    }
    h << "    return " << call << ");\n}\n\n"
      << "/// The entry point's type, for gsparse_kernels::Dispatcher (gsparse_dispatch.h).\n"
      << "using " << name << "_fn = decltype(&" << name << ");\n\n}  // namespace gsparse_kernels\n";
    return h.str();
}

const char *kDispatchHeader = R"(// gsparse_dispatch.h: chooses among kernels emitted by gsparse for one operator (same entry-point
// type) by feature length and graph shape, for applications whose graphs vary.
//
//   gsparse_kernels::Dispatcher<gsparse_kernels::agg_small_fn> d;
//   d.add(gsparse_kernels::agg_small, 16, 0, 64);     // F = 16, average row length below 64
//   d.add(gsparse_kernels::agg_long, 16, 64);         // F = 16, longer rows
//   if (auto k = d.select(16, double(nnz) / num_dst)) rc = k(num_dst, ...);
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace gsparse_kernels {

template <typename Kernel>
class Dispatcher {
public:
    /// kernel serves feature length feat on graphs whose average row length is in [min_avg_row, max_avg_row).
    void add(Kernel kernel, int64_t feat, double min_avg_row = 0,
             double max_avg_row = std::numeric_limits<double>::infinity()) {
        entries_.push_back({kernel, feat, min_avg_row, max_avg_row});
    }
    /// The first added kernel for this feature length and average row length; nullptr when none fits.
    Kernel select(int64_t feat, double avg_row) const {
        for (const Entry &e : entries_)
            if (e.feat == feat && avg_row >= e.min_avg_row && avg_row < e.max_avg_row) return e.kernel;
        return nullptr;
    }
    size_t size() const { return entries_.size(); }

private:
    struct Entry {
        Kernel kernel;
        int64_t feat;
        double min_avg_row, max_avg_row;
    };
    std::vector<Entry> entries_;
};

}  // namespace gsparse_kernels
)";

/// Writes a file that other emissions into the same folder may write at the same time (same text).
void write_shared_file(const std::string &path, const std::string &text) {
    const std::string tmp = path + ".tmp" + std::to_string(::getpid());
    {
        std::ofstream f(tmp);
        f << text;
        if (!f) fail<Error>("writing ", path, " failed");
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::remove(tmp.c_str());
        fail<Error>("cannot write ", path, ": ", ec.message());
    }
}

/// Throws Error unless name is a C identifier.
void check_name(const std::string &name) {
    if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_'))
        fail<Error>("kernel name '", name, "' is not a C identifier");
    for (char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
            fail<Error>("kernel name '", name, "' is not a C identifier");
}

/// Compiles p into <dir>/<name>_halide.{a,h} for device. CUDA kernels take the application's
/// context and stream through user_context and share one runtime library (emit_cuda_runtime); CPU
/// kernels each carry their own runtime. Without large_buffers the kernel indexes with 32 bits;
/// max_registers > 0 limits every CUDA kernel to that many registers a thread (kernel_register_limit.h).
void compile_kernel(Halide::Pipeline &p, const std::vector<Halide::Argument> &args, Device device, bool large_buffers,
                    const std::string &what, const std::string &dir, const std::string &name, int max_registers = 0) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) fail<Error>("cannot create ", dir, ": ", ec.message());
    Halide::Target target = jit_target(device);
    if (device == Device::CUDA)
        target = target.with_feature(Halide::Target::UserContext).with_feature(Halide::Target::NoRuntime);
    if (!large_buffers) target = target.without_feature(Halide::Target::LargeBuffers);
    try {
        const std::string base = dir + "/" + name + "_halide";
        Halide::Module m = p.compile_to_module(args, name + "_halide", target);
        ext::limit_kernel_registers(m, max_registers);
        m.compile({{Halide::OutputFileType::static_library, base + ".a"}, {Halide::OutputFileType::c_header, base + ".h"}});
    } catch (const Halide::Error &e) {
        fail<KernelError>("compiling ", what, " ahead of time failed: ", e.what());
    }
}

/// Writes the wrapper header and the folder's shared files; returns what was emitted.
EmittedKernel finish_kernel(Device device, const std::string &wrapper, const std::string &dir, const std::string &name) {
    EmittedKernel k;
    k.name = name;
    const std::string prefix = dir + "/" + name;
    k.library = prefix + "_halide.a";
    k.halide_header = prefix + "_halide.h";
    k.wrapper_header = prefix + ".h";
    std::ofstream h(k.wrapper_header);
    if (!h) fail<Error>("cannot write ", k.wrapper_header);
    h << wrapper;
    if (!h) fail<Error>("writing ", k.wrapper_header, " failed");
    write_shared_file(dir + "/gsparse_dispatch.h", kDispatchHeader);
    if (device == Device::CUDA) {
        write_shared_file(dir + "/gsparse_cuda.h", kCudaSupportHeader);
        write_shared_file(dir + "/gsparse_locality_order.h", kLocalityOrderHeader);
        k.runtime = emit_cuda_runtime(jit_target(Device::CUDA).with_feature(Halide::Target::UserContext), dir);
    }
    return k;
}

}  // namespace

EmittedKernel emit_spmm_library(const SpmmKernelKey &key, const std::string &dir, const std::string &name) {
    check_name(name);
    const SpmmScheduleDef &def = spmm_schedule(key.schedule.schedule);
    if (def.device != key.device)
        fail<ScheduleError>("schedule ", def.name, " is for ", device_name(def.device), ", not ", device_name(key.device));
    check_schedule(def, key.schedule, spmm_problem(key.spec, key.layout, {}, key.dtype));
    SpmmAlgorithm a = build_spmm_algorithm(key.spec, key.layout, key.dtype, key.identity_edge_ids);
    if (key.schedule.get_or("kSrcTile", 0) > 0)
        fail<ScheduleError>("schedule ", key.schedule.str(),
                            ": kSrcTile > 0 is not available for emitted kernels (their entry points take the CSR "
                            "in row order); use kSrcTile = 0");
    if (runs_on_relabeled_graph(key.schedule))
        fail<ScheduleError>("schedule ", key.schedule.str(),
                            ": rowBalance = 3 (the graph relabeled in its locality order) is not available for emitted "
                            "kernels (their entry points take the graph's own CSR); use rowBalance = 2");
    if (key.schedule.get_or("rowTails", 0) != 0)
        fail<ScheduleError>("schedule ", key.schedule.str(),
                            ": rowTails = 1 is not available for emitted kernels (their graphs carry no table of "
                            "row tails); use rowTails = 0");
    def.apply(a, key.schedule);

    Halide::Pipeline p(a.out);
    for (const auto &pass : a.lowering_passes) p.add_custom_lowering_pass(pass.get(), nullptr);
    // As in the JIT, schedules that need 32-bit indexing (warp shuffles) drop large_buffers: such a
    // kernel returns a Halide error for buffers of 2^31 elements or more.
    compile_kernel(p, a.arguments(), key.device, a.large_buffers, key.str(), dir, name, a.max_registers);
    // As in the JIT: a lowering pass of the schedule that matched nothing is a compiler error.
    for (const auto &pass : a.lowering_passes) {
        if (auto *uniform = dynamic_cast<const ext::BlockUniformLoop *>(pass.get()); uniform && uniform->rewritten() == 0)
            fail<KernelError>("compiling ", key.str(), ": the block-uniform loop bound matched no loop");
        if (auto *bind = dynamic_cast<const ext::BindBufferStores *>(pass.get()); bind && bind->rewritten() == 0)
            fail<KernelError>("compiling ", key.str(), ": bind_buffer found no output store to remap");
    }
    const bool cuda = key.device == Device::CUDA;
    return finish_kernel(key.device, cuda ? cuda_wrapper_source(key, a, name) : wrapper_source(key, a, name), dir, name);
}

EmittedKernel emit_sddmm_library(const SddmmKernelKey &key_in, const std::string &dir, const std::string &name) {
    check_name(name);
    SddmmKernelKey key = key_in;
    // 32-bit indexing, as the JIT compiles calls on tensors under 2^31 elements; the entry point
    // refuses larger tensors.
    key.large_buffers = false;
    const SddmmScheduleDef &def = sddmm_schedule(key.schedule.schedule);
    if (def.device != key.device)
        fail<ScheduleError>("schedule ", def.name, " is for ", device_name(def.device), ", not ", device_name(key.device));
    check_schedule(def, key.schedule, sddmm_problem(key.layout, {}, key.dtype));
    SddmmAlgorithm a = build_sddmm_algorithm(key.spec, key.layout, key.dtype);
    a.large_buffers = false;  // before the schedule: gpu_sddmm picks its register form from it
    def.apply(a, key.schedule);
    if (a.edges_grouped)
        fail<ScheduleError>("schedule ", key.schedule.str(),
                            ": groupByDst = 1 is not available for emitted kernels (their entry points take the COO "
                            "in edge-id order); use groupByDst = 0");
    Halide::Pipeline p(a.out);
    compile_kernel(p, a.arguments(), key.device, false, key.str(), dir, name);
    const bool cuda = key.device == Device::CUDA;
    return finish_kernel(key.device, cuda ? cuda_sddmm_wrapper_source(key, a, name) : sddmm_wrapper_source(key, a, name),
                         dir, name);
}

}  // namespace gsparse
