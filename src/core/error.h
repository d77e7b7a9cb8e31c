// Error types of gsparse. Every problem detected at a boundary (graph files, graph arrays, tensor
// shapes, schedule parameters, command lines) is reported by throwing one of these, with a message
// that names the offending index or value. Nothing in gsparse aborts the process on bad input.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace gsparse {

/// Base class of all gsparse errors.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A graph whose arrays are inconsistent (rowPtr, indices, permutations, sizes).
class GraphError : public Error {
public:
    using Error::Error;
};

/// A malformed, truncated or unsupported graph file.
class FormatError : public Error {
public:
    using Error::Error;
};

/// Tensor shapes or dtypes that do not fit an operator.
class ShapeError : public Error {
public:
    using Error::Error;
};

/// A schedule parameter point that is not valid for an operator or target.
class ScheduleError : public Error {
public:
    using Error::Error;
};

/// A failure to compile or run a kernel.
class KernelError : public Error {
public:
    using Error::Error;
};

namespace detail {
template <typename... Args>
std::string concat(const Args &...args) {
    std::ostringstream os;
    (os << ... << args);
    return os.str();
}
}  // namespace detail

/// Throws E with the streamed concatenation of args as its message.
template <typename E, typename... Args>
[[noreturn]] void fail(const Args &...args) {
    throw E(detail::concat(args...));
}

}  // namespace gsparse
