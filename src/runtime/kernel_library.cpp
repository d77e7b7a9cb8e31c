#include "runtime/kernel_library.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "halide_ext/kernel_register_limit.h"
#include "runtime/primary_context.h"

#ifndef GSPARSE_CXX_COMPILER
#define GSPARSE_CXX_COMPILER ""
#endif

extern char **environ;

namespace gsparse {

namespace fs = std::filesystem;

namespace {

// Bumped when the layout of cache entries or the calling convention changes.
constexpr const char *kCacheFormat = "gsparse-kernel-cache 1";

std::mutex &state_mutex() {
    static std::mutex mu;
    return mu;
}

struct DirSetting {
    bool set = false;
    std::string dir;
};

DirSetting &dir_setting() {
    static DirSetting s;
    return s;
}

std::atomic<size_t> n_loaded{0}, n_compiled{0}, n_rejected{0}, n_failed{0};

uint64_t fnv1a(const void *data, size_t n, uint64_t h = 1469598103934665603ull) {
    const auto *p = static_cast<const unsigned char *>(data);
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

std::string hex(uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

std::string hash_strings(std::initializer_list<std::string> parts) {
    uint64_t h = 1469598103934665603ull;
    for (const std::string &s : parts) {
        h = fnv1a(s.data(), s.size(), h);
        h = fnv1a("\0", 1, h);
    }
    return hex(h);
}

/// path, size and modification time of the binary holding addr. The loader names the main program
/// by the path it was started with, which may be relative (and then depends on the working
/// directory, or fails to stat after a chdir): that binary is named by /proc/self/exe instead, so
/// that one binary has one identity however it is started and a rebuilt one never matches.
std::string binary_identity(const void *addr) {
    Dl_info info{};
    if (!dladdr(addr, &info) || !info.dli_fname) return "?";
    std::string path = info.dli_fname;
    if (path.empty() || path[0] != '/') {
        std::error_code ec;
        const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
        if (!ec) path = exe.string();
    }
    std::ostringstream s;
    s << path;
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) s << " " << st.st_size << " " << st.st_mtim.tv_sec << "." << st.st_mtim.tv_nsec;
    else s << " unknown " << ::getpid();  // shared with no other process
    return s.str();
}

/// The builds of gsparse and Halide in this process (the binaries holding their code).
const std::string &build_id() {
    static const std::string id = [] {
        using RuntimeFn = void (*)(const std::string &, const Halide::Target &);
        const RuntimeFn halide_fn = &Halide::compile_standalone_runtime;
        return std::string(kCacheFormat) + " | " + binary_identity(reinterpret_cast<const void *>(&kernel_cache_dir)) +
               " | " + binary_identity(reinterpret_cast<const void *>(halide_fn));
    }();
    return id;
}

void warn_once(const std::string &message) {
    static std::once_flag once;
    std::call_once(once, [&] {
        std::fprintf(stderr, "gsparse: %s; kernels are compiled in memory instead (set GSPARSE_KERNEL_CACHE=off "
                             "to silence this)\n", message.c_str());
    });
}

bool executable(const std::string &path) { return !path.empty() && ::access(path.c_str(), X_OK) == 0; }

/// The C compiler driver that links cached kernels, or "" when none is found.
std::string find_linker() {
    if (const char *env = std::getenv("GSPARSE_LINKER"); env && *env) return env;
    if (executable(GSPARSE_CXX_COMPILER)) return GSPARSE_CXX_COMPILER;
    const char *path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "/usr/bin:/bin");
    std::string d;
    while (std::getline(dirs, d, ':'))
        for (const char *name : {"cc", "c++", "gcc", "g++", "clang"})
            if (executable(d + "/" + name)) return d + "/" + name;
    return "";
}

/// Runs argv[0] with its output in log; returns the exit status (-1 when it could not start).
int run_tool(const std::vector<std::string> &argv, const std::string &log) {
    std::vector<char *> args;
    for (const std::string &a : argv) args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid = 0;
    int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return -1;
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string read_text(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

bool file_checksum(const std::string &path, uint64_t &size, uint64_t &sum) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return false;
    std::vector<char> buf(1 << 16);
    size = 0;
    sum = 1469598103934665603ull;
    while (f) {
        f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        const std::streamsize n = f.gcount();
        if (n <= 0) break;
        sum = fnv1a(buf.data(), static_cast<size_t>(n), sum);
        size += static_cast<uint64_t>(n);
    }
    return true;
}

std::string sidecar_text(const std::string &key, const std::string &target, uint64_t size, uint64_t sum) {
    std::ostringstream s;
    s << kCacheFormat << "\nkey " << key << "\ntarget " << target << "\nsize " << size << "\nfnv " << hex(sum) << "\n";
    return s.str();
}

/// Whether lib is a whole entry for key and target: its sidecar names them and the library's size
/// and checksum. An entry that exists but fails the check is counted as rejected.
bool valid_entry(const std::string &lib, const std::string &sidecar, const std::string &key, const std::string &target) {
    if (!fs::exists(sidecar) || !fs::exists(lib)) return false;
    uint64_t size = 0, sum = 0;
    if (file_checksum(lib, size, sum) && read_text(sidecar) == sidecar_text(key, target, size, sum)) return true;
    ++n_rejected;
    return false;
}

/// A name unique to this process and thread, for files renamed into place.
std::string temp_suffix() {
    std::ostringstream s;
    s << ".tmp" << ::getpid() << "-" << std::hash<std::thread::id>{}(std::this_thread::get_id());
    return s.str();
}

/// Writes text to path through a temporary file and a rename.
void write_atomically(const std::string &path, const std::string &text) {
    const std::string tmp = path + temp_suffix();
    {
        std::ofstream f(tmp, std::ios::binary);
        f << text;
        if (!f) fail<Error>("cannot write ", tmp);
    }
    fs::rename(tmp, path);
}

/// Links objects (and extra flags) into lib through a temporary file; returns "" or why it failed.
std::string link_shared(const std::string &linker, const std::vector<std::string> &inputs,
                        const std::vector<std::string> &flags, const std::string &lib) {
    const std::string tmp = lib + temp_suffix();
    const std::string log = tmp + ".log";
    std::vector<std::string> argv = {linker, "-shared", "-o", tmp};
    argv.insert(argv.end(), inputs.begin(), inputs.end());
    argv.insert(argv.end(), flags.begin(), flags.end());
    const int rc = run_tool(argv, log);
    std::string why;
    if (rc != 0) {
        why = linker + " -shared failed (exit " + std::to_string(rc) + "): " + read_text(log);
        std::error_code ec;
        fs::remove(tmp, ec);
    } else {
        std::error_code ec;
        fs::rename(tmp, lib, ec);
        if (ec) why = "cannot rename " + tmp + ": " + ec.message();
    }
    std::error_code ec;
    fs::remove(log, ec);
    return why;
}

using AcquireFn = int (*)(void *, void **, bool);
using ReleaseFn = int (*)(void *);
using StreamFn = int (*)(void *, void *, void **);
using ErrorFn = void (*)(void *, const char *);

// Hooks of cached runtimes: user_context is always a KernelCall. A call without a CUDA context runs
// in device 0's primary context on its default stream, as JIT pipelines without one do
// (cuda_launch.cpp): device memory, kernels and synchronisation of such calls all meet there,
// whichever runtime (the JIT's or a cached library's) runs them.
int hook_acquire(void *uc, void **ctx, bool) {
    auto *call = static_cast<KernelCall *>(uc);
    *ctx = context_or_primary(call ? call->cuda_context : nullptr, call ? &call->error : nullptr);
    return *ctx ? 0 : -1;
}

int hook_release(void *) { return 0; }

int hook_stream(void *uc, void *, void **stream) {
    auto *call = static_cast<KernelCall *>(uc);
    *stream = call && call->cuda_context ? call->cuda_stream : nullptr;
    return 0;
}

void hook_error(void *uc, const char *message) {
    auto *call = static_cast<KernelCall *>(uc);
    if (!call) {
        std::fprintf(stderr, "gsparse kernel: %s\n", message);
        return;
    }
    if (!call->error.empty()) call->error += "; ";
    call->error += message;
    while (!call->error.empty() && (call->error.back() == '\n' || call->error.back() == ' ')) call->error.pop_back();
}

template <typename F>
F symbol(void *handle, const char *name) {
    return reinterpret_cast<F>(::dlsym(handle, name));
}

/// The runtime of target (with user_context), loaded from dir or built into it; null with why set.
std::shared_ptr<const KernelRuntime> runtime_for(const Halide::Target &target, const std::string &dir,
                                                 const std::string &linker, std::string &why) {
    static std::map<std::string, std::shared_ptr<const KernelRuntime>> loaded;
    const std::string tstr = target.to_string();
    std::lock_guard<std::mutex> lock(state_mutex());
    const std::string id = dir + "|" + tstr;
    if (auto it = loaded.find(id); it != loaded.end()) return it->second;

    // The folder is part of the name: a kernel's dependency resolves by soname to a runtime already
    // loaded, which must be the one of its own folder.
    const std::string h = hash_strings({build_id(), tstr, dir});
    const std::string soname = "libgsparse-halide-runtime-" + h + ".so";
    const std::string lib = dir + "/" + soname, sidecar = lib + ".key";
    const std::string key = "halide runtime";
    if (!valid_entry(lib, sidecar, key, tstr)) {
        const std::string obj = lib + temp_suffix() + ".o";
        try {
            Halide::compile_standalone_runtime(obj, target);
        } catch (const Halide::Error &e) {
            why = std::string("compiling the Halide runtime failed: ") + e.what();
            return nullptr;
        }
        why = link_shared(linker, {obj}, {"-Wl,-soname," + soname, "-ldl", "-lpthread"}, lib);
        std::error_code ec;
        fs::remove(obj, ec);
        if (!why.empty()) return nullptr;
        uint64_t size = 0, sum = 0;
        if (!file_checksum(lib, size, sum)) {
            why = "cannot read " + lib;
            return nullptr;
        }
        write_atomically(sidecar, sidecar_text(key, tstr, size, sum));
    }
    void *handle = ::dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        why = std::string("cannot load ") + lib + ": " + ::dlerror();
        return nullptr;
    }
    auto set_error = symbol<ErrorFn (*)(ErrorFn)>(handle, "halide_set_error_handler");
    if (!set_error) {
        why = lib + " is not a Halide runtime";
        return nullptr;
    }
    set_error(hook_error);
    const halide_device_interface_t *iface = nullptr;
    if (target.has_feature(Halide::Target::CUDA)) {
        auto set_acquire = symbol<AcquireFn (*)(AcquireFn)>(handle, "halide_set_cuda_acquire_context");
        auto set_release = symbol<ReleaseFn (*)(ReleaseFn)>(handle, "halide_set_cuda_release_context");
        auto set_stream = symbol<StreamFn (*)(StreamFn)>(handle, "halide_set_cuda_get_stream");
        auto get_iface = symbol<const halide_device_interface_t *(*)()>(handle, "halide_cuda_device_interface");
        auto reuse = symbol<int (*)(void *, bool)>(handle, "halide_reuse_device_allocations");
        if (!set_acquire || !set_release || !set_stream || !get_iface) {
            why = lib + " lacks the Halide CUDA runtime";
            return nullptr;
        }
        set_acquire(hook_acquire);
        set_release(hook_release);
        set_stream(hook_stream);
        iface = get_iface();
        // Device buffers of intermediate stages are kept between calls instead of reallocated.
        if (reuse) reuse(nullptr, true);
    }
    auto rt = std::make_shared<const KernelRuntime>(handle, iface, soname, lib);
    loaded[id] = rt;
    return rt;
}

}  // namespace

std::string kernel_cache_dir() {
    {
        std::lock_guard<std::mutex> lock(state_mutex());
        if (dir_setting().set) return dir_setting().dir;
    }
    if (const char *env = std::getenv("GSPARSE_KERNEL_CACHE")) {
        const std::string v = env;
        if (v == "off" || v == "0" || v == "OFF" || v == "false") return "";
        if (!v.empty()) return v;
    }
    if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/gsparse/kernels";
    if (const char *home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/gsparse/kernels";
    return "";
}

void set_kernel_cache_dir(const std::string &dir) {
    std::lock_guard<std::mutex> lock(state_mutex());
    dir_setting().set = true;
    dir_setting().dir = dir;
}

KernelLibraryStats kernel_library_stats() {
    KernelLibraryStats s;
    s.loaded = n_loaded;
    s.compiled = n_compiled;
    s.rejected = n_rejected;
    s.failed = n_failed;
    return s;
}

KernelLibrary::~KernelLibrary() = default;  // the library stays loaded (see KernelRuntime)

int KernelLibrary::call(void **argv) const { return entry_(argv); }

std::shared_ptr<const KernelLibrary> KernelLibrary::get(Halide::Pipeline &pipeline,
                                                        const std::vector<Halide::Argument> &args,
                                                        const Halide::Target &target, const std::string &key,
                                                        const std::function<void()> &check,
                                                        int max_registers) {
    const std::string dir = kernel_cache_dir();
    if (dir.empty()) return nullptr;
    auto give_up = [](const std::string &why) -> std::shared_ptr<const KernelLibrary> {
        ++n_failed;
        warn_once(why);
        return nullptr;
    };
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || ::access(dir.c_str(), W_OK) != 0) return give_up("the kernel cache folder " + dir + " is not writable");
    static const std::string linker = find_linker();
    if (linker.empty()) return give_up("no C compiler driver found to link cached kernels (set GSPARSE_LINKER)");

    const Halide::Target ktarget =
        target.with_feature(Halide::Target::UserContext).with_feature(Halide::Target::NoRuntime);
    const Halide::Target rtarget = target.with_feature(Halide::Target::UserContext);
    std::string why;
    auto rt = runtime_for(rtarget, dir, linker, why);
    if (!rt) return give_up(why);

    const std::string tstr = ktarget.to_string();
    const std::string h =
        hash_strings({build_id(), key, tstr, max_registers > 0 ? "maxnreg=" + std::to_string(max_registers) : ""});
    const std::string fn = "gsparse_kernel_" + h;
    const std::string lib = dir + "/" + fn + ".so", sidecar = lib + ".key";

    std::shared_ptr<KernelLibrary> k(new KernelLibrary());
    k->args_ = args;
    for (const Halide::Func &f : pipeline.outputs()) k->num_outputs_ += f.outputs();
    k->runtime_ = rt;
    k->path_ = lib;

    if (valid_entry(lib, sidecar, key, tstr)) {
        ++n_loaded;
    } else {
        const std::string obj = lib + temp_suffix() + ".o";
        // A pipeline that does not compile, and check's errors, reach the caller.
        try {
            Halide::Module m = pipeline.compile_to_module(args, fn, ktarget);
            ext::limit_kernel_registers(m, max_registers);
            m.compile({{Halide::OutputFileType::object, obj}});
        } catch (const Halide::Error &e) {
            fail<KernelError>("compiling ", key, " failed: ", e.what());
        }
        try {
            if (check) check();
        } catch (...) {
            fs::remove(obj, ec);
            throw;
        }
        why = link_shared(linker, {obj, rt->path()}, {}, lib);
        fs::remove(obj, ec);
        if (!why.empty()) return give_up(why);
        uint64_t size = 0, sum = 0;
        if (!file_checksum(lib, size, sum)) return give_up("cannot read " + lib);
        write_atomically(sidecar, sidecar_text(key, tstr, size, sum));
        ++n_compiled;
    }
    // The runtime is already loaded under its soname, so the kernel's dependency resolves to it.
    k->handle_ = ::dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!k->handle_) return give_up(std::string("cannot load ") + lib + ": " + ::dlerror());
    k->entry_ = symbol<int (*)(void **)>(k->handle_, (fn + "_argv").c_str());
    if (!k->entry_) return give_up(lib + " has no entry point " + fn + "_argv");
    return k;
}

}  // namespace gsparse
