// Names in user programs: C identifiers, checked with an error naming what they name; the words for
// where an operand is read.
#pragma once

#include <cctype>
#include <string>

#include "core/error.h"

namespace gsparse::dsl {

/// Where an operand is read: at the source node u, the destination node v or the edge e.
enum class At { Src, Dst, Edge };

inline void check_identifier(const std::string &name, const char *what) {
    bool ok = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
    for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!ok) fail<ShapeError>(what, " '", name, "' is not a C identifier");
}

inline const char *at_name(At at) {
    switch (at) {
    case At::Src: return "source";
    case At::Dst: return "destination";
    case At::Edge: return "edge";
    }
    return "?";
}

}  // namespace gsparse::dsl
