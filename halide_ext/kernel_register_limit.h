// Module edit: a register limit for every CUDA kernel of a compiled module.
//
// Halide 14 compiles a pipeline's CUDA kernels to PTX without launch bounds, and its CUDA runtime
// loads that PTX with one register cap for the whole process (64 registers a thread unless
// HL_CUDA_JIT_MAX_REGISTERS says otherwise). ptxas then spends up to 64 registers on unrolling and
// hoisting loads, which on kernels that are bound by memory latency costs more in occupancy than
// it gains: a g-SpMM kernel of two lanes a row at F = 1 took 56 registers for u_mul_e (56% of an
// SM's threads resident) and 32 for copy_lhs (100%), and ran 1.7x as long.
//
// Expects: a Module from Pipeline::compile_to_module for a CUDA target (the kernels' PTX embedded as
// the buffer OffloadGPULoops names `<api>_gpu_source_kernels`, null-terminated text).
// Produces: the same Module whose PTX gives every `.entry` a `.maxnreg N` directive between its
// parameter list and its body (ptxas allocates at most N registers a thread; N takes effect only
// below the runtime's cap). The PTX keeps its length, so the size the module's host code passes to
// halide_cuda_initialize_kernels stays right: the room comes from LLVM's comment lines ("// @name",
// "// -- Begin function") and trailing spaces, and the text is padded with spaces before its final
// null. Modules without CUDA kernels are left as they are.
#pragma once

#include <Halide.h>

#include <string>

namespace gsparse::ext {

/// Writes `.maxnreg max_registers` into every kernel entry of m's embedded PTX (in place: m's
/// buffers are shared with the host code that refers to them). Returns the number of entries
/// limited. Throws Halide::CompileError if the directives do not fit in the PTX's length or an entry
/// already carries a register directive. max_registers <= 0 leaves m unchanged.
int limit_kernel_registers(Halide::Module &m, int max_registers);

/// The text of a PTX module with `.maxnreg max_registers` inserted into every entry and the comment
/// lines above removed, the same length as ptx (padded with spaces; an empty string if it would be
/// longer; Halide::CompileError for an entry that already limits its registers). Exposed for tests.
std::string ptx_with_register_limit(const std::string &ptx, int max_registers, int *entries = nullptr);

/// The PTX embedded in a compiled module (all CUDA kernel sources, concatenated), or "" if none.
std::string embedded_ptx(const Halide::Module &m);

}  // namespace gsparse::ext
