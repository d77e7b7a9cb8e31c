// Counting occurrences of a string in generated text (PTX, lowered statements) for IR tests.
#pragma once

#include <cstddef>
#include <string>

namespace gsparse::test {

/// How many times `what` occurs in `text` (overlapping occurrences counted).
inline size_t count_of(const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) n++;
    return n;
}

}  // namespace gsparse::test
