#include "autotune/progress.h"

#include <unistd.h>

namespace gsparse::autotune {

ProgressBar::ProgressBar(std::string label, size_t total, std::FILE *out)
    : label_(std::move(label)), total_(total == 0 ? 1 : total), out_(out), tty_(isatty(fileno(out)) != 0) {}

void ProgressBar::update(size_t done, const std::string &status) {
    const int width = 30;
    int filled = static_cast<int>(width * done / total_);
    if (tty_) {
        std::fprintf(out_, "\r%s [%.*s%*s] %zu/%zu %s\x1b[K", label_.c_str(), filled,
                     "==============================", width - filled, "", done, total_, status.c_str());
        std::fflush(out_);
    } else if (done == total_ || done * 10 / total_ != last_line_ * 10 / total_) {
        // Without a terminal, one line per tenth of the work.
        std::fprintf(out_, "%s %zu/%zu %s\n", label_.c_str(), done, total_, status.c_str());
        last_line_ = done;
    }
}

void ProgressBar::finish() {
    if (tty_) std::fprintf(out_, "\n");
    std::fflush(out_);
}

}  // namespace gsparse::autotune
