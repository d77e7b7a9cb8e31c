// Replayed measurements (see replay.h).
#include "autotune/replay.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "autotune/features.h"
#include "autotune/search_space.h"
#include "core/error.h"
#include "core/tensor.h"
#include "schedules/schedule.h"

namespace gsparse::autotune {

std::function<Measurement(const ScheduleParams &)> replayed_measurements(const std::string &path, const TuningProblem &p) {
    std::ifstream in(path);
    nlohmann::json j;
    try {
        in >> j;
    } catch (const std::exception &e) {
        fail<Error>("--replay ", path, ": not JSON (", e.what(), ")");
    }
    if (!j.is_object() || !j.contains("candidates") || !j.contains("op") || !j.contains("graph"))
        fail<Error>("--replay ", path, ": not a gsparse-tune --json result");
    if (j.value("complete", true) == false)
        fail<Error>("--replay ", path, " is a sweep stopped before its end (", j.value("unmeasured_points", 0),
                    " points unmeasured); finish it with gsparse-sweep --resume");
    if (j.value("screened_points", 0) > 0)
        fail<Error>("--replay ", path, " is a screened sweep (", j.value("screened_points", 0),
                    " points left out); a replay needs every point: measure them with gsparse-sweep --resume");
    const GraphStats st = p.graph.stats();
    if (j["op"] != p.op_name() || j.value("lhs_feat", std::vector<int64_t>{}) != p.lhs_feat ||
        j["graph"].value("nodes", int64_t{-1}) != st.num_rows || j["graph"].value("edges", int64_t{-1}) != st.nnz)
        fail<Error>("--replay ", path, " records ", j["op"].dump(), " on a graph of ", j["graph"].value("nodes", -1),
                    " nodes and ", j["graph"].value("edges", -1), " edges with lhs features ",
                    j.value("lhs_feat", nlohmann::json::array()).dump(), ", not this problem (", p.op_name(), ", ",
                    st.num_rows, " nodes, ", st.nnz, " edges, lhs features ", shape_str(p.lhs_feat), ")");
    auto table = std::make_shared<std::map<std::string, Measurement>>();
    // The search asks for points of the device's schedule; recorded points of it that predate a knob
    // stand for the knob's absent_means value.
    const ScheduleSpace space = schedule_space(p);
    auto add = [&](const nlohmann::json &c) {
        Measurement m;
        m.schedule = space.complete(ScheduleParams::from_json(c));
        m.ok = c.value("ok", false);
        m.mean_ms = c.value("mean_ms", 0.0);
        m.median_ms = c.value("median_ms", 0.0);
        m.min_ms = c.value("min_ms", 0.0);
        m.run_ms = c.value("run_ms", std::vector<double>{});
        m.cut_off = c.value("cut_off", false);
        m.recorded = c.value("recorded", false);
        (*table)[m.schedule.str()] = m;
    };
    for (const auto &c : j["candidates"]) add(c);
    if (j.contains("expert_default")) add(j["expert_default"]);
    // Queries are completed the same way: the expert default lists only the knobs it sets.
    return [table, space](const ScheduleParams &q) {
        auto it = table->find(space.complete(q).str());
        if (it != table->end()) return it->second;
        Measurement m;
        m.schedule = q;
        m.error = "not measured in the replayed tune";
        return m;
    };
}

int64_t record_feature_length(const TuningProblem &p) {
    return p.layout.out_len() * std::max<int64_t>(p.layout.reduce_len, 1);
}

MeasurementRecord measurement_record(const TuningProblem &p, const Measurement &m) {
    MeasurementRecord rec;
    rec.features = candidate_features(p, m.schedule);
    rec.schedule = m.schedule;
    rec.device = p.device_label();
    rec.op = p.op_name();
    rec.graph = p.graph_name;
    rec.graph_fingerprint = p.graph.fingerprint();
    rec.feat = record_feature_length(p);
    rec.time_ms = m.mean_ms;
    return rec;
}

std::optional<Measurement> RecordedMeasurements::operator()(const ScheduleParams &q) const {
    auto it = table_->find(space_.complete(q).str());
    if (it == table_->end()) return std::nullopt;
    return it->second;
}

RecordedMeasurements recorded_measurements(const std::vector<MeasurementRecord> &records, const TuningProblem &p) {
    const ScheduleSpace space = schedule_space(p);
    auto table = std::make_shared<std::map<std::string, Measurement>>();
    const std::string device = p.device_label(), op = p.op_name();
    const uint64_t fingerprint = p.graph.fingerprint();
    const int64_t feat = record_feature_length(p);
    for (const auto &r : records) {
        if (r.device != device || r.op != op || r.graph_fingerprint != fingerprint || r.feat != feat ||
            r.schedule.schedule != space.schedule)
            continue;
        Measurement m;
        m.schedule = space.complete(r.schedule);
        m.ok = true;
        m.recorded = true;
        m.mean_ms = m.median_ms = m.min_ms = r.time_ms;
        (*table)[m.schedule.str()] = m;
    }
    return RecordedMeasurements(std::move(table), space);
}

}  // namespace gsparse::autotune
