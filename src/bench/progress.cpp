#include "bench/progress.h"

#include <unistd.h>

#include <algorithm>

namespace vellum::bench {

std::string ProgressBar::render(size_t done, size_t total, size_t width, const std::string& label) {
  done = std::min(done, total);
  const size_t filled = total == 0 ? width : done * width / total;
  std::string s = "[" + std::string(filled, '#') + std::string(width - filled, '.') + "] " + std::to_string(done) +
                  "/" + std::to_string(total);
  if (!label.empty()) s += " " + label;
  return s;
}

void ProgressBar::update(size_t done, const std::string& label) {
  if (!enabled_) return;
  // Pad so that a shorter label overwrites a longer one.
  std::fprintf(out_, "\r%-78s", render(done, total_, 30, label).c_str());
  std::fflush(out_);
  drawn_ = true;
}

void ProgressBar::finish() {
  if (enabled_ && drawn_) std::fprintf(out_, "\n");
  drawn_ = false;
}

bool ProgressBar::stderr_is_tty() { return isatty(fileno(stderr)) != 0; }

}  // namespace vellum::bench
