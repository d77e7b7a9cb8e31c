// The zoo manifest: named graphs (family, parameters, seed) split into `train` and `heldout`.
// Text format, one member per line (see datasets/zoo/zoo.txt):
//   NAME SPLIT FAMILY seed=K [param=value ...]     # comment
#include <cctype>
#include <set>
#include <sstream>

#include "core/error.h"
#include "zoo/zoo.h"

namespace gsparse::datasets::zoo {

namespace {

bool valid_name(const std::string &s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
    return s[0] != '.' && s[0] != '-';
}

}  // namespace

std::vector<ZooMember> parse_manifest(const std::string &text, const std::string &source) {
    std::vector<ZooMember> members;
    std::set<std::string> names;
    std::istringstream in(text);
    std::string line;
    for (int number = 1; std::getline(in, line); number++) {
        const auto hash = line.find('#');
        if (hash != std::string::npos) line.resize(hash);
        std::istringstream words(line);
        std::vector<std::string> w;
        for (std::string t; words >> t;) w.push_back(t);
        if (w.empty()) continue;
        const std::string where = source + ":" + std::to_string(number) + ": ";
        if (w.size() < 4) fail<Error>(where, "expected 'NAME SPLIT FAMILY seed=K [param=value ...]', got '", line, "'");
        ZooMember m;
        m.name = w[0];
        m.split = w[1];
        m.family = w[2];
        m.line = number;
        if (!valid_name(m.name))
            fail<Error>(where, "member name '", m.name, "' may only hold letters, digits, '-', '_' and '.'");
        if (!names.insert(m.name).second) fail<Error>(where, "member name '", m.name, "' appears twice");
        if (m.split != "train" && m.split != "heldout")
            fail<Error>(where, "split '", m.split, "' of '", m.name, "' must be train or heldout");
        bool has_seed = false;
        for (size_t i = 3; i < w.size(); i++) {
            const auto eq = w[i].find('=');
            if (eq == std::string::npos || eq == 0 || eq + 1 == w[i].size())
                fail<Error>(where, "expected param=value, got '", w[i], "'");
            const std::string key = w[i].substr(0, eq), value = w[i].substr(eq + 1);
            if (key == "seed") {
                if (value.find_first_not_of("0123456789") != std::string::npos || value.size() > 19)
                    fail<Error>(where, "seed = '", value, "' must be a non-negative integer");
                m.seed = std::stoull(value);
                has_seed = true;
            } else if (!m.params.emplace(key, value).second) {
                fail<Error>(where, "parameter '", key, "' appears twice");
            }
        }
        if (!has_seed) fail<Error>(where, "member '", m.name, "' has no seed=K");
        try {
            zoo_shape(m.family, m.params, m.seed);
        } catch (const Error &e) {
            fail<Error>(where, e.what());
        }
        members.push_back(std::move(m));
    }
    return members;
}

const std::vector<ZooMember> &builtin_manifest() {
    static const std::vector<ZooMember> m = parse_manifest(builtin_manifest_text(), "datasets/zoo/zoo.txt");
    return m;
}

const ZooMember &find_member(const std::vector<ZooMember> &manifest, const std::string &name) {
    for (const auto &m : manifest)
        if (m.name == name) return m;
    fail<Error>("no zoo member named '", name, "' (see 'gsparse-data zoo list')");
}

std::vector<ZooMember> members_of_split(const std::vector<ZooMember> &manifest, const std::string &split) {
    if (split != "train" && split != "heldout") fail<Error>("split '", split, "' must be train or heldout");
    std::vector<ZooMember> out;
    for (const auto &m : manifest)
        if (m.split == split) out.push_back(m);
    return out;
}

}  // namespace gsparse::datasets::zoo
