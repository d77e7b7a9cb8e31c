// The cost models that ship with gsparse, and how a tool finds the one for a schedule.
//
// autotune/models/ holds models trained on H100 measurements (autotune/models/README.md); `cmake
// --install` copies them to share/gsparse/models. gsparse-tune's `--model auto` (its default) looks
// a schedule's model up here, so the genetic search is seeded by a cost model without any option.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gsparse::autotune {

/// The file prefix of the model shipped for a schedule ("h100_spmm" for gpu_spmm, "h100_sddmm" for
/// gpu_sddmm), or nullopt when none ships for it (the CPU schedules).
std::optional<std::string> shipped_model_name(const std::string &schedule);

/// The folders searched for shipped models, in order: $GSPARSE_MODELS_DIR when set, the source
/// tree's autotune/models this build came from, and the installed share/gsparse/models.
std::vector<std::string> shipped_model_dirs();

/// The prefix (PREFIX.pt and PREFIX.json both present) of the model shipped for `schedule` in the
/// first of `dirs` that has it; nullopt when no model ships for the schedule or no folder has one.
std::optional<std::string> find_shipped_model(const std::string &schedule,
                                              const std::vector<std::string> &dirs = shipped_model_dirs());

/// What a tool's `--model ARG` means for a search of `schedule`.
struct ModelChoice {
    std::string prefix;  ///< the model to load; empty: none
    std::string line;    ///< which model, and why none, for the tool's summary; empty when no model applies
};

/// ARG is a model prefix (loaded as given; the line says when the search does not use it), "none",
/// or "auto": the model shipped for `schedule` when the search is genetic (the only one a model
/// seeds), one ships for the schedule, this build has LibTorch and one of `dirs` holds it. Without
/// one, `line` says why the search starts from random points.
ModelChoice choose_model(const std::string &arg, const std::string &schedule, bool genetic, bool have_libtorch,
                         const std::vector<std::string> &dirs = shipped_model_dirs());

}  // namespace gsparse::autotune
