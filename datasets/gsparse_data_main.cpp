// gsparse-data: generates dataset twins and prints graph statistics.
//
//   gsparse-data gen NAME [--scale S] [--seed K] [--communities K] [--intra P]
//                        [--order shuffled|community] [--threads T] [--quiet] -o FILE
//   gsparse-data stats FILE
//   gsparse-data list
//
// Exit codes: 0 success, 1 a gsparse or runtime error (bad value, unreadable or unwritable file),
// 2 a command-line error (unknown flag, missing argument, malformed number).
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

#include "core/error.h"
#include "graph/convert.h"
#include "graph/io.h"
#include "twin/twin.h"

namespace {

using Clock = std::chrono::steady_clock;

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

void print_stats(const gsparse::GraphStats &s, std::optional<double> target_cov = std::nullopt) {
    std::printf("nodes       %lld", static_cast<long long>(s.num_rows));
    if (s.num_cols != s.num_rows) std::printf(" rows, %lld columns", static_cast<long long>(s.num_cols));
    std::printf("\nedges       %lld\n", static_cast<long long>(s.nnz));
    std::printf("avg         %.2f\n", s.avg_row_length);
    std::printf("max         %lld\n", static_cast<long long>(s.max_row_length));
    std::printf("cov         %.3f", s.row_length_cov);
    if (target_cov) std::printf(" (target %.2f)", *target_cov);
    std::printf("\nempty rows  %lld\n", static_cast<long long>(s.empty_rows));
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
};

int run_gen(const GenArgs &a) {
    using namespace gsparse::datasets;
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

int run_stats(const std::string &path) {
    if (!std::filesystem::exists(path)) gsparse::fail<gsparse::Error>("cannot read '", path, "': no such file");
    const auto t0 = Clock::now();
    gsparse::LoadedGraph g = gsparse::load_graph(path);
    const double load_s = seconds_since(t0);
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
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"gsparse-data: deterministic dataset twins (synthetic graphs with the shape of GNN datasets)"};
    app.require_subcommand(1);

    GenArgs gen;
    CLI::App *gen_cmd = app.add_subcommand("gen", "generate a twin and write it to a graph file");
    gen_cmd->add_option("name", gen.name, "twin name (see 'gsparse-data list')")->required();
    gen_cmd->add_option("--scale", gen.scale, "fraction of the nodes and edges, in (0, 1]")->capture_default_str();
    gen_cmd->add_option("--seed", gen.seed, "random seed (a non-negative integer)")
        ->check(CLI::Validator(
            [](std::string &text) {
                return text.find('-') == std::string::npos ? std::string()
                                                            : "must be a non-negative integer, got " + text;
            },
            "UINT64"))
        ->capture_default_str();
    gen.communities_opt =
        gen_cmd->add_option("--communities", gen.communities, "community count (default: the twin's, capped at nodes)");
    gen.intra_opt = gen_cmd->add_option("--intra", gen.intra,
                                        "probability that a source is drawn from the row's community (default: the twin's)");
    gen_cmd->add_option("--order", gen.order, "node id order: shuffled or community")->capture_default_str();
    gen_cmd->add_option("--threads", gen.threads, "worker threads (0: all cores); the graph does not depend on it")
        ->capture_default_str();
    gen_cmd->add_option("-o,--output", gen.output, "output file (.gcsr binary, .mtx, .el)")->required();
    gen_cmd->add_flag("-q,--quiet", gen.quiet, "no progress messages on stderr (the results still go to stdout)");

    std::string stats_path;
    CLI::App *stats_cmd = app.add_subcommand("stats", "print the row statistics of a graph file");
    stats_cmd->add_option("file", stats_path, "graph file (.gcsr, .mtx, edge list)")->required();

    CLI::App *list_cmd = app.add_subcommand("list", "list the twins and their published statistics");

    // A first word that is neither a flag nor a command is named as such (CLI11 would only say that a
    // command is required).
    if (argc > 1 && argv[1][0] != '-') {
        const std::string cmd = argv[1];
        if (cmd != "gen" && cmd != "stats" && cmd != "list") {
            std::cerr << "gsparse-data: error: unknown command '" << cmd << "'; valid commands: gen, stats, list\n";
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
        if (stats_cmd->parsed()) return run_stats(stats_path);
        if (list_cmd->parsed()) return run_list();
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
