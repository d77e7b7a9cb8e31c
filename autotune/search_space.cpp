#include "autotune/search_space.h"

namespace gsparse::autotune {

template <typename Def>
static SearchSpace enumerate(const Def &def, const Problem &problem) {
    SearchSpace s;
    s.schedule = def.name;
    s.space = def.space(problem);
    // One point updated in place: a space holds up to a million points, and only the valid ones are
    // copied.
    ScheduleParams p;
    for (size_t i = 0; i < s.space.size(); i++) {
        s.space.at(i, p);
        if (auto why = def.invalid_reason(p, problem)) {
            if (s.rejected.size() < SearchSpace::kMaxRejectedExamples) s.rejected.emplace_back(p, *why);
            s.rejected_count++;
            continue;
        }
        // Every choice of an unused knob is in the space, so the canonical point is enumerated too.
        ScheduleParams c = canonical_point(def, p);
        if (!(c == p) && !def.invalid_reason(c, problem)) {
            s.aliases++;
            continue;
        }
        s.valid.push_back(p);
    }
    // Completed first: a default that leaves out knobs with an absent value (kFeatChunk = 0, ...)
    // then names the same point as the enumeration's, so a tune or sweep meets it only once.
    s.expert_default = canonical_point(def, s.space.complete(def.default_params(problem)));
    if (def.canonical) s.canonical = def.canonical;
    return s;
}

SearchSpace build_search_space(const TuningProblem &problem) {
    Problem p = problem.schedule_problem();
    if (problem.kind == OpKind::Spmm) return enumerate(default_spmm_schedule(problem.device), p);
    return enumerate(default_sddmm_schedule(problem.device), p);
}

ScheduleSpace schedule_space(const TuningProblem &problem) {
    Problem p = problem.schedule_problem();
    if (problem.kind == OpKind::Spmm) return default_spmm_schedule(problem.device).space(p);
    return default_sddmm_schedule(problem.device).space(p);
}

}  // namespace gsparse::autotune
