// An assertion on errors: f throws an E whose message contains every given part.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <initializer_list>
#include <string>

namespace gsparse::test {

/// Succeeds when f throws exactly an E (or subclass) whose message contains every part.
template <typename E, typename F>
::testing::AssertionResult throws_with(F &&f, std::initializer_list<std::string> parts) {
    try {
        f();
    } catch (const E &e) {
        const std::string msg = e.what();
        for (const std::string &p : parts)
            if (msg.find(p) == std::string::npos)
                return ::testing::AssertionFailure() << "message \"" << msg << "\" does not contain \"" << p << "\"";
        return ::testing::AssertionSuccess();
    } catch (const std::exception &e) {
        return ::testing::AssertionFailure() << "threw a different exception type: " << e.what();
    }
    return ::testing::AssertionFailure() << "did not throw";
}

}  // namespace gsparse::test
