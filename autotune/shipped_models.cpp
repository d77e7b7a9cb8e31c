#include "autotune/shipped_models.h"

#include <cstdlib>
#include <filesystem>

namespace gsparse::autotune {

std::optional<std::string> shipped_model_name(const std::string &schedule) {
    if (schedule == "gpu_spmm") return "h100_spmm";
    if (schedule == "gpu_sddmm") return "h100_sddmm";
    return std::nullopt;
}

std::vector<std::string> shipped_model_dirs() {
    std::vector<std::string> dirs;
    if (const char *env = std::getenv("GSPARSE_MODELS_DIR"); env && *env) dirs.emplace_back(env);
    // The source tree first: where it still exists, its models are the ones this build came with,
    // while an installed copy may be an older version's.
#ifdef GSPARSE_SOURCE_MODELS_DIR
    dirs.emplace_back(GSPARSE_SOURCE_MODELS_DIR);
#endif
#ifdef GSPARSE_INSTALLED_MODELS_DIR
    dirs.emplace_back(GSPARSE_INSTALLED_MODELS_DIR);
#endif
    return dirs;
}

std::optional<std::string> find_shipped_model(const std::string &schedule, const std::vector<std::string> &dirs) {
    const auto name = shipped_model_name(schedule);
    if (!name) return std::nullopt;
    for (const auto &dir : dirs) {
        const std::filesystem::path prefix = std::filesystem::path(dir) / *name;
        std::error_code ec;
        if (std::filesystem::is_regular_file(prefix.string() + ".pt", ec) &&
            std::filesystem::is_regular_file(prefix.string() + ".json", ec))
            return prefix.string();
    }
    return std::nullopt;
}

ModelChoice choose_model(const std::string &arg, const std::string &schedule, bool genetic, bool have_libtorch,
                         const std::vector<std::string> &dirs) {
    if (arg == "none") return {};
    if (arg != "auto")
        return {arg, genetic ? arg : arg + " (not used: only the genetic search is seeded by a model)"};
    if (!genetic) return {};
    const char *random_start = "; the genetic search starts from random points";
    const auto name = shipped_model_name(schedule);
    if (!name) return {"", "none: no cost model ships for " + schedule + random_start};
    if (!have_libtorch) return {"", std::string("none: this build has no LibTorch") + random_start};
    if (auto found = find_shipped_model(schedule, dirs))
        return {*found, *found + " (shipped for " + schedule + "; --model none to start from random points)"};
    return {"", "none: no folder searched holds " + *name + " (set GSPARSE_MODELS_DIR)" + random_start};
}

}  // namespace gsparse::autotune
