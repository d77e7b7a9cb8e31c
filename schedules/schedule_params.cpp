#include "schedules/schedule_params.h"

#include <cctype>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"

namespace gsparse {

int64_t ScheduleParams::get(const std::string &knob) const {
    auto it = values.find(knob);
    if (it == values.end()) fail<ScheduleError>("schedule ", schedule, " has no value for parameter '", knob, "'");
    return it->second;
}

int64_t ScheduleParams::get_or(const std::string &knob, int64_t fallback) const {
    auto it = values.find(knob);
    return it == values.end() ? fallback : it->second;
}

std::string ScheduleParams::str() const {
    // Appended, not streamed: kernel keys are built from this text on every call.
    std::string s = schedule;
    s += '{';
    bool first = true;
    for (const auto &[k, v] : values) {
        if (!first) s += ", ";
        s += k;
        s += '=';
        s += std::to_string(v);
        first = false;
    }
    s += '}';
    return s;
}

nlohmann::json ScheduleParams::to_json() const {
    nlohmann::json j;
    j["schedule"] = schedule;
    j["params"] = nlohmann::json::object();
    for (const auto &[k, v] : values) j["params"][k] = v;
    return j;
}

ScheduleParams ScheduleParams::from_json(const nlohmann::json &j) {
    ScheduleParams p;
    if (!j.is_object() || !j.contains("schedule") || !j["schedule"].is_string())
        fail<ScheduleError>("schedule JSON needs a string field 'schedule', got ", j.dump());
    p.schedule = j["schedule"].get<std::string>();
    if (j.contains("params")) {
        if (!j["params"].is_object()) fail<ScheduleError>("schedule JSON field 'params' must be an object");
        for (const auto &[k, v] : j["params"].items()) {
            if (!v.is_number_integer())
                fail<ScheduleError>("schedule parameter '", k, "' must be an integer, got ", v.dump());
            p.values[k] = v.get<int64_t>();
        }
    }
    return p;
}

ScheduleParams ScheduleParams::parse(const std::string &text) {
    ScheduleParams p;
    size_t open = text.find_first_of("{:");
    p.schedule = text.substr(0, open);
    if (p.schedule.empty()) fail<ScheduleError>("schedule text '", text, "' has no schedule name");
    if (open == std::string::npos) return p;
    std::string body = text.substr(open + 1);
    if (text[open] == '{') {
        if (body.empty() || body.back() != '}') fail<ScheduleError>("schedule text '", text, "' lacks a closing '}'");
        body.pop_back();
    }
    std::stringstream ss(body);
    std::string item;
    while (std::getline(ss, item, ',')) {
        auto trim = [](std::string s) {
            while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.erase(s.begin());
            while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
            return s;
        };
        item = trim(item);
        if (item.empty()) continue;
        size_t eq = item.find('=');
        if (eq == std::string::npos) fail<ScheduleError>("schedule parameter '", item, "' is not of the form name=value");
        std::string k = trim(item.substr(0, eq)), v = trim(item.substr(eq + 1));
        try {
            size_t used = 0;
            long long x = std::stoll(v, &used);
            if (used != v.size()) throw std::invalid_argument(v);
            p.values[k] = x;
        } catch (const std::exception &) {
            fail<ScheduleError>("schedule parameter '", k, "' has a non-integer value '", v, "'");
        }
    }
    return p;
}

size_t ScheduleSpace::size() const {
    size_t n = 1;
    for (const auto &k : knobs) n *= k.choices.size();
    return n;
}

ScheduleParams ScheduleSpace::at(size_t i) const {
    ScheduleParams p;
    at(i, p);
    return p;
}

void ScheduleSpace::at(size_t i, ScheduleParams &point) const {
    point.schedule = schedule;
    for (const auto &k : knobs) {
        point.values[k.name] = k.choices[i % k.choices.size()];
        i /= k.choices.size();
    }
}

const ScheduleKnob &ScheduleSpace::knob(const std::string &name) const {
    for (const auto &k : knobs)
        if (k.name == name) return k;
    fail<ScheduleError>("schedule ", schedule, " has no parameter '", name, "'");
}

ScheduleParams ScheduleSpace::complete(ScheduleParams p) const {
    if (p.schedule != schedule) return p;
    for (const auto &k : knobs)
        if (k.absent_means && !p.values.count(k.name)) p.values[k.name] = *k.absent_means;
    return p;
}

}  // namespace gsparse
