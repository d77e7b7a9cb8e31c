// A one-line progress bar for long measurements, redrawn in place on a terminal and printed as
// occasional lines otherwise (logs, CI).
#pragma once

#include <cstdio>
#include <string>

namespace gsparse::autotune {

class ProgressBar {
public:
    ProgressBar(std::string label, size_t total, std::FILE *out = stderr);
    /// Advances to `done` of `total` with a short status text (e.g. the last candidate's time).
    void update(size_t done, const std::string &status);
    void finish();

private:
    std::string label_;
    size_t total_;
    std::FILE *out_;
    bool tty_;
    size_t last_line_ = 0;
};

}  // namespace gsparse::autotune
