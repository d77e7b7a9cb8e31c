// The cost model (see cost_model.h). LibTorch is included only here; the class keeps the network
// behind a pointer to an implementation so that no other file needs the LibTorch headers.
#include "autotune/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <set>

#include "autotune/features.h"
#include "core/error.h"

#ifdef GSPARSE_HAVE_TORCH
#include <torch/torch.h>
#endif

namespace gsparse::autotune {

double pearson(const std::vector<double> &x, const std::vector<double> &y) {
    if (x.size() != y.size()) fail<Error>("pearson: ", x.size(), " values against ", y.size());
    const size_t n = x.size();
    if (n < 2) return 0;
    const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n;
    const double my = std::accumulate(y.begin(), y.end(), 0.0) / n;
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        const double dx = x[i] - mx, dy = y[i] - my;
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if (sxx <= 0 || syy <= 0) return 0;
    return std::clamp(sxy / std::sqrt(sxx * syy), -1.0, 1.0);
}

std::string problem_key(const MeasurementRecord &r) {
    return r.device + " | " + r.op + " | " + r.graph + " | " + std::to_string(r.graph_fingerprint) + " | " +
           std::to_string(r.feat);
}

namespace {

constexpr const char *kFormat = "gsparse-cost-model";
constexpr int kVersion = 1;

[[maybe_unused]] std::string strip_extension(const std::string &path) {
    for (const char *ext : {".pt", ".json"}) {
        const std::string e = ext;
        if (path.size() > e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0)
            return path.substr(0, path.size() - e.size());
    }
    return path;
}

/// NAME matches a graph when equal, when it is the graph's first word, or the graph's file stem.
[[maybe_unused]] bool graph_matches(const std::string &graph, const std::string &name) {
    if (name.empty()) return false;
    if (graph == name) return true;
    if (graph.size() > name.size() && graph.compare(0, name.size(), name) == 0 && graph[name.size()] == ' ')
        return true;
    std::string stem = graph.substr(graph.find_last_of('/') == std::string::npos ? 0 : graph.find_last_of('/') + 1);
    if (auto dot = stem.find('.'); dot != std::string::npos) stem = stem.substr(0, dot);
    return stem == name;
}

/// Subtracts the mean of each group from values (groups given as an id per value).
[[maybe_unused]] std::vector<double> center_by_group(const std::vector<double> &values,
                                                    const std::vector<size_t> &group) {
    std::map<size_t, std::pair<double, size_t>> sums;
    for (size_t i = 0; i < values.size(); i++) {
        auto &s = sums[group[i]];
        s.first += values[i];
        s.second++;
    }
    std::vector<double> out(values.size());
    for (size_t i = 0; i < values.size(); i++) {
        const auto &s = sums[group[i]];
        out[i] = values[i] - s.first / s.second;
    }
    return out;
}

[[maybe_unused]] nlohmann::json report_json(const TrainReport &r) {
    auto num = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); };
    return {{"pearson_train", num(r.pearson_train)},
            {"pearson_holdout", num(r.pearson_holdout)},
            {"n_train", r.n_train},
            {"n_holdout", r.n_holdout},
            {"groups_train", r.groups_train},
            {"groups_holdout", r.groups_holdout},
            {"n_dropped", r.n_dropped},
            {"epochs", r.epochs},
            {"final_loss", num(r.final_loss)},
            {"holdout_graphs", r.holdout_graphs},
            {"schedules", r.schedules},
            {"holdout_per_problem", [&] {
                 nlohmann::json per = nlohmann::json::object();
                 for (const auto &[k, v] : r.holdout_per_problem) per[k] = num(v);
                 return per;
             }()}};
}

[[maybe_unused]] TrainReport report_from_json(const nlohmann::json &j) {
    TrainReport r;
    if (!j.is_object()) return r;
    auto num = [&](const char *k) {
        return j.contains(k) && j[k].is_number() ? j[k].get<double>() : std::numeric_limits<double>::quiet_NaN();
    };
    auto count = [&](const char *k) { return j.contains(k) && j[k].is_number_unsigned() ? j[k].get<size_t>() : 0; };
    r.pearson_train = num("pearson_train");
    r.pearson_holdout = num("pearson_holdout");
    r.final_loss = num("final_loss");
    r.n_train = count("n_train");
    r.n_holdout = count("n_holdout");
    r.groups_train = count("groups_train");
    r.groups_holdout = count("groups_holdout");
    r.n_dropped = count("n_dropped");
    r.epochs = j.contains("epochs") && j["epochs"].is_number_integer() ? j["epochs"].get<int>() : 0;
    if (j.contains("holdout_graphs") && j["holdout_graphs"].is_array())
        for (const auto &g : j["holdout_graphs"])
            if (g.is_string()) r.holdout_graphs.push_back(g.get<std::string>());
    if (j.contains("schedules") && j["schedules"].is_array())
        for (const auto &g : j["schedules"])
            if (g.is_string()) r.schedules.push_back(g.get<std::string>());
    if (j.contains("holdout_per_problem") && j["holdout_per_problem"].is_object())
        for (const auto &[k, v] : j["holdout_per_problem"].items())
            r.holdout_per_problem.emplace_back(k, v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN());
    return r;
}

#ifdef GSPARSE_HAVE_TORCH

/// log1p -> BatchNorm -> Linear -> ReLU -> Linear -> ReLU -> Linear -> BatchNorm(1).
struct NetImpl : torch::nn::Module {
    NetImpl(int64_t inputs, int64_t hidden)
        : bn_in(register_module("bn_in", torch::nn::BatchNorm1d(inputs))),
          fc1(register_module("fc1", torch::nn::Linear(inputs, hidden))),
          fc2(register_module("fc2", torch::nn::Linear(hidden, hidden))),
          fc3(register_module("fc3", torch::nn::Linear(hidden, 1))),
          bn_out(register_module("bn_out", torch::nn::BatchNorm1d(1))) {}

    torch::Tensor forward(torch::Tensor x) {
        x = bn_in(torch::log1p(x));
        x = torch::relu(fc1(x));
        x = torch::relu(fc2(x));
        return bn_out(fc3(x)).squeeze(1);
    }

    /// Sets the batch-norm momentum (1: the next training-mode batch replaces the running stats).
    void set_momentum(double m) {
        bn_in->options.momentum(m);
        bn_out->options.momentum(m);
    }

    torch::nn::BatchNorm1d bn_in;
    torch::nn::Linear fc1, fc2, fc3;
    torch::nn::BatchNorm1d bn_out;
};
TORCH_MODULE(Net);

/// The rows' entries at `columns` (the model's inputs among the build's features) as a matrix.
torch::Tensor to_tensor(const std::vector<const std::vector<float> *> &rows, const std::vector<size_t> &columns) {
    const size_t width = columns.size();
    torch::Tensor t = torch::empty({static_cast<int64_t>(rows.size()), static_cast<int64_t>(width)}, torch::kFloat32);
    float *p = t.data_ptr<float>();
    for (size_t i = 0; i < rows.size(); i++)
        for (size_t c = 0; c < width; c++) p[i * width + c] = (*rows[i])[columns[c]];
    return t;
}

#endif

[[noreturn, maybe_unused]] void no_torch() {
    fail<Error>("the cost model is unavailable: gsparse was built without LibTorch (configure with "
                "-DGSPARSE_WITH_TORCH=ON and Torch_DIR pointing at a LibTorch installation)");
}

}  // namespace

struct CostModel::Impl {
    std::vector<std::string> names;
    /// Where each of the model's features sits in this build's feature vector.
    std::vector<size_t> columns;
    int64_t hidden = 64;
    double target_scale = 1;
    TrainReport report;
#ifdef GSPARSE_HAVE_TORCH
    mutable std::mutex mu;  ///< forward passes of one network run one at a time
    Net net{nullptr};
#endif
};

CostModel::CostModel() = default;
CostModel::~CostModel() = default;
CostModel::CostModel(const CostModel &) = default;
CostModel &CostModel::operator=(const CostModel &) = default;
CostModel::CostModel(CostModel &&) noexcept = default;
CostModel &CostModel::operator=(CostModel &&) noexcept = default;

bool CostModel::available() {
#ifdef GSPARSE_HAVE_TORCH
    return true;
#else
    return false;
#endif
}

const std::vector<std::string> &CostModel::feature_names() const {
    if (!impl_) fail<Error>("the cost model is empty (train or load one first)");
    return impl_->names;
}

std::vector<ProblemScore> score_model(const CostModel &model, const std::vector<MeasurementRecord> &records) {
    std::vector<std::vector<float>> features;
    features.reserve(records.size());
    for (const auto &r : records) features.push_back(r.features);
    const std::vector<double> pred = model.predict(features);
    std::map<std::string, std::vector<size_t>> groups;
    for (size_t i = 0; i < records.size(); i++) groups[problem_key(records[i])].push_back(i);
    std::vector<ProblemScore> out;
    for (const auto &[key, members] : groups) {
        if (members.size() < 2) continue;
        ProblemScore s;
        s.problem = key;
        s.records = members.size();
        std::vector<double> x, y;
        double best = std::numeric_limits<double>::infinity();
        for (size_t i : members) {
            x.push_back(pred[i]);
            y.push_back(std::log(records[i].time_ms));
            best = std::min(best, records[i].time_ms);
        }
        s.pearson = pearson(x, y);
        std::vector<size_t> order = members;
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return pred[a] < pred[b]; });
        s.top1 = records[order[0]].time_ms / best;
        double top5 = records[order[0]].time_ms;
        for (size_t k = 1; k < std::min<size_t>(5, order.size()); k++) top5 = std::min(top5, records[order[k]].time_ms);
        s.top5 = top5 / best;
        out.push_back(s);
    }
    return out;
}

bool CostModel::knows_schedule(const std::string &schedule) const {
    const auto &known = report().schedules;
    return known.empty() || std::find(known.begin(), known.end(), schedule) != known.end();
}

const TrainReport &CostModel::report() const {
    if (!impl_) fail<Error>("the cost model is empty (train or load one first)");
    return impl_->report;
}

std::vector<size_t> CostModel::rank(const std::vector<std::vector<float>> &features) const {
    const std::vector<double> score = predict(features);
    std::vector<size_t> order(score.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score[a] < score[b]; });
    return order;
}

#ifdef GSPARSE_HAVE_TORCH

std::vector<double> CostModel::predict(const std::vector<std::vector<float>> &features) const {
    if (!impl_) fail<Error>("the cost model is empty (train or load one first)");
    const size_t width = autotune::feature_names().size();
    std::vector<const std::vector<float> *> rows;
    rows.reserve(features.size());
    for (size_t i = 0; i < features.size(); i++) {
        if (features[i].size() != width)
            fail<Error>("cost model: feature vector ", i, " has ", features[i].size(),
                        " entries, this build computes ", width);
        rows.push_back(&features[i]);
    }
    if (rows.empty()) return {};
    // The model's own columns of each vector: the features it was trained on, by name.
    torch::Tensor x = to_tensor(rows, impl_->columns);
    torch::Tensor y;
    {
        std::lock_guard<std::mutex> lock(impl_->mu);
        torch::NoGradGuard no_grad;
        Net net = impl_->net;
        net->eval();
        y = net->forward(x).contiguous();
    }
    const float *p = y.data_ptr<float>();
    std::vector<double> out(rows.size());
    for (size_t i = 0; i < out.size(); i++) out[i] = static_cast<double>(p[i]) * impl_->target_scale;
    return out;
}

CostModel CostModel::train(const std::vector<MeasurementRecord> &records, const TrainOptions &o,
                           TrainReport *report_out) {
    const size_t width = autotune::feature_names().size();
    const std::vector<size_t> columns = select_features(o.features);
    const size_t d = columns.size();
    std::vector<std::string> names;
    for (size_t c : columns) names.push_back(autotune::feature_names()[c]);
    if (records.empty()) fail<Error>("cannot train the cost model: no records");
    if (o.epochs < 1) fail<Error>("epochs must be >= 1, got ", o.epochs);
    if (o.batch_size < 2) fail<Error>("batch size must be >= 2, got ", o.batch_size);
    if (!(o.learning_rate > 0)) fail<Error>("learning rate must be > 0, got ", o.learning_rate);
    if (o.hidden < 1) fail<Error>("hidden width must be >= 1, got ", o.hidden);
    if (!(o.holdout_fraction >= 0 && o.holdout_fraction < 1))
        fail<Error>("holdout fraction must be in [0, 1), got ", o.holdout_fraction);
    if (o.holdout_fraction > 0 && !o.holdout_graphs.empty())
        fail<Error>("a holdout fraction and holdout graphs exclude each other");
    for (size_t i = 0; i < records.size(); i++) {
        const auto &r = records[i];
        if (r.features.size() != width)
            fail<Error>("record ", i, " (graph '", r.graph, "', ", r.schedule.str(), ") has ", r.features.size(),
                        " features; this build computes ", width, " (records from another gsparse version?)");
        if (!(r.time_ms > 0) || !std::isfinite(r.time_ms))
            fail<Error>("record ", i, " (graph '", r.graph, "') has a non-positive time ", r.time_ms);
    }

    // Problems (groups) and the holdout split.
    std::map<std::string, size_t> group_ids;
    std::vector<size_t> group(records.size());
    for (size_t i = 0; i < records.size(); i++)
        group[i] = group_ids.emplace(problem_key(records[i]), group_ids.size()).first->second;
    const size_t n_groups = group_ids.size();

    TrainReport rep;
    std::vector<char> held(records.size(), 0);
    std::mt19937_64 rng(o.seed);
    if (!o.holdout_graphs.empty()) {
        std::set<std::string> graphs;
        for (const auto &r : records) graphs.insert(r.graph);
        for (const auto &name : o.holdout_graphs) {
            bool any = false;
            for (size_t i = 0; i < records.size(); i++)
                if (graph_matches(records[i].graph, name)) held[i] = 1, any = true;
            if (!any) {
                std::string known;
                for (const auto &g : graphs) known += (known.empty() ? "" : ", ") + ("'" + g + "'");
                fail<Error>("no records of holdout graph '", name, "' (graphs: ", known, ")");
            }
        }
        std::set<std::string> held_graphs;
        for (size_t i = 0; i < records.size(); i++)
            if (held[i]) held_graphs.insert(records[i].graph);
        rep.holdout_graphs.assign(held_graphs.begin(), held_graphs.end());
    } else if (o.holdout_fraction > 0) {
        if (n_groups >= 2) {
            std::vector<size_t> ids(n_groups);
            std::iota(ids.begin(), ids.end(), size_t{0});
            std::shuffle(ids.begin(), ids.end(), rng);
            size_t k = static_cast<size_t>(std::lround(o.holdout_fraction * n_groups));
            k = std::clamp<size_t>(k, 1, n_groups - 1);
            std::vector<char> held_group(n_groups, 0);
            for (size_t i = 0; i < k; i++) held_group[ids[i]] = 1;
            for (size_t i = 0; i < records.size(); i++) held[i] = held_group[group[i]];
        } else {
            std::bernoulli_distribution coin(o.holdout_fraction);
            for (size_t i = 0; i < records.size(); i++) held[i] = coin(rng);
        }
    }

    // Targets: log time centred per problem within each set; problems with one record in a set
    // carry no order and are dropped from it.
    struct Set {
        std::vector<const std::vector<float> *> x;
        std::vector<double> y;
        std::vector<size_t> group;
    };
    auto build_set = [&](bool holdout) {
        std::map<size_t, std::pair<double, size_t>> sums;
        for (size_t i = 0; i < records.size(); i++)
            if (bool(held[i]) == holdout) {
                auto &s = sums[group[i]];
                s.first += std::log(records[i].time_ms);
                s.second++;
            }
        Set s;
        for (size_t i = 0; i < records.size(); i++) {
            if (bool(held[i]) != holdout) continue;
            const auto &g = sums[group[i]];
            if (g.second < 2) {
                rep.n_dropped++;
                continue;
            }
            s.x.push_back(&records[i].features);
            s.y.push_back(std::log(records[i].time_ms) - g.first / g.second);
            s.group.push_back(group[i]);
        }
        return s;
    };
    Set train_set = build_set(false), hold_set = build_set(true);
    if (train_set.x.size() < 2)
        fail<Error>("cannot train the cost model: ", train_set.x.size(),
                    " training records after the holdout split (every problem needs at least two records)");
    auto count_groups = [](const Set &s) { return std::set<size_t>(s.group.begin(), s.group.end()).size(); };

    double var = 0;
    for (double y : train_set.y) var += y * y;
    var /= train_set.y.size();
    const double scale = var > 1e-12 ? std::sqrt(var) : 1.0;

    torch::manual_seed(o.seed);
    Net net(static_cast<int64_t>(d), o.hidden);
    torch::Tensor x = to_tensor(train_set.x, columns);
    torch::Tensor y = torch::empty({static_cast<int64_t>(train_set.y.size())}, torch::kFloat32);
    float *yp = y.data_ptr<float>();
    for (size_t i = 0; i < train_set.y.size(); i++) yp[i] = static_cast<float>(train_set.y[i] / scale);
    const int64_t n = x.size(0);

    torch::optim::Adam opt(net->parameters(),
                           torch::optim::AdamOptions(o.learning_rate).weight_decay(o.weight_decay));
    net->train();
    double epoch_loss = 0;
    for (int epoch = 1; epoch <= o.epochs; epoch++) {
        torch::Tensor perm = torch::randperm(n, torch::kLong);
        double sum = 0;
        int64_t seen = 0;
        for (int64_t b = 0; b < n; b += o.batch_size) {
            const int64_t e = std::min<int64_t>(n, b + o.batch_size);
            if (e - b < 2) break;  // batch normalization needs two values per batch
            torch::Tensor idx = perm.slice(0, b, e);
            torch::Tensor pred = net->forward(x.index_select(0, idx));
            torch::Tensor loss = torch::mse_loss(pred, y.index_select(0, idx));
            opt.zero_grad();
            loss.backward();
            opt.step();
            sum += loss.item<double>() * static_cast<double>(e - b);
            seen += e - b;
        }
        epoch_loss = sum / std::max<int64_t>(seen, 1);
        if (o.log_every > 0 && (epoch % o.log_every == 0 || epoch == o.epochs))
            std::fprintf(stderr, "epoch %d/%d  loss %.5f\n", epoch, o.epochs, epoch_loss);
    }
    // Running statistics of the batch norms from the whole training set, so evaluation-mode
    // predictions match what training saw.
    {
        torch::NoGradGuard no_grad;
        net->set_momentum(1.0);
        net->forward(x);
        net->set_momentum(0.1);
    }
    net->eval();

    auto impl = std::make_shared<Impl>();
    impl->names = names;
    impl->columns = columns;
    impl->hidden = o.hidden;
    impl->target_scale = scale;
    impl->net = net;
    CostModel model;
    model.impl_ = impl;

    // Predictions of a set, centred per problem (the targets are).
    auto centred_predictions = [&](const Set &s) {
        std::vector<std::vector<float>> rows;
        rows.reserve(s.x.size());
        for (const auto *r : s.x) rows.push_back(*r);
        return center_by_group(model.predict(rows), s.group);
    };
    const double nan = std::numeric_limits<double>::quiet_NaN();
    rep.pearson_train = train_set.x.empty() ? nan : pearson(centred_predictions(train_set), train_set.y);
    rep.pearson_holdout = nan;
    if (!hold_set.x.empty()) {
        const std::vector<double> pred = centred_predictions(hold_set);
        rep.pearson_holdout = pearson(pred, hold_set.y);
        std::vector<std::string> key_of(n_groups);
        for (const auto &[key, id] : group_ids) key_of[id] = key;
        std::map<size_t, std::pair<std::vector<double>, std::vector<double>>> by_group;
        for (size_t i = 0; i < pred.size(); i++) {
            by_group[hold_set.group[i]].first.push_back(pred[i]);
            by_group[hold_set.group[i]].second.push_back(hold_set.y[i]);
        }
        for (const auto &[g, xy] : by_group) rep.holdout_per_problem.emplace_back(key_of[g], pearson(xy.first, xy.second));
        std::sort(rep.holdout_per_problem.begin(), rep.holdout_per_problem.end());
    }
    rep.n_train = train_set.x.size();
    rep.n_holdout = hold_set.x.size();
    rep.groups_train = count_groups(train_set);
    rep.groups_holdout = count_groups(hold_set);
    rep.epochs = o.epochs;
    rep.final_loss = epoch_loss;
    {
        std::set<std::string> schedules;
        for (size_t i = 0; i < records.size(); i++)
            if (!held[i]) schedules.insert(records[i].schedule.schedule);
        rep.schedules.assign(schedules.begin(), schedules.end());
    }
    impl->report = rep;
    if (report_out) *report_out = rep;
    return model;
}

void CostModel::save(const std::string &path) const {
    if (!impl_) fail<Error>("cannot save an empty cost model");
    const std::string prefix = strip_extension(path);
    try {
        std::lock_guard<std::mutex> lock(impl_->mu);
        torch::save(impl_->net, prefix + ".pt");
    } catch (const c10::Error &e) {
        fail<Error>("cannot write cost model '", prefix, ".pt': ", e.what_without_backtrace());
    }
    nlohmann::json j = {{"format", kFormat},
                        {"version", kVersion},
                        {"feature_names", impl_->names},
                        {"hidden", impl_->hidden},
                        {"target_scale", impl_->target_scale},
                        {"prediction", "log(time / geometric-mean time of the problem's candidates); lower is faster"},
                        {"report", report_json(impl_->report)}};
    std::ofstream out(prefix + ".json");
    out << j.dump(2) << '\n';
    out.flush();
    if (!out) fail<Error>("cannot write cost model sidecar '", prefix, ".json'");
}

CostModel CostModel::load(const std::string &path) {
    const std::string prefix = strip_extension(path);
    std::ifstream in(prefix + ".json");
    if (!in) fail<Error>("cannot open cost model sidecar '", prefix, ".json'");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception &e) {
        fail<Error>("cost model sidecar '", prefix, ".json' is not valid JSON: ", e.what());
    }
    if (!j.is_object() || j.value("format", std::string()) != kFormat)
        fail<Error>("'", prefix, ".json' is not a gsparse cost model sidecar");
    if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int>() != kVersion)
        fail<Error>("cost model '", prefix, ".json' has an unsupported version (expected ", kVersion, ")");
    if (!j.contains("feature_names") || !j["feature_names"].is_array() || !j.contains("hidden") ||
        !j["hidden"].is_number_integer() || !j.contains("target_scale") || !j["target_scale"].is_number())
        fail<Error>("cost model sidecar '", prefix, ".json' lacks feature_names, hidden or target_scale");
    std::vector<std::string> names;
    for (const auto &n : j["feature_names"]) {
        if (!n.is_string()) fail<Error>("cost model sidecar '", prefix, ".json': feature names must be strings");
        names.push_back(n.get<std::string>());
    }
    // A model reads its features by name: it stays usable when features are appended, and needs
    // retraining only when one of its own is gone.
    const auto &known = autotune::feature_names();
    std::vector<size_t> columns;
    std::set<std::string> seen;
    for (const auto &n : names) {
        if (!seen.insert(n).second) fail<Error>("cost model sidecar '", prefix, ".json' lists feature '", n, "' twice");
        auto it = std::find(known.begin(), known.end(), n);
        if (it == known.end())
            fail<Error>("cost model '", prefix, "' was trained on feature '", n,
                        "', which this build does not compute: retrain it");
        columns.push_back(static_cast<size_t>(it - known.begin()));
    }
    if (names.empty()) fail<Error>("cost model sidecar '", prefix, ".json' lists no features");
    auto impl = std::make_shared<Impl>();
    impl->names = names;
    impl->columns = std::move(columns);
    impl->hidden = j["hidden"].get<int64_t>();
    impl->target_scale = j["target_scale"].get<double>();
    if (impl->hidden < 1 || !(impl->target_scale > 0))
        fail<Error>("cost model sidecar '", prefix, ".json' has a bad hidden width or target scale");
    if (j.contains("report")) impl->report = report_from_json(j["report"]);
    std::ifstream probe(prefix + ".pt", std::ios::binary);
    if (!probe) fail<Error>("cannot open cost model parameters '", prefix, ".pt'");
    probe.close();
    impl->net = Net(static_cast<int64_t>(names.size()), impl->hidden);
    try {
        torch::load(impl->net, prefix + ".pt");
    } catch (const c10::Error &e) {
        fail<Error>("cannot load cost model parameters '", prefix, ".pt': ", e.what_without_backtrace());
    }
    // torch::load replaces a parameter whatever its shape: the parameters must be those of the listed features.
    if (impl->net->fc1->weight.dim() != 2 || impl->net->fc1->weight.size(1) != static_cast<int64_t>(names.size()) ||
        impl->net->fc1->weight.size(0) != impl->hidden)
        fail<Error>("cost model parameters '", prefix, ".pt' do not match its sidecar (", names.size(),
                    " features, hidden width ", impl->hidden, ")");
    impl->net->eval();
    CostModel model;
    model.impl_ = impl;
    return model;
}

#else  // !GSPARSE_HAVE_TORCH

std::vector<double> CostModel::predict(const std::vector<std::vector<float>> &) const {
    if (!impl_) fail<Error>("the cost model is empty (train or load one first)");
    no_torch();
}

CostModel CostModel::train(const std::vector<MeasurementRecord> &, const TrainOptions &, TrainReport *) { no_torch(); }

void CostModel::save(const std::string &) const { no_torch(); }

CostModel CostModel::load(const std::string &) { no_torch(); }

#endif

}  // namespace gsparse::autotune
