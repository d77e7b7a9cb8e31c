// Plugins: user programs and user schedules in a shared library that gsparse's command-line tools
// load at run time (gsparse-compile --plugin), the way LLVM's opt loads pass plugins.
//
// A plugin is one C++ file built as a shared module against gsparse's headers (CMake:
// add_library(NAME MODULE file.cpp), include directories of gsparse and Halide). It does not link
// gsparse: the symbols it uses resolve against the tool that loads it, which exports them. It
// registers its programs and schedules by name:
//
//   #include "dsl/plugin.h"
//   GSPARSE_PLUGIN(registry) {
//       registry.program("weighted_max", [] {
//           gsparse::dsl::SpmmProgram p("weighted_max");
//           ...
//           return p;
//       });
//       registry.schedule("my_rows", [] { return my_schedule_def(); });
//       registry.edge_program("gat_weights", [] { ... return gsparse::dsl::SddmmProgram(...); });
//       registry.edge_schedule("edge_blocks", [] { return my_edge_schedule_def(); });
//   }
//
// load_plugin checks the plugin's ABI version (kPluginAbiVersion, bumped when SpmmProgram,
// SddmmProgram, Monoid, ScheduleDef, ScheduleContext, EdgeScheduleDef, EdgeScheduleContext or this
// registry change incompatibly) before
// calling its registration function.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dsl/user_sddmm.h"
#include "dsl/user_spmm.h"

namespace gsparse::dsl {

inline constexpr int kPluginAbiVersion = 9;

/// The programs and schedules a plugin registers, by name.
class PluginRegistry {
public:
    /// Registers a program factory; Error when the name is empty or already taken.
    void program(const std::string &name, std::function<SpmmProgram()> make);
    /// Registers a schedule factory; Error when the name is empty or already taken.
    void schedule(const std::string &name, std::function<ScheduleDef()> make);
    /// Registers a per-edge (g-SDDMM-shaped) program factory; Error when the name is empty or taken
    /// by a program of either kind.
    void edge_program(const std::string &name, std::function<SddmmProgram()> make);
    /// Registers a schedule factory for per-edge programs; Error when the name is empty or taken
    /// by an edge schedule.
    void edge_schedule(const std::string &name, std::function<EdgeScheduleDef()> make);

    std::vector<std::string> program_names() const;
    std::vector<std::string> schedule_names() const;
    std::vector<std::string> edge_program_names() const;
    std::vector<std::string> edge_schedule_names() const;
    /// A new program from the factory `name`; Error naming the registered programs when there is
    /// none of that name, or carrying the factory's error when it throws.
    SpmmProgram make_program(const std::string &name) const;
    /// The same for schedules; the default user schedule's name (default_schedule()) gives it, and
    /// "builtin_gpu_spmm" the built-in CUDA schedule written with the public directives
    /// (dsl/builtin_schedules.h), unless the plugin registers schedules of those names.
    ScheduleDef make_schedule(const std::string &name) const;
    /// The same for per-edge programs.
    SddmmProgram make_edge_program(const std::string &name) const;
    /// The same for per-edge schedules; the default's name (default_edge_schedule()) gives it.
    EdgeScheduleDef make_edge_schedule(const std::string &name) const;

private:
    std::map<std::string, std::function<SpmmProgram()>> programs_;
    std::map<std::string, std::function<ScheduleDef()>> schedules_;
    std::map<std::string, std::function<SddmmProgram()>> edge_programs_;
    std::map<std::string, std::function<EdgeScheduleDef()>> edge_schedules_;
};

/// A loaded plugin; the shared library stays loaded while any copy lives. Kernels compiled from its
/// programs may call its code (a monoid's functions, a schedule's for_graph): keep a copy (or its
/// handle) alive as long as they live.
struct Plugin {
    std::string path;
    std::shared_ptr<void> handle;
    PluginRegistry registry;
};

/// Loads the plugin at `path` and runs its registration. Error naming the file when it cannot be
/// loaded (missing, not a shared library, unresolved symbols), is not a gsparse plugin (no
/// registration function), was built for another ABI version, or its registration throws.
Plugin load_plugin(const std::string &path);

}  // namespace gsparse::dsl

/// Defines a plugin's entry points; the block that follows registers into `registry`.
#define GSPARSE_PLUGIN(registry)                                                                   \
    extern "C" int gsparse_plugin_abi_version() { return ::gsparse::dsl::kPluginAbiVersion; }       \
    extern "C" void gsparse_plugin_register(::gsparse::dsl::PluginRegistry &registry)
