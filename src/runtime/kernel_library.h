// The persistent kernel cache: kernels compiled ahead of time into shared libraries on disk and
// loaded with dlopen, so that a process does not recompile what an earlier one compiled.
//
// A kernel is Halide-compiled to an object (no runtime, user_context), linked into
// <dir>/<hash>.so with the system's C compiler driver, and called through its argv entry point.
// Kernels of one target share one Halide runtime, itself a shared library in the cache folder
// (<dir>/runtime-<hash>.so), whose CUDA context, stream and error hooks read a KernelCall passed as
// user_context: kernels run on the caller's CUDA context and stream, and errors come back as
// messages instead of aborting.
//
// The cache key hashes the kernel's key, the Halide target and the build of gsparse that compiled it
// (the binary's path, size and modification time), so a rebuilt gsparse never loads kernels of an
// older one. Every entry has a sidecar <hash>.key holding the key, the library's size and checksum;
// a missing, stale or corrupted entry is rebuilt, never trusted. Entries are written to temporary
// names and renamed, so processes sharing a folder see whole files only.
//
// The folder: GSPARSE_KERNEL_CACHE (a path; "off" or "0" disables the cache), else
// $XDG_CACHE_HOME/gsparse/kernels, else ~/.cache/gsparse/kernels. The compiler driver:
// GSPARSE_LINKER, else the C++ compiler gsparse was built with, else cc. Without either, kernels are
// JIT-compiled in memory as before (one warning per process).
#pragma once

#include <Halide.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace gsparse {

/// The folder of the persistent kernel cache; empty when it is disabled.
std::string kernel_cache_dir();
/// Sets the folder (empty: disable) for kernels compiled from now on in this process.
void set_kernel_cache_dir(const std::string &dir);

struct KernelLibraryStats {
    size_t loaded = 0;    ///< kernels found on disk and loaded
    size_t compiled = 0;  ///< kernels compiled and stored
    size_t rejected = 0;  ///< entries found stale or corrupted (rebuilt)
    size_t failed = 0;    ///< kernels that fell back to JIT compilation
};
KernelLibraryStats kernel_library_stats();

class KernelRuntime;

/// A kernel loaded from the cache: its argv entry point and the runtime it runs on.
class KernelLibrary {
public:
    /// The library of the pipeline compiled with args for target (user_context and no_runtime are
    /// added), loaded from the cache or compiled into it. check, when given, runs after a fresh
    /// lowering and before the library is stored (it may throw). Returns null when the cache is
    /// disabled or the library could not be built or loaded (a warning says why); throws
    /// KernelError for a pipeline that does not compile, and what check throws. max_registers > 0
    /// limits every CUDA kernel of the library to that many registers a thread
    /// (ext::limit_kernel_registers; part of the cache key).
    static std::shared_ptr<const KernelLibrary> get(Halide::Pipeline &pipeline, const std::vector<Halide::Argument> &args,
                                                    const Halide::Target &target, const std::string &key,
                                                    const std::function<void()> &check = {}, int max_registers = 0);

    ~KernelLibrary();
    KernelLibrary(const KernelLibrary &) = delete;
    KernelLibrary &operator=(const KernelLibrary &) = delete;

    /// The arguments the entry point takes after user_context, in order (outputs last, by name).
    const std::vector<Halide::Argument> &arguments() const { return args_; }
    int num_outputs() const { return num_outputs_; }
    /// Calls the entry point: argv[0] must point to the user_context pointer. Returns Halide's code.
    int call(void **argv) const;
    const KernelRuntime &runtime() const { return *runtime_; }
    const std::string &path() const { return path_; }

private:
    KernelLibrary() = default;
    void *handle_ = nullptr;
    int (*entry_)(void **) = nullptr;
    std::vector<Halide::Argument> args_;
    int num_outputs_ = 0;
    std::shared_ptr<const KernelRuntime> runtime_;
    std::string path_;
};

/// The Halide runtime shared by the cached kernels of one target.
class KernelRuntime {
public:
    KernelRuntime(void *handle, const halide_device_interface_t *cuda_interface, std::string soname, std::string path)
        : handle_(handle), cuda_interface_(cuda_interface), soname_(std::move(soname)), path_(std::move(path)) {}
    KernelRuntime(const KernelRuntime &) = delete;
    KernelRuntime &operator=(const KernelRuntime &) = delete;
    /// The library stays loaded for the life of the process (kernels may still run on it).
    ~KernelRuntime() = default;
    /// The runtime's CUDA device interface (null for CPU targets).
    const halide_device_interface_t *cuda_interface() const { return cuda_interface_; }
    const std::string &soname() const { return soname_; }
    const std::string &path() const { return path_; }

private:
    void *handle_;
    const halide_device_interface_t *cuda_interface_;
    std::string soname_, path_;
};

/// What a cached kernel's runtime hooks read through user_context: the CUDA context and stream the
/// kernel runs on (null context: the runtime's own) and the messages of errors it raised.
struct KernelCall {
    void *cuda_context = nullptr;
    void *cuda_stream = nullptr;
    std::string error;
};

}  // namespace gsparse
