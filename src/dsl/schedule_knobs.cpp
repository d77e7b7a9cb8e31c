#include "dsl/schedule_knobs.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"

namespace gsparse::dsl {

SchedulePoint KnobSpace::complete(const SchedulePoint &point, int features, Device device) const {
    SchedulePoint full;
    for (const Knob &k : knobs) full[k.name] = k.default_value;
    for (const auto &[knob_name, value] : point) {
        const Knob *knob = nullptr;
        for (const Knob &k : knobs) knob = k.name == knob_name ? &k : knob;
        if (!knob) fail<ScheduleError>("schedule ", name, " has no knob '", knob_name, "'");
        if (std::find(knob->choices.begin(), knob->choices.end(), value) == knob->choices.end())
            fail<ScheduleError>("schedule ", name, ": ", knob_name, " = ", value, " is not one of its choices");
        full[knob_name] = value;
    }
    if (why_invalid) {
        const std::string why = why_invalid(full, features, device);
        if (!why.empty())
            fail<ScheduleError>("schedule point ", point_str(*this, full), " is invalid for ", features, " features on ",
                                device_name(device), ": ", why);
    }
    return full;
}

std::vector<SchedulePoint> KnobSpace::space(int features, Device device) const {
    std::vector<SchedulePoint> points = {{}};
    for (const Knob &k : knobs) {
        std::vector<SchedulePoint> next;
        for (const auto &p : points)
            for (int64_t c : k.choices) {
                auto q = p;
                q[k.name] = c;
                next.push_back(std::move(q));
            }
        points = std::move(next);
    }
    std::vector<SchedulePoint> valid;
    for (auto &p : points)
        if (!why_invalid || why_invalid(p, features, device).empty()) valid.push_back(std::move(p));
    return valid;
}

std::string point_str(const KnobSpace &def, const SchedulePoint &point) {
    std::string s = def.name + "{";
    bool first = true;
    for (const auto &[k, v] : point) {
        if (!first) s += ", ";
        s += k + "=" + std::to_string(v);
        first = false;
    }
    return s + "}";
}

int64_t KnobValues::knob(const std::string &name) const {
    auto it = knobs.find(name);
    if (it == knobs.end()) fail<ScheduleError>("schedule has no knob '", name, "'");
    return it->second;
}

void check_search(int runs, Device device, const std::function<void()> &sync) {
    if (runs < 1) fail<ShapeError>("search_schedule: runs must be at least 1, got ", runs);
    if (device == Device::CUDA && !sync)
        fail<ShapeError>("search_schedule on CUDA needs sync (a function that waits for the launch's stream)");
}

double median_run_ms(const std::function<void()> &run, int runs, const std::function<void()> &sync) {
    if (runs < 1) fail<ShapeError>("search_schedule: runs must be at least 1, got ", runs);
    auto once = [&] {
        run();
        if (sync) sync();
    };
    once();  // warm-up (compiles CUDA kernels)
    std::vector<double> ms;
    for (int i = 0; i < runs; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        once();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::nth_element(ms.begin(), ms.begin() + static_cast<long>(ms.size() / 2), ms.end());
    return ms[ms.size() / 2];
}

}  // namespace gsparse::dsl
