#include "core/error.h"
#include "schedules/cpu_schedules.h"
#include "schedules/gpu_schedules.h"
#include "schedules/schedule.h"

namespace gsparse {

const std::vector<SpmmScheduleDef> &spmm_schedules() {
    static const std::vector<SpmmScheduleDef> defs = {cpu_spmm_schedule(), gpu_spmm_schedule()};
    return defs;
}

const std::vector<SddmmScheduleDef> &sddmm_schedules() {
    static const std::vector<SddmmScheduleDef> defs = {cpu_sddmm_schedule(), gpu_sddmm_schedule()};
    return defs;
}

template <typename Def>
static const Def &find_def(const std::vector<Def> &defs, const std::string &name, const char *kind) {
    std::string known;
    for (const auto &d : defs) {
        if (d.name == name) return d;
        known += (known.empty() ? "" : ", ") + d.name;
    }
    fail<ScheduleError>("unknown ", kind, " schedule '", name, "' (known: ", known, ")");
}

template <typename Def>
static const Def &find_default(const std::vector<Def> &defs, Device device, const char *kind) {
    for (const auto &d : defs)
        if (d.device == device) return d;
    fail<ScheduleError>("no ", kind, " schedule for device ", device_name(device));
}

const SpmmScheduleDef &spmm_schedule(const std::string &name) { return find_def(spmm_schedules(), name, "g-SpMM"); }
const SddmmScheduleDef &sddmm_schedule(const std::string &name) {
    return find_def(sddmm_schedules(), name, "g-SDDMM");
}
const SpmmScheduleDef &default_spmm_schedule(Device device) { return find_default(spmm_schedules(), device, "g-SpMM"); }
const SddmmScheduleDef &default_sddmm_schedule(Device device) {
    return find_default(sddmm_schedules(), device, "g-SDDMM");
}

template <typename Algorithm>
void check_schedule(const ScheduleDef<Algorithm> &def, const ScheduleParams &params, const Problem &problem) {
    if (params.schedule != def.name)
        fail<ScheduleError>("parameters for schedule '", params.schedule, "' given to schedule '", def.name, "'");
    for (const auto &knob : def.space(problem).knobs)
        if (!params.values.count(knob.name) && !knob.absent_means)
            fail<ScheduleError>("schedule ", def.name, " is missing parameter '", knob.name, "'");
    for (const auto &[k, v] : params.values) {
        bool known = false;
        for (const auto &knob : def.space(problem).knobs) known |= knob.name == k;
        if (!known) fail<ScheduleError>("schedule ", def.name, " has no parameter '", k, "'");
    }
    if (auto why = def.invalid_reason(params, problem))
        fail<ScheduleError>("invalid schedule ", params.str(), ": ", *why);
}

template void check_schedule(const SpmmScheduleDef &, const ScheduleParams &, const Problem &);
template void check_schedule(const SddmmScheduleDef &, const ScheduleParams &, const Problem &);

}  // namespace gsparse
