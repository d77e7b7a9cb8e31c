// gsparse-data: generates dataset twins and the graphs of the zoo, and prints graph statistics.
//
//   gsparse-data gen NAME [--scale S] [--seed K] [--communities K] [--intra P]
//                        [--order shuffled|community] [--threads T] [--quiet] -o FILE
//   gsparse-data gen FAMILY [--PARAM VALUE ...] [--seed K] [--threads T] [--quiet] -o FILE
//   gsparse-data stats FILE [--json]
//   gsparse-data list
//   gsparse-data zoo list [--split train|heldout] [--manifest FILE]
//   gsparse-data zoo gen [NAME ...] [--split train|heldout] [--max-edges N] [--skip-existing]
//                        [--format gcsr|mtx|el] [--threads T] [--manifest FILE] [--quiet] -o DIR
//
// Exit codes: 0 success, 1 a gsparse or runtime error (bad value, unreadable or unwritable file),
// 2 a command-line error (unknown flag, missing argument, malformed number, an option that does not
// apply to the twin or family).
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "graph/convert.h"
#include "graph/io.h"
#include "twin/twin.h"
#include "zoo/zoo.h"

namespace {

using Clock = std::chrono::steady_clock;

/// A command-line problem found after parsing (an option that does not apply): exit code 2.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// 1234567 -> "1,234,567".
std::string with_commas(int64_t v) {
    std::string digits = std::to_string(v < 0 ? -v : v), out;
    for (size_t i = 0; i < digits.size(); i++) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return (v < 0 ? "-" : "") + out;
}

/// What a long `gen` is doing, on stderr (stdout keeps the results): one line per step, and while
/// rows are generated a line at most every two seconds. Nothing with --quiet.
class GenProgress {
public:
    explicit GenProgress(bool quiet) : quiet_(quiet) {}
    void say(const std::string &text) const {
        if (!quiet_) std::fprintf(stderr, "gsparse-data: %s\n", text.c_str());
    }
    void rows(const gsparse::datasets::TwinProgress &p) {
        const auto now = Clock::now();
        if (p.rows_done < p.rows && now - last_ < std::chrono::seconds(2)) return;
        last_ = now;
        const double share = p.rows > 0 ? 100.0 * static_cast<double>(p.rows_done) / static_cast<double>(p.rows) : 100.0;
        char tail[64];
        std::snprintf(tail, sizeof tail, " (%.0f%%), %.1f s", share, seconds_since(start_));
        say("rows " + with_commas(p.rows_done) + " of " + with_commas(p.rows) + ", edges " + with_commas(p.edges_done) +
            " of " + with_commas(p.edges) + tail);
    }

private:
    bool quiet_;
    Clock::time_point start_ = Clock::now(), last_ = Clock::now();
};

double share(int64_t part, int64_t whole) { return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0; }

/// Rows are destinations (in-degrees), columns sources (out-degrees).
void print_stats(const gsparse::GraphStats &s, std::optional<double> target_cov = std::nullopt) {
    std::printf("nodes       %lld", static_cast<long long>(s.num_rows));
    if (s.num_cols != s.num_rows) std::printf(" rows, %lld columns", static_cast<long long>(s.num_cols));
    std::printf("\nedges       %lld\n", static_cast<long long>(s.nnz));
    std::printf("avg         %.2f\n", s.avg_row_length);
    std::printf("max         %lld\n", static_cast<long long>(s.max_row_length));
    std::printf("cov         %.3f", s.row_length_cov);
    if (target_cov) std::printf(" (target %.2f)", *target_cov);
    std::printf("\nempty rows  %lld (%.2f%%)\n", static_cast<long long>(s.empty_rows), share(s.empty_rows, s.num_rows));
    std::printf("out avg     %.2f\n", s.num_cols > 0 ? static_cast<double>(s.nnz) / static_cast<double>(s.num_cols) : 0.0);
    std::printf("out max     %lld\n", static_cast<long long>(s.max_col_length));
    std::printf("out cov     %.3f\n", s.col_length_cov);
    std::printf("empty cols  %lld (%.2f%%)\n", static_cast<long long>(s.empty_cols), share(s.empty_cols, s.num_cols));
}

void print_stats_json(const std::string &path, const gsparse::GraphStats &s) {
    std::printf("{\"file\": \"%s\", \"num_dst\": %lld, \"num_src\": %lld, \"edges\": %lld, \"avg_in_degree\": %.6g, "
                "\"max_in_degree\": %lld, \"in_degree_cov\": %.6g, \"empty_rows\": %lld, \"empty_row_share\": %.6g, "
                "\"avg_out_degree\": %.6g, \"max_out_degree\": %lld, \"out_degree_cov\": %.6g, \"empty_cols\": %lld, "
                "\"empty_col_share\": %.6g, \"square\": %s}\n",
                path.c_str(), static_cast<long long>(s.num_rows), static_cast<long long>(s.num_cols),
                static_cast<long long>(s.nnz), s.avg_row_length, static_cast<long long>(s.max_row_length),
                s.row_length_cov, static_cast<long long>(s.empty_rows), share(s.empty_rows, s.num_rows) / 100,
                s.num_cols > 0 ? static_cast<double>(s.nnz) / static_cast<double>(s.num_cols) : 0.0,
                static_cast<long long>(s.max_col_length), s.col_length_cov, static_cast<long long>(s.empty_cols),
                share(s.empty_cols, s.num_cols) / 100, s.num_rows == s.num_cols ? "true" : "false");
}

/// Fails early, before a long generation, when the output file cannot be created.
void check_writable(const std::string &path) {
    namespace fs = std::filesystem;
    const bool existed = fs::exists(path);
    if (existed && fs::is_directory(path)) gsparse::fail<gsparse::Error>("cannot write '", path, "': it is a directory");
    {
        std::ofstream probe(path, std::ios::app | std::ios::binary);
        if (!probe) gsparse::fail<gsparse::Error>("cannot write '", path, "': cannot open it for writing");
    }
    if (!existed) {
        std::error_code ec;
        fs::remove(path, ec);
    }
}

struct GenArgs {
    std::string name;
    double scale = 1.0;
    uint64_t seed = 1;
    int64_t communities = 0;
    double intra = 0;
    std::string order = "shuffled";
    int threads = 0;
    std::string output;
    bool quiet = false;  ///< no progress messages on stderr
    CLI::Option *communities_opt = nullptr;
    CLI::Option *intra_opt = nullptr;
    /// Every option of `gen` but the positional name, by parameter name (no dashes).
    std::map<std::string, CLI::Option *> options;
    std::map<std::string, std::string> zoo_values;  ///< storage of the zoo-only options
};

/// Options every generator takes.
const std::set<std::string> kCommonOptions = {"seed", "threads", "output"};

std::string dashed(const std::string &name) { return (name == "output" ? "-o/--" : "--") + name; }

int run_family_gen(const GenArgs &a) {
    namespace zoo = gsparse::datasets::zoo;
    const zoo::ZooFamily &family = zoo::zoo_family(a.name);
    zoo::ZooParams params;
    std::set<std::string> takes;
    std::string list;
    for (const auto &p : family.params) {
        takes.insert(p.name);
        list += (list.empty() ? "" : ", ") + dashed(p.name);
    }
    for (const auto &[name, opt] : a.options) {
        if (!opt->count() || kCommonOptions.count(name)) continue;
        if (!takes.count(name))
            throw UsageError(dashed(name) + " does not apply to family '" + a.name + "'; it takes " + list +
                             ", --seed, --threads, -o");
        params[name] = opt->results().back();
    }
    if (a.threads < 0) gsparse::fail<gsparse::Error>("thread count ", a.threads, " must be >= 0");
    const zoo::ZooShape shape = zoo::zoo_shape(a.name, params, a.seed);  // validates before any work
    check_writable(a.output);
    std::printf("family      %s (seed %llu%s%s)\n", a.name.c_str(), static_cast<unsigned long long>(a.seed),
                params.empty() ? "" : ", ", zoo::format_params(params).c_str());
    std::printf("expected    %lld rows, %lld columns, %lld edges\n", static_cast<long long>(shape.rows),
                static_cast<long long>(shape.cols), static_cast<long long>(shape.edges));
    std::fflush(stdout);
    const GenProgress progress(a.quiet);
    progress.say("generating " + a.name + ": " + with_commas(shape.rows) + " rows, " + with_commas(shape.edges) +
                 " edges");
    auto t0 = Clock::now();
    zoo::ZooGraph g = zoo::generate_zoo(a.name, params, a.seed, a.threads);
    const double gen_s = seconds_since(t0);
    progress.say("computing statistics");
    print_stats(gsparse::compute_stats(g.csr));
    if (!g.graph_start.empty()) std::printf("graphs      %zu\n", g.graph_start.size() - 1);
    std::printf("generated   %.2f s\n", gen_s);
    std::fflush(stdout);
    progress.say("writing " + a.output + " (" + with_commas(g.csr.nnz()) + " edges)");
    t0 = Clock::now();
    gsparse::save_graph(a.output, g.csr);
    std::printf("written     %s (%.2f s)\n", a.output.c_str(), seconds_since(t0));
    return 0;
}

int run_gen(const GenArgs &a) {
    using namespace gsparse::datasets;
    if (zoo::is_zoo_family(a.name) && !zoo::zoo_family(a.name).twin) return run_family_gen(a);
    bool is_twin = false;
    for (const auto &n : twin_names()) is_twin = is_twin || n == a.name;
    if (!is_twin) {
        std::string families;
        for (const auto &f : zoo::zoo_families())
            if (!f.twin) families += (families.empty() ? "" : ", ") + f.name;
        std::string twins;
        for (const auto &n : twin_names()) twins += (twins.empty() ? "" : ", ") + n;
        gsparse::fail<gsparse::Error>("unknown twin or graph family '", a.name, "'; twins: ", twins,
                                      "; families: ", families);
    }
    const std::set<std::string> twin_options = {"scale", "communities", "intra", "order"};
    for (const auto &[name, opt] : a.options)
        if (opt->count() && !twin_options.count(name) && !kCommonOptions.count(name))
            throw UsageError(dashed(name) + " does not apply to twin '" + a.name +
                             "'; twins take --scale, --communities, --intra, --order, --seed, --threads, -o");
    const TwinSpec spec = twin_spec(a.name);
    TwinOptions opt;
    opt.scale = a.scale;
    opt.seed = a.seed;
    if (a.communities_opt->count()) opt.communities = a.communities;
    if (a.intra_opt->count()) opt.intra = a.intra;
    opt.order = parse_node_order(a.order);
    opt.threads = a.threads;
    const TwinSpec resolved = resolve_twin(spec, opt);  // validates before any work
    check_writable(a.output);

    std::printf("twin        %s (scale %g, seed %llu, %lld communities, intra %g, order %s)\n", spec.name.c_str(),
                opt.scale, static_cast<unsigned long long>(opt.seed), static_cast<long long>(resolved.communities),
                resolved.intra, node_order_name(opt.order));
    std::fflush(stdout);
    GenProgress progress(a.quiet);
    progress.say("generating the " + spec.name + " twin: " + with_commas(resolved.nodes) + " nodes, " +
                 with_commas(resolved.edges) + " edges");
    opt.progress = [&progress](const TwinProgress &p) { progress.rows(p); };
    auto t0 = Clock::now();
    gsparse::CSR csr = generate_twin(spec, opt);
    const double gen_s = seconds_since(t0);
    progress.say("computing statistics");
    print_stats(gsparse::compute_stats(csr), spec.cov);
    std::printf("generated   %.2f s\n", gen_s);
    std::fflush(stdout);
    progress.say("writing " + a.output + " (" + with_commas(static_cast<int64_t>(csr.col_idx.size())) + " edges)");
    t0 = Clock::now();
    gsparse::save_graph(a.output, csr);
    std::printf("written     %s (%.2f s)\n", a.output.c_str(), seconds_since(t0));
    return 0;
}

int run_stats(const std::string &path, bool json) {
    if (!std::filesystem::exists(path)) gsparse::fail<gsparse::Error>("cannot read '", path, "': no such file");
    const auto t0 = Clock::now();
    gsparse::LoadedGraph g = gsparse::load_graph(path);
    const double load_s = seconds_since(t0);
    if (json) {
        print_stats_json(path, gsparse::compute_stats(g.csr));
        return 0;
    }
    std::printf("file        %s\n", path.c_str());
    print_stats(gsparse::compute_stats(g.csr));
    std::printf("values      %s\n", g.values.empty() ? "none (pattern)" : "per edge");
    std::printf("loaded      %.2f s\n", load_s);
    return 0;
}

int run_list() {
    using namespace gsparse::datasets;
    std::printf("%-15s %10s %12s %6s %5s %12s %6s\n", "name", "nodes", "edges", "avg", "cov", "communities", "intra");
    for (const auto &name : twin_names()) {
        const TwinSpec s = twin_spec(name);
        std::printf("%-15s %10lld %12lld %6.0f %5.2f %12lld %6.2f\n", s.name.c_str(), static_cast<long long>(s.nodes),
                    static_cast<long long>(s.edges), s.avg, s.cov, static_cast<long long>(s.communities), s.intra);
    }
    std::printf("\nzoo families (gsparse-data gen FAMILY --PARAM VALUE ... -o FILE; twins also take --intra 0..1):\n");
    for (const auto &f : zoo::zoo_families()) {
        if (f.twin) continue;
        std::printf("\n%s: %s\n", f.name.c_str(), f.summary.c_str());
        for (const auto &p : f.params)
            std::printf("  --%-15s %-10s %s\n", p.name.c_str(), p.default_value.empty() ? "-" : p.default_value.c_str(),
                        p.help.c_str());
    }
    return 0;
}

// ---- zoo ------------------------------------------------------------------------------------

struct ZooArgs {
    std::vector<std::string> names;
    std::string split;
    std::string manifest;
    std::string dir;
    std::string format = "gcsr";
    int64_t max_edges = 0;
    bool skip_existing = false;
    bool quiet = false;
    int threads = 0;
};

std::vector<gsparse::datasets::zoo::ZooMember> load_manifest(const std::string &path) {
    namespace zoo = gsparse::datasets::zoo;
    if (path.empty()) return zoo::builtin_manifest();
    std::ifstream in(path, std::ios::binary);
    if (!in) gsparse::fail<gsparse::Error>("cannot read manifest '", path, "'");
    std::stringstream text;
    text << in.rdbuf();
    return zoo::parse_manifest(text.str(), path);
}

/// The members named, or those of the split, or all.
std::vector<gsparse::datasets::zoo::ZooMember> selected_members(const ZooArgs &a) {
    namespace zoo = gsparse::datasets::zoo;
    const auto manifest = load_manifest(a.manifest);
    if (!a.names.empty() && !a.split.empty()) throw UsageError("give member names or --split, not both");
    if (!a.names.empty()) {
        std::vector<zoo::ZooMember> out;
        for (const auto &n : a.names) out.push_back(zoo::find_member(manifest, n));
        return out;
    }
    if (!a.split.empty()) return zoo::members_of_split(manifest, a.split);
    return manifest;
}

int run_zoo_list(const ZooArgs &a) {
    namespace zoo = gsparse::datasets::zoo;
    std::printf("%-20s %-8s %-14s %6s %10s %10s %11s  %s\n", "name", "split", "family", "seed", "rows", "cols", "edges",
                "parameters");
    for (const auto &m : selected_members(a)) {
        const zoo::ZooShape s = zoo::zoo_shape(m.family, m.params, m.seed);
        std::printf("%-20s %-8s %-14s %6llu %10lld %10lld %11lld  %s\n", m.name.c_str(), m.split.c_str(),
                    m.family.c_str(), static_cast<unsigned long long>(m.seed), static_cast<long long>(s.rows),
                    static_cast<long long>(s.cols), static_cast<long long>(s.edges), zoo::format_params(m.params).c_str());
    }
    return 0;
}

int run_zoo_gen(const ZooArgs &a) {
    namespace zoo = gsparse::datasets::zoo;
    namespace fs = std::filesystem;
    if (a.format != "gcsr" && a.format != "mtx" && a.format != "el")
        gsparse::fail<gsparse::Error>("--format '", a.format, "' must be gcsr, mtx or el");
    if (a.threads < 0) gsparse::fail<gsparse::Error>("thread count ", a.threads, " must be >= 0");
    if (a.max_edges < 0) gsparse::fail<gsparse::Error>("--max-edges ", a.max_edges, " must be >= 0 (0: no limit)");
    const auto members = selected_members(a);
    std::error_code ec;
    fs::create_directories(a.dir, ec);
    if (!fs::is_directory(a.dir)) gsparse::fail<gsparse::Error>("cannot create output directory '", a.dir, "'");
    std::printf("| name | split | family | rows | cols | edges | avg in | max in | in COV | empty rows | max out | out COV "
                "| empty cols | generate s |\n");
    std::printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    std::fflush(stdout);
    int done = 0;
    for (const auto &m : members) {
        const zoo::ZooShape shape = zoo::zoo_shape(m.family, m.params, m.seed);
        if (a.max_edges > 0 && shape.edges > a.max_edges) continue;
        const std::string path = (fs::path(a.dir) / (m.name + "." + a.format)).string();
        if (a.skip_existing && fs::exists(path)) continue;
        check_writable(path);
        if (!a.quiet)
            std::fprintf(stderr, "gsparse-data: generating %s (%s, %s edges)\n", m.name.c_str(), m.family.c_str(),
                         with_commas(shape.edges).c_str());
        const auto t0 = Clock::now();
        zoo::ZooGraph g = zoo::generate_zoo(m.family, m.params, m.seed, a.threads);
        const double gen_s = seconds_since(t0);
        const gsparse::GraphStats s = gsparse::compute_stats(g.csr);
        std::printf("| %s | %s | %s | %lld | %lld | %lld | %.2f | %lld | %.3f | %.2f%% | %lld | %.3f | %.2f%% | %.1f |\n",
                    m.name.c_str(), m.split.c_str(), m.family.c_str(), static_cast<long long>(s.num_rows),
                    static_cast<long long>(s.num_cols), static_cast<long long>(s.nnz), s.avg_row_length,
                    static_cast<long long>(s.max_row_length), s.row_length_cov, share(s.empty_rows, s.num_rows),
                    static_cast<long long>(s.max_col_length), s.col_length_cov, share(s.empty_cols, s.num_cols), gen_s);
        std::fflush(stdout);
        gsparse::save_graph(path, g.csr);
        done++;
    }
    if (!a.quiet) std::fprintf(stderr, "gsparse-data: wrote %d graph%s to %s\n", done, done == 1 ? "" : "s", a.dir.c_str());
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    namespace zoo = gsparse::datasets::zoo;
    CLI::App app{"gsparse-data: deterministic dataset twins (synthetic graphs with the shape of GNN datasets) and the "
                 "graph zoo (graph families beyond the twins)"};
    app.require_subcommand(1);

    GenArgs gen;
    CLI::App *gen_cmd = app.add_subcommand("gen", "generate a twin or a zoo family's graph and write it to a graph file");
    gen_cmd->add_option("name", gen.name, "twin or zoo family name (see 'gsparse-data list')")->required();
    gen.options["scale"] =
        gen_cmd->add_option("--scale", gen.scale, "twins: fraction of the nodes and edges, in (0, 1]; rmat: log2 of the node count")
            ->capture_default_str();
    gen.options["seed"] = gen_cmd->add_option("--seed", gen.seed, "random seed (a non-negative integer)")
        ->check(CLI::Validator(
            [](std::string &text) {
                return text.find('-') == std::string::npos ? std::string()
                                                            : "must be a non-negative integer, got " + text;
            },
            "UINT64"))
        ->capture_default_str();
    gen.communities_opt =
        gen_cmd->add_option("--communities", gen.communities, "community count (default: the twin's, capped at nodes)");
    gen.options["communities"] = gen.communities_opt;
    gen.intra_opt = gen_cmd->add_option("--intra", gen.intra,
                                        "probability that a source is drawn from the row's community (default: the twin's)");
    gen.options["intra"] = gen.intra_opt;
    gen.options["order"] =
        gen_cmd->add_option("--order", gen.order, "node id order: shuffled or community (twins); natural or shuffled (zoo)")
            ->capture_default_str();
    gen.options["threads"] =
        gen_cmd->add_option("--threads", gen.threads, "worker threads (0: all cores); the graph does not depend on it")
            ->capture_default_str();
    gen.options["output"] = gen_cmd->add_option("-o,--output", gen.output, "output file (.gcsr binary, .mtx, .el)")->required();
    gen_cmd->add_flag("-q,--quiet", gen.quiet, "no progress messages on stderr (the results still go to stdout)");
    // The zoo families' parameters, one option each (values are checked by the family).
    {
        std::map<std::string, std::string> used_by;
        for (const auto &f : zoo::zoo_families())
            if (!f.twin)
                for (const auto &p : f.params)
                    if (!gen.options.count(p.name)) used_by[p.name] += (used_by[p.name].empty() ? "" : ", ") + f.name;
        for (const auto &[name, families] : used_by)
            gen.options[name] = gen_cmd->add_option("--" + name, gen.zoo_values[name],
                                                    "zoo parameter of " + families + " (see 'gsparse-data list')");
    }

    std::string stats_path;
    bool stats_json = false;
    CLI::App *stats_cmd = app.add_subcommand("stats", "print the row and column statistics of a graph file");
    stats_cmd->add_option("file", stats_path, "graph file (.gcsr, .mtx, edge list)")->required();
    stats_cmd->add_flag("--json", stats_json, "print one JSON object");

    CLI::App *list_cmd = app.add_subcommand("list", "list the twins and the zoo families with their parameters");

    ZooArgs zargs;
    CLI::App *zoo_cmd = app.add_subcommand("zoo", "the zoo manifest: named graphs in a train and a held-out split");
    zoo_cmd->require_subcommand(1);
    CLI::App *zoo_list = zoo_cmd->add_subcommand("list", "list the zoo's members with their resolved sizes");
    zoo_list->add_option("--split", zargs.split, "only this split: train or heldout")
        ->check(CLI::IsMember({"train", "heldout"}));
    zoo_list->add_option("--manifest", zargs.manifest, "a manifest file instead of the built-in datasets/zoo/zoo.txt");
    CLI::App *zoo_gen = zoo_cmd->add_subcommand("gen", "generate zoo members into a directory (NAME.gcsr)");
    zoo_gen->add_option("names", zargs.names, "member names (default: all, or the --split)");
    zoo_gen->add_option("--split", zargs.split, "every member of this split: train or heldout")
        ->check(CLI::IsMember({"train", "heldout"}));
    zoo_gen->add_option("-o,--output", zargs.dir, "output directory (created)")->required();
    zoo_gen->add_option("--format", zargs.format, "file format: gcsr, mtx or el")->capture_default_str();
    zoo_gen->add_option("--max-edges", zargs.max_edges, "skip members with more edges (0: no limit)")->capture_default_str();
    zoo_gen->add_flag("--skip-existing", zargs.skip_existing, "skip members whose file exists");
    zoo_gen->add_flag("-q,--quiet", zargs.quiet, "no progress messages on stderr");
    zoo_gen->add_option("--threads", zargs.threads, "worker threads (0: all cores)")->capture_default_str();
    zoo_gen->add_option("--manifest", zargs.manifest, "a manifest file instead of the built-in datasets/zoo/zoo.txt");

    // A first word that is neither a flag nor a command is named as such (CLI11 would only say that a
    // command is required).
    if (argc > 1 && argv[1][0] != '-') {
        const std::string cmd = argv[1];
        if (cmd != "gen" && cmd != "stats" && cmd != "list" && cmd != "zoo") {
            std::cerr << "gsparse-data: error: unknown command '" << cmd << "'; valid commands: gen, stats, list, zoo\n";
            return 2;
        }
        if (cmd == "zoo" && argc > 2 && argv[2][0] != '-' && std::string(argv[2]) != "list" &&
            std::string(argv[2]) != "gen") {
            std::cerr << "gsparse-data: error: unknown zoo command '" << argv[2] << "'; valid: list, gen\n";
            return 2;
        }
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp &e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp &e) {
        return app.exit(e);
    } catch (const CLI::ParseError &e) {
        app.exit(e);  // prints the problem on stderr
        return 2;
    }

    try {
        if (gen_cmd->parsed()) return run_gen(gen);
        if (stats_cmd->parsed()) return run_stats(stats_path, stats_json);
        if (list_cmd->parsed()) return run_list();
        if (zoo_list->parsed()) return run_zoo_list(zargs);
        if (zoo_gen->parsed()) return run_zoo_gen(zargs);
    } catch (const UsageError &e) {
        std::fflush(stdout);
        std::cerr << "gsparse-data: error: " << e.what() << "\n";
        return 2;
    } catch (const gsparse::Error &e) {
        std::fflush(stdout);
        std::cerr << "gsparse-data: error: " << e.what() << "\n";
        return 1;
    } catch (const std::exception &e) {
        std::fflush(stdout);
        std::cerr << "gsparse-data: error: " << e.what() << "\n";
        return 1;
    }
    return 2;
}
