// gsparse-train-cost-model: trains the autotuner's cost model on measurement records.
//
//   gsparse-train-cost-model --records h100.jsonl --out models/h100 --holdout-graph reddit
//
// writes models/h100.pt and models/h100.json and prints the Pearson correlation of predicted and
// measured (per-problem normalized) times on the training and the held-out records.
//
//   gsparse-train-cost-model --evaluate models/h100 --records sweep.jsonl
//
// trains nothing: it scores a saved model on the records, problem by problem (Pearson, and the
// measured time of the model's top-1 and best-of-top-5 picks over the best measured time).
//
//   gsparse-train-cost-model --sweep-data autotune/selector/data/h100-zoo-train-2026-11-26.json.gz ...
//
// takes the default selector's sweep data (autotune/sweep_data.h) as records as well.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "autotune/cost_model.h"
#include "autotune/features.h"
#include "autotune/records.h"
#include "autotune/sweep_data.h"
#include "core/error.h"

using namespace gsparse;
using namespace gsparse::autotune;

namespace {

std::string fmt_pearson(double r) {
    if (!std::isfinite(r)) return "n/a";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f", r);
    return buf;
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<std::string> record_files, sweep_files, holdout_graphs;
    std::string out;
    TrainOptions opt;
    opt.log_every = 25;
    double holdout_fraction = 0;
    bool quiet = false;

    CLI::App app{"gsparse-train-cost-model: train the autotuner's cost model on measurement records (JSON Lines)"};
    app.set_version_flag("--version", "gsparse-train-cost-model 0.1.0");
    app.add_option("--records", record_files, "records file (JSON Lines); repeat for several")
        ->check(CLI::ExistingFile);
    app.add_option("--sweep-data", sweep_files,
                   "the default selector's sweep data (autotune/selector/collect_sweeps.py; features from the "
                   "stored graph statistics); repeat for several")
        ->check(CLI::ExistingFile);
    std::string evaluate;
    auto *out_opt = app.add_option("--out", out, "model prefix: writes PREFIX.pt and PREFIX.json (required to train)");
    app.add_option("--evaluate", evaluate, "score this saved model (PREFIX) on the records instead of training one")
        ->excludes(out_opt);
    app.add_option("--epochs", opt.epochs, "training epochs")->check(CLI::Range(1, 100000));
    auto *hg = app.add_option("--holdout-graph", holdout_graphs,
                              "hold out every record of this graph (name, its first word, or file stem); repeatable");
    app.add_option("--holdout-fraction", holdout_fraction, "hold out this fraction of the problems, chosen at random")
        ->check(CLI::Range(0.0, 0.95))
        ->excludes(hg);
    app.add_option("--seed", opt.seed, "seed of the initialization, the batch order and the holdout split");
    app.add_option("--batch-size", opt.batch_size, "mini-batch size")->check(CLI::Range(2, 1 << 20));
    app.add_option("--lr", opt.learning_rate, "Adam learning rate")->check(CLI::Range(1e-7, 1.0));
    app.add_option("--hidden", opt.hidden, "width of the hidden layers")->check(CLI::Range(1, 4096));
    app.add_option("--features", opt.features,
                   "the model's inputs: feature names or prefixes ending in '*', comma-separated or repeated "
                   "(default: every feature)")
        ->delimiter(',');
    app.add_flag("--quiet", quiet, "no loss log");
    CLI11_PARSE(app, argc, argv);

    try {
        if (!CostModel::available())
            fail<Error>("gsparse was built without LibTorch: the cost model cannot be trained");
        if (out.empty() && evaluate.empty()) fail<Error>("--out is required (or --evaluate MODEL to score a model)");
        if (record_files.empty() && sweep_files.empty()) fail<Error>("no records: give --records or --sweep-data");
        for (const char *ext : {".pt", ".json"}) {
            const std::string e = ext;
            if (out.size() > e.size() && out.compare(out.size() - e.size(), e.size(), e) == 0)
                out.resize(out.size() - e.size());
        }
        // Fail before training when the model cannot be written.
        const auto dir = std::filesystem::path(out).parent_path();
        if (!dir.empty() && !std::filesystem::is_directory(dir))
            fail<Error>("cannot write ", out, ".pt: directory '", dir.string(), "' does not exist");
        std::vector<MeasurementRecord> records;
        for (const auto &f : record_files) {
            auto part = read_records(f);
            if (part.empty()) fail<Error>("records file '", f, "' holds no records");
            // Features as this build computes them, from each record's stored shape and schedule
            // point: records of older builds train the current features.
            for (size_t i = 0; i < part.size(); i++) {
                try {
                    part[i].features = refresh_features(part[i].features, part[i].schedule);
                } catch (const std::exception &e) {
                    fail<Error>(f, ": record ", i + 1, ": ", e.what());
                }
            }
            std::printf("%-50s %zu records\n", f.c_str(), part.size());
            records.insert(records.end(), part.begin(), part.end());
        }
        for (const auto &f : sweep_files) {
            auto part = records_from_sweep_data(f);
            if (part.empty()) fail<Error>("sweep data '", f, "' holds no measurements");
            std::printf("%-50s %zu records (sweep data)\n", f.c_str(), part.size());
            records.insert(records.end(), part.begin(), part.end());
        }
        if (!evaluate.empty()) {
            CostModel model = CostModel::load(evaluate);
            std::printf("%-95s %7s %8s %6s %6s\n", "problem", "records", "pearson", "top-1", "top-5");
            for (const ProblemScore &s : score_model(model, records)) {
                std::printf("%-95s %7zu %8s %6.3f %6.3f\n", s.problem.c_str(), s.records, fmt_pearson(s.pearson).c_str(),
                            s.top1, s.top5);
            }
            return 0;
        }
        std::map<std::string, size_t> per_graph;
        for (const auto &r : records) per_graph[r.graph]++;
        std::printf("%zu records, %zu graphs, %zu of %zu features\n", records.size(), per_graph.size(),
                    select_features(opt.features).size(), feature_names().size());
        opt.holdout_graphs = holdout_graphs;
        opt.holdout_fraction = holdout_fraction;
        if (quiet) opt.log_every = 0;

        std::fflush(stdout);  // the loss log goes to stderr
        TrainReport rep;
        CostModel model = CostModel::train(records, opt, &rep);
        model.save(out);
        std::printf("trained %d epochs, final loss %.5f\n", rep.epochs, rep.final_loss);
        if (!rep.holdout_graphs.empty()) {
            std::printf("held out:");
            for (const auto &g : rep.holdout_graphs) std::printf(" '%s'", g.c_str());
            std::printf("\n");
        }
        if (rep.n_dropped) std::printf("dropped %zu records of problems with a single record\n", rep.n_dropped);
        std::printf("pearson train   %s  (%zu records, %zu problems)\n", fmt_pearson(rep.pearson_train).c_str(),
                    rep.n_train, rep.groups_train);
        std::printf("pearson holdout %s  (%zu records, %zu problems)\n", fmt_pearson(rep.pearson_holdout).c_str(),
                    rep.n_holdout, rep.groups_holdout);
        for (const auto &[problem, r] : rep.holdout_per_problem)
            std::printf("  held-out problem %-70s %s\n", problem.c_str(), fmt_pearson(r).c_str());
        std::printf("saved %s.pt and %s.json\n", out.c_str(), out.c_str());
    } catch (const std::exception &e) {
        std::fflush(stdout);
        std::fprintf(stderr, "gsparse-train-cost-model: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
