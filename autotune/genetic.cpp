#include "autotune/genetic.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "core/error.h"

namespace gsparse::autotune {

GeneticSearch::GeneticSearch(const SearchSpace &space, const GeneticOptions &options) : space_(space), opt_(options) {
    if (opt_.population < 2) fail<Error>("genetic search needs a population of at least 2, got ", opt_.population);
    if (opt_.elite < 1 || opt_.elite >= opt_.population)
        fail<Error>("genetic search elite must be in [1, population), got ", opt_.elite);
    if (opt_.generations < 0) fail<Error>("genetic search generations must be >= 0, got ", opt_.generations);
    if (opt_.polish < 0) fail<Error>("genetic search polish must be >= 0, got ", opt_.polish);
    if (!(opt_.mutation >= 0 && opt_.mutation <= 1))
        fail<Error>("genetic search mutation rate must be in [0, 1], got ", opt_.mutation);
    if (space.valid.empty()) fail<Error>("genetic search over a space without valid points");
    for (const auto &p : space.valid) valid_genes_.push_back(encode(p));
}

GeneticSearch::Genes GeneticSearch::encode(const ScheduleParams &p) const {
    Genes g;
    for (const auto &knob : space_.space.knobs) {
        int64_t value = p.get(knob.name);
        auto it = std::find(knob.choices.begin(), knob.choices.end(), value);
        if (it == knob.choices.end())
            fail<ScheduleError>("value ", value, " of ", knob.name, " is not one of the space's choices");
        g.push_back(static_cast<int>(it - knob.choices.begin()));
    }
    return g;
}

ScheduleParams GeneticSearch::decode(const Genes &g) const {
    ScheduleParams p;
    p.schedule = space_.space.schedule;
    for (size_t i = 0; i < g.size(); i++) p.values[space_.space.knobs[i].name] = space_.space.knobs[i].choices[g[i]];
    return p;
}

bool GeneticSearch::valid(const Genes &g) const {
    return std::find(valid_genes_.begin(), valid_genes_.end(), g) != valid_genes_.end();
}

GeneticSearch::Genes GeneticSearch::repair(const Genes &original) const {
    // A child that differs from a listed point only in knobs it does not use is that point.
    const Genes g = encode(space_.canonical(decode(original)));
    if (std::find(valid_genes_.begin(), valid_genes_.end(), g) != valid_genes_.end()) return g;
    double best = std::numeric_limits<double>::infinity();
    const Genes *nearest = &valid_genes_.front();
    for (const Genes &v : valid_genes_) {
        double d = 0;
        for (size_t i = 0; i < g.size(); i++) {
            const double span = std::max<size_t>(1, space_.space.knobs[i].choices.size() - 1);
            const double x = (g[i] - v[i]) / span;
            d += x * x;
        }
        if (d < best) {
            best = d;
            nearest = &v;
        }
    }
    return *nearest;
}

GeneticSearch::Genes GeneticSearch::crossover(const Genes &a, const Genes &b, std::mt19937_64 &rng) const {
    std::bernoulli_distribution coin(0.5);
    Genes c(a.size());
    for (size_t i = 0; i < a.size(); i++) c[i] = coin(rng) ? a[i] : b[i];
    return c;
}

GeneticSearch::Genes GeneticSearch::mutate(Genes g, std::mt19937_64 &rng) const {
    std::bernoulli_distribution flip(opt_.mutation);
    for (size_t i = 0; i < g.size(); i++)
        if (flip(rng)) {
            std::uniform_int_distribution<int> pick(0, static_cast<int>(space_.space.knobs[i].choices.size()) - 1);
            g[i] = pick(rng);
        }
    return g;
}

size_t GeneticSearch::roulette(const std::vector<double> &fitness, std::mt19937_64 &rng) {
    const double total = std::accumulate(fitness.begin(), fitness.end(), 0.0);
    if (!(total > 0)) return std::uniform_int_distribution<size_t>(0, fitness.size() - 1)(rng);
    double x = std::uniform_real_distribution<double>(0, total)(rng);
    for (size_t i = 0; i < fitness.size(); i++) {
        x -= fitness[i];
        if (x <= 0) return i;
    }
    return fitness.size() - 1;
}

std::vector<std::pair<ScheduleParams, double>> GeneticSearch::run(
    std::vector<ScheduleParams> initial, const std::function<double(const ScheduleParams &)> &fitness,
    const std::function<void(const std::vector<ScheduleParams> &)> &prepare) {
    std::mt19937_64 rng(opt_.seed);
    std::map<Genes, double> seen;
    std::vector<std::pair<ScheduleParams, double>> evaluated;
    auto evaluate = [&](const Genes &g) {
        auto it = seen.find(g);
        if (it != seen.end()) return it->second;
        double f = fitness(decode(g));
        seen.emplace(g, f);
        evaluated.emplace_back(decode(g), f);
        return f;
    };
    // Hands the not yet evaluated points of a batch to `prepare`.
    auto prepare_batch = [&](const std::vector<Genes> &batch, size_t from) {
        if (!prepare) return;
        std::vector<ScheduleParams> fresh;
        for (size_t i = from; i < batch.size(); i++)
            if (!seen.count(batch[i])) fresh.push_back(decode(batch[i]));
        if (!fresh.empty()) prepare(fresh);
    };

    // Initial population: the given points (repaired), then random valid points.
    std::vector<Genes> pop;
    for (const auto &p : initial) {
        Genes g = repair(encode(p));
        if (std::find(pop.begin(), pop.end(), g) == pop.end()) pop.push_back(g);
        if (static_cast<int>(pop.size()) == opt_.population) break;
    }
    const int reachable = static_cast<int>(valid_genes_.size());
    std::uniform_int_distribution<size_t> any(0, valid_genes_.size() - 1);
    while (static_cast<int>(pop.size()) < std::min(opt_.population, reachable)) {
        const Genes &g = valid_genes_[any(rng)];
        if (std::find(pop.begin(), pop.end(), g) == pop.end()) pop.push_back(g);
    }
    std::vector<double> fit;
    prepare_batch(pop, 0);
    for (const Genes &g : pop) fit.push_back(evaluate(g));

    for (int gen = 0; gen < opt_.generations; gen++) {
        // Elite: the fittest survive unchanged.
        std::vector<size_t> order(pop.size());
        std::iota(order.begin(), order.end(), 0);
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return fit[a] > fit[b]; });
        std::vector<Genes> next;
        std::vector<double> next_fit;
        for (int i = 0; i < opt_.elite && i < static_cast<int>(order.size()); i++) {
            next.push_back(pop[order[i]]);
            next_fit.push_back(fit[order[i]]);
        }
        // Children: roulette-wheel parents, crossover, mutation, repair; all bred from this
        // generation, then evaluated.
        const size_t elite = next.size();
        int attempts = 0;
        while (static_cast<int>(next.size()) < static_cast<int>(pop.size()) && attempts++ < 64 * opt_.population) {
            const Genes &a = pop[roulette(fit, rng)];
            const Genes &b = pop[roulette(fit, rng)];
            Genes child = repair(mutate(crossover(a, b, rng), rng));
            if (std::find(next.begin(), next.end(), child) != next.end()) continue;
            next.push_back(child);
        }
        prepare_batch(next, elite);
        for (size_t i = elite; i < next.size(); i++) next_fit.push_back(evaluate(next[i]));
        pop = std::move(next);
        fit = std::move(next_fit);
    }
    polish(seen, evaluate, prepare_batch);
    return evaluated;
}

void GeneticSearch::polish(const std::map<Genes, double> &seen, const std::function<double(const Genes &)> &evaluate,
                           const std::function<void(const std::vector<Genes> &, size_t)> &prepare) const {
    if (seen.empty()) return;
    auto best = std::max_element(seen.begin(), seen.end(), [](const auto &a, const auto &b) { return a.second < b.second; });
    Genes center = best->first;
    double center_fit = best->second;
    int budget = opt_.polish;
    while (budget > 0) {
        // The center's valid neighbours not measured yet: each knob one choice down or up, in knob
        // order (a neighbour stands for its canonical point: a knob its kernel ignores moves nothing).
        std::vector<Genes> around;
        for (size_t i = 0; i < center.size() && static_cast<int>(around.size()) < budget; i++)
            for (int delta : {-1, 1}) {
                Genes g = center;
                g[i] += delta;
                if (g[i] < 0 || g[i] >= static_cast<int>(space_.space.knobs[i].choices.size())) continue;
                g = encode(space_.canonical(decode(g)));
                if (!valid(g)) continue;
                if (seen.count(g) || std::find(around.begin(), around.end(), g) != around.end()) continue;
                around.push_back(g);
                if (static_cast<int>(around.size()) == budget) break;
            }
        if (around.empty()) return;
        prepare(around, 0);
        bool moved = false;
        for (const Genes &g : around) {
            const double f = evaluate(g);
            budget--;
            if (f > center_fit) {
                center_fit = f;
                center = g;
                moved = true;
            }
        }
        if (!moved) return;
    }
}

}  // namespace gsparse::autotune
