#include "autotune/user_schedule_search.h"

#include <algorithm>
#include <exception>

#include "core/error.h"

namespace gsparse::autotune {

ScheduleParams user_point_params(const dsl::KnobSpace &def, const std::map<std::string, int64_t> &point) {
    ScheduleParams p;
    p.schedule = def.name;
    p.values = point;
    return p;
}

std::map<std::string, int64_t> user_params_point(const ScheduleParams &params) { return params.values; }

SearchSpace user_search_space(const dsl::KnobSpace &def, int features, Device device) {
    SearchSpace s;
    s.schedule = def.name;
    s.space.schedule = def.name;
    for (const auto &k : def.knobs) s.space.knobs.push_back({k.name, k.choices, "", std::nullopt});
    const auto points = def.space(features, device);
    if (points.empty())
        fail<ScheduleError>("schedule ", def.name, " has no valid point for ", features, " features on ", device_name(device));
    for (const auto &pt : points) s.valid.push_back(user_point_params(def, pt));
    const size_t total = s.space.size();
    s.rejected_count = total - points.size();
    s.expert_default = user_point_params(def, def.complete({}, features, device));
    return s;
}

namespace {

/// The genetic search from def's default point; measure(point) gives one point's median time (it
/// throws for a point that does not compile or run, which counts as unfit and is not listed).
std::vector<dsl::MeasuredPoint> genetic_points(const dsl::KnobSpace &def, int features, Device device,
                                               const GeneticOptions &options,
                                               const std::function<double(const dsl::SchedulePoint &)> &measure) {
    const SearchSpace space = user_search_space(def, features, device);
    GeneticSearch search(space, options);
    std::vector<dsl::MeasuredPoint> measured;
    auto fitness = [&](const ScheduleParams &p) -> double {
        try {
            const double ms = measure(user_params_point(p));
            measured.push_back({user_params_point(p), ms});
            return ms > 0 ? 1.0 / ms : 0.0;
        } catch (const std::exception &) {
            return 0.0;
        }
    };
    search.run({space.expert_default}, fitness);
    if (measured.empty()) fail<KernelError>("no point of schedule ", def.name, " could be measured");
    std::stable_sort(measured.begin(), measured.end(),
                     [](const dsl::MeasuredPoint &a, const dsl::MeasuredPoint &b) { return a.median_ms < b.median_ms; });
    return measured;
}

/// genetic_points with each point measured by dsl::measure_points (either shape of program).
template <class Program, class Def>
std::vector<dsl::MeasuredPoint> genetic_program_search(const Program &program, const Def &def, int features,
                                                       Device device, const Graph &g,
                                                       const std::map<std::string, Tensor> &operands, Tensor &out,
                                                       const CudaLaunch &launch, int runs,
                                                       const std::function<void()> &sync, const GeneticOptions &options) {
    return genetic_points(def, features, device, options, [&](const dsl::SchedulePoint &p) {
        return dsl::measure_points(program, def, {p}, features, device, g, operands, out, launch, runs, sync)
            .front()
            .median_ms;
    });
}

}  // namespace

std::vector<dsl::MeasuredPoint> genetic_user_search(const dsl::SpmmProgram &program, const dsl::ScheduleDef &def,
                                                    int features, Device device, const Graph &g,
                                                    const std::map<std::string, Tensor> &operands, Tensor &out,
                                                    const CudaLaunch &launch, int runs,
                                                    const std::function<void()> &sync, const GeneticOptions &options) {
    return genetic_program_search(program, def, features, device, g, operands, out, launch, runs, sync, options);
}

std::vector<dsl::MeasuredPoint> genetic_user_search(const dsl::SddmmProgram &program, const dsl::EdgeScheduleDef &def,
                                                    int features, Device device, const Graph &g,
                                                    const std::map<std::string, Tensor> &operands, Tensor &out,
                                                    const CudaLaunch &launch, int runs,
                                                    const std::function<void()> &sync, const GeneticOptions &options) {
    return genetic_program_search(program, def, features, device, g, operands, out, launch, runs, sync, options);
}

}  // namespace gsparse::autotune
