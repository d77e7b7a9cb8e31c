// The learned cost model: an MLP over the candidate features (autotune/features.h) that predicts the
// relative run time of schedule candidates of one problem, trained on measurement records
// (autotune/records.h). Built on LibTorch; without LibTorch (GSPARSE_HAVE_TORCH undefined) the
// class still exists but train, load and save throw gsparse::Error.
//
// Network: log1p(features) -> BatchNorm -> Linear(d, 64) -> ReLU -> Linear(64, 64) -> ReLU ->
// Linear(64, 1) -> BatchNorm(1) (the final normalization of the output).
//
// Target: records are grouped by problem (device, op, graph name and fingerprint, feature length);
// the target of a record is log(time) minus the mean log time of its group (the log of the time
// relative to the group's geometric mean), divided by one global scale. The model learns to rank
// candidates within a problem; its output is not an absolute time.
//
// Predictions (predict): the predicted log(time / geometric-mean time of the problem's candidates).
// Lower is faster; exp(a - b) estimates time(a) / time(b) for two candidates of one problem.
//
// Files: save(prefix) writes prefix.pt (the module's parameters and buffers, torch::save) and
// prefix.json (feature names, layer sizes, target scale, training report). load(prefix) maps the
// model's feature names onto feature_names() of this build (a model reads its own features by name,
// so features appended later leave it usable; one it needs that the build lacks fails the load).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autotune/records.h"

namespace gsparse::autotune {

struct TrainOptions {
    int epochs = 150;
    int batch_size = 256;
    double learning_rate = 1e-3;
    double weight_decay = 1e-5;
    int hidden = 64;    ///< width of the two hidden layers
    uint64_t seed = 1;  ///< torch::manual_seed and the holdout split
    /// Hold out every record of these graphs (a record's graph matches NAME when it equals NAME, when
    /// its first word is NAME, e.g. "reddit" for "reddit twin (scale 0.01, shuffled ids)", or when
    /// its file name without directory and extension is NAME).
    std::vector<std::string> holdout_graphs;
    /// Hold out this fraction of the problems (groups), chosen at random; when there are fewer than
    /// two problems, this fraction of the records. Excludes holdout_graphs.
    double holdout_fraction = 0;
    int log_every = 0;  ///< print the loss to stderr every N epochs (0: quiet)
    /// The model's inputs: feature names or prefixes followed by '*' (see select_features in
    /// autotune/features.h); empty: every feature. A model of one schedule family takes its own
    /// metrics and the shape entries that vary within its problems, so that graph-level values it
    /// saw for one graph only do not decide its predictions on another.
    std::vector<std::string> features;
};

struct TrainReport {
    /// Pearson correlation of predictions and targets; both are centred per problem first (only
    /// the order within a problem matters). NaN when the set is empty.
    double pearson_train = 0, pearson_holdout = 0;
    size_t n_train = 0, n_holdout = 0;            ///< records
    size_t groups_train = 0, groups_holdout = 0;  ///< problems
    size_t n_dropped = 0;                         ///< records of problems with a single record
    int epochs = 0;
    double final_loss = 0;  ///< mean training MSE of the last epoch (normalized targets)
    std::vector<std::string> holdout_graphs;  ///< graph names held out
    std::vector<std::string> schedules;       ///< schedules of the training records (sorted)
    /// Pearson of each held-out problem (problem_key order), centred as above.
    std::vector<std::pair<std::string, double>> holdout_per_problem;
};

/// Pearson correlation coefficient of x and y; 0 when fewer than two values or a constant input.
/// Throws gsparse::Error when the sizes differ.
double pearson(const std::vector<double> &x, const std::vector<double> &y);

/// A record's problem: device | op | graph | fingerprint | feat.
std::string problem_key(const MeasurementRecord &r);

/// How well a model ranks the candidates of one problem of a records file.
struct ProblemScore {
    std::string problem;  ///< problem_key
    size_t records = 0;
    double pearson = 0;   ///< per-problem Pearson of predicted and measured log time
    /// Measured time of the model's fastest-predicted record, and of the best measured among its
    /// five fastest-predicted ones, over the best measured time of the problem (1 = found it).
    double top1 = 0, top5 = 0;
};

class CostModel;

/// Scores a model on records (this build's feature vectors) problem by problem, in problem_key
/// order; problems with fewer than two records are skipped.
std::vector<ProblemScore> score_model(const CostModel &model, const std::vector<MeasurementRecord> &records);

class CostModel {
public:
    /// An empty model (predict throws); use train or load. Copies share one network.
    CostModel();
    ~CostModel();
    CostModel(const CostModel &);
    CostModel &operator=(const CostModel &);
    CostModel(CostModel &&) noexcept;
    CostModel &operator=(CostModel &&) noexcept;

    /// Whether gsparse was built with LibTorch.
    static bool available();

    /// Trains a model on records (each with feature_names().size() features). Throws gsparse::Error
    /// for an empty set, mismatched feature counts, bad options, or a build without LibTorch.
    static CostModel train(const std::vector<MeasurementRecord> &records, const TrainOptions &options,
                           TrainReport *report = nullptr);
    /// Loads prefix.pt and prefix.json (a trailing ".pt" or ".json" on the path is ignored).
    /// Throws gsparse::Error for missing files, a different feature list, or a build without LibTorch.
    static CostModel load(const std::string &prefix);
    /// Writes prefix.pt and prefix.json. Throws gsparse::Error on I/O errors.
    void save(const std::string &prefix) const;

    bool empty() const { return impl_ == nullptr; }
    /// Feature names the model was trained with.
    const std::vector<std::string> &feature_names() const;
    /// Whether the model was trained on points of this schedule (true for models whose sidecar
    /// does not list its schedules).
    bool knows_schedule(const std::string &schedule) const;
    /// The report of the training run (stored in the sidecar).
    const TrainReport &report() const;

    /// Predicted log(time / the problem's geometric-mean time) per feature vector: lower is faster.
    /// All vectors must be this build's (autotune::feature_names().size() entries; throws
    /// gsparse::Error otherwise); the model reads its own features from them by name.
    std::vector<double> predict(const std::vector<std::vector<float>> &features) const;
    /// Indices of the feature vectors, predicted fastest first (ties keep the input order).
    std::vector<size_t> rank(const std::vector<std::vector<float>> &features) const;

    struct Impl;

private:
    std::shared_ptr<const Impl> impl_;
};

}  // namespace gsparse::autotune
