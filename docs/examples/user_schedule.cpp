// A user schedule with its own knobs (docs/dsl.md): the user program "weighted sum" (x[u] times an
// edge weight, summed) under the default schedule of user programs and under a schedule written
// here, every valid point of both measured on a graph by search_schedule (CPU), fastest first; the
// best point of each is checked against the other. Prints OK when they agree.
//
//   gsparse-example-user-schedule [graph file] [features]     (a random graph and 32 without them)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "dsl/user_spmm.h"

using namespace gsparse;
using dsl::At;

int main(int argc, char **argv) {
    Graph g = argc > 1 ? Graph::load(argv[1]) : [] {
        std::mt19937 gen(3);
        std::vector<index_t> src, dst;
        for (int i = 0; i < 20000; ++i) {
            src.push_back(static_cast<index_t>(gen() % 2000));
            dst.push_back(static_cast<index_t>(gen() % 2000));
        }
        return Graph::from_edges(2000, src, dst);
    }();
    const int F = argc > 2 ? std::atoi(argv[2]) : 32;
    std::mt19937 gen(1);
    std::normal_distribution<float> d;
    Tensor x = Tensor::empty({g.num_src(), F}, DType::F32), w = Tensor::empty({g.num_edges(), 1}, DType::F32);
    for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = d(gen);
    for (int64_t i = 0; i < w.numel(); ++i) w.data_as<float>()[i] = d(gen);

    dsl::SpmmProgram p("weighted_sum");
    p.message(p.operand("x", At::Src) * p.operand("w", At::Edge, true));
    p.reduce(dsl::Monoid::sum());

    // A schedule of one's own: rows in tasks of `rows` rows, in parallel or not, features in
    // vectors of `lanes`, and the row's neighbour loop unrolled by `unroll` (a knob the default
    // schedule does not have).
    dsl::ScheduleDef mine;
    mine.name = "rows_lanes_unroll";
    mine.knobs = {{"rows", {8, 32, 128}, 32}, {"parallel", {0, 1}, 1}, {"lanes", {1, 8}, 8}, {"unroll", {1, 2}, 1}};
    mine.why_invalid = [](const std::map<std::string, int64_t> &pt, int features, Device device) -> std::string {
        if (device != Device::CPU) return "a CPU schedule";
        if (pt.at("lanes") > features) return "more lanes than features";
        return "";
    };
    mine.apply = [](dsl::ScheduleContext &c) {
        Halide::Var vo("vo"), vi("vi");
        c.out.split(c.v, vo, vi, static_cast<int>(c.knob("rows")), Halide::TailStrategy::GuardWithIf);
        if (c.knob("parallel")) c.out.parallel(vo);
        c.acc.compute_at(c.out, vi);
        if (const int lanes = static_cast<int>(c.knob("lanes")); lanes > 1) {
            c.acc.vectorize(c.f, lanes, Halide::TailStrategy::GuardWithIf);
            c.acc.update().vectorize(c.f, lanes, Halide::TailStrategy::GuardWithIf);
        }
        if (const int u = static_cast<int>(c.knob("unroll")); u > 1)
            c.acc.update().unroll(c.k, u, Halide::TailStrategy::GuardWithIf);
    };

    Tensor out = Tensor::empty({g.num_dst(), F}, DType::F32);
    const std::map<std::string, Tensor> operands = {{"x", x}, {"w", w}};
    auto show = [](const dsl::ScheduleDef &def, const std::vector<dsl::MeasuredPoint> &ranked) {
        std::printf("%s: %zu points, fastest first\n", def.name.c_str(), ranked.size());
        for (size_t i = 0; i < ranked.size() && i < 5; ++i)
            std::printf("  %8.3f ms  %s\n", ranked[i].median_ms, dsl::point_str(def, ranked[i].point).c_str());
    };
    auto theirs = dsl::search_schedule(p, dsl::default_schedule(), F, Device::CPU, g, operands, out);
    show(dsl::default_schedule(), theirs);
    auto ours = dsl::search_schedule(p, mine, F, Device::CPU, g, operands, out);
    show(mine, ours);

    Tensor a = Tensor::empty({g.num_dst(), F}, DType::F32), b = Tensor::empty({g.num_dst(), F}, DType::F32);
    p.compile(F, Device::CPU, dsl::default_schedule(), theirs[0].point).run(g, operands, a);
    p.compile(F, Device::CPU, mine, ours[0].point).run(g, operands, b);
    double worst = 0;
    for (int64_t i = 0; i < a.numel(); ++i)
        worst = std::max(worst, std::abs(double(a.data_as<float>()[i]) - b.data_as<float>()[i]) /
                                    (1.0 + std::abs(double(a.data_as<float>()[i]))));
    std::printf("best of %s: %.3f ms; best of %s: %.3f ms; results differ by %.2e\n", mine.name.c_str(),
                ours[0].median_ms, dsl::default_schedule().name.c_str(), theirs[0].median_ms, worst);
    if (!(worst < 1e-5)) {
        std::printf("MISMATCH\n");
        return 1;
    }
    std::printf("OK\n");
    return 0;
}
