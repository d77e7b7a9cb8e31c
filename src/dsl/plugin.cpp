// Loading user plugins (dsl/plugin.h): dlopen, ABI check, registration.
#include "dsl/plugin.h"

#include <dlfcn.h>

#include <filesystem>

#include "core/error.h"
#include "dsl/builtin_schedules.h"

namespace gsparse::dsl {
namespace {

template <class F>
std::vector<std::string> names_of(const std::map<std::string, F> &m) {
    std::vector<std::string> names;
    for (const auto &[name, f] : m) names.push_back(name);
    return names;
}

std::string join(const std::vector<std::string> &names) {
    std::string s;
    for (const auto &n : names) s += (s.empty() ? "" : ", ") + n;
    return s.empty() ? "none" : s;
}

template <class F>
void add(std::map<std::string, F> &m, const std::string &what, const std::string &name, F make) {
    if (name.empty()) fail<Error>("a plugin registered a ", what, " without a name");
    if (!make) fail<Error>("plugin ", what, " '", name, "' has no factory");
    if (!m.emplace(name, std::move(make)).second) fail<Error>("plugin ", what, " '", name, "' is registered twice");
}

template <class T, class F>
T make(const std::map<std::string, F> &m, const std::string &what, const std::string &name) {
    auto it = m.find(name);
    if (it == m.end()) fail<Error>("no plugin ", what, " named '", name, "' (registered: ", join(names_of(m)), ")");
    try {
        return it->second();
    } catch (const std::exception &e) {
        fail<Error>("plugin ", what, " '", name, "' failed to build: ", e.what());
    }
}

}  // namespace

void PluginRegistry::program(const std::string &name, std::function<SpmmProgram()> make) {
    if (edge_programs_.count(name)) fail<Error>("plugin program '", name, "' is registered twice");
    add(programs_, "program", name, std::move(make));
}
void PluginRegistry::edge_program(const std::string &name, std::function<SddmmProgram()> make) {
    if (programs_.count(name)) fail<Error>("plugin program '", name, "' is registered twice");
    add(edge_programs_, "program", name, std::move(make));
}
std::vector<std::string> PluginRegistry::edge_program_names() const { return names_of(edge_programs_); }
SddmmProgram PluginRegistry::make_edge_program(const std::string &name) const {
    return make<SddmmProgram>(edge_programs_, "per-edge program", name);
}
void PluginRegistry::edge_schedule(const std::string &name, std::function<EdgeScheduleDef()> make) {
    add(edge_schedules_, "edge schedule", name, std::move(make));
}
std::vector<std::string> PluginRegistry::edge_schedule_names() const { return names_of(edge_schedules_); }
EdgeScheduleDef PluginRegistry::make_edge_schedule(const std::string &name) const {
    if (name == default_edge_schedule().name && !edge_schedules_.count(name)) return default_edge_schedule();
    return make<EdgeScheduleDef>(edge_schedules_, "edge schedule", name);
}
void PluginRegistry::schedule(const std::string &name, std::function<ScheduleDef()> make) {
    add(schedules_, "schedule", name, std::move(make));
}
std::vector<std::string> PluginRegistry::program_names() const { return names_of(programs_); }
std::vector<std::string> PluginRegistry::schedule_names() const { return names_of(schedules_); }
SpmmProgram PluginRegistry::make_program(const std::string &name) const {
    if (edge_programs_.count(name))
        fail<Error>("plugin program '", name, "' is a per-edge (g-SDDMM-shaped) program, not a g-SpMM one");
    return make<SpmmProgram>(programs_, "program", name);
}
ScheduleDef PluginRegistry::make_schedule(const std::string &name) const {
    if (name == default_schedule().name && !schedules_.count(name)) return default_schedule();
    // The built-in schedule written with the public directives, for every plugin's programs.
    if (name == builtin_gpu_spmm_schedule().name && !schedules_.count(name)) return builtin_gpu_spmm_schedule();
    return make<ScheduleDef>(schedules_, "schedule", name);
}

Plugin load_plugin(const std::string &path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) fail<Error>("plugin '", path, "' does not exist or is not a file");
    // A relative path without a slash would be searched on the library path: name the file itself.
    const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
    void *h = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        fail<Error>("cannot load plugin '", path, "': ", why ? why : "unknown error");
    }
    Plugin plugin;
    plugin.path = path;
    plugin.handle = std::shared_ptr<void>(h, [](void *p) { dlclose(p); });
    using AbiFn = int (*)();
    using RegisterFn = void (*)(PluginRegistry &);
    auto abi = reinterpret_cast<AbiFn>(dlsym(h, "gsparse_plugin_abi_version"));
    auto reg = reinterpret_cast<RegisterFn>(dlsym(h, "gsparse_plugin_register"));
    if (!abi || !reg)
        fail<Error>("'", path, "' is not a gsparse plugin (it defines no GSPARSE_PLUGIN(registry) { ... } block)");
    if (abi() != kPluginAbiVersion)
        fail<Error>("plugin '", path, "' was built for plugin ABI ", abi(), "; this gsparse loads ABI ", kPluginAbiVersion,
                    " (rebuild it against this gsparse)");
    try {
        reg(plugin.registry);
    } catch (const std::exception &e) {
        fail<Error>("plugin '", path, "' failed to register: ", e.what());
    }
    return plugin;
}

}  // namespace gsparse::dsl
