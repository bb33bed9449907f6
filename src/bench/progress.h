#pragma once
// A one-line progress bar on stderr ("[#####.....] 12/40 b=8 p=512"), redrawn with '\r'. Shown only
// when enabled (the caller decides: stderr is a TTY, or --progress), so logs and pipes stay clean.

#include <cstdio>
#include <string>

namespace vellum::bench {

class ProgressBar {
 public:
  ProgressBar(size_t total, bool enabled, std::FILE* out = stderr) : total_(total), enabled_(enabled), out_(out) {}
  ~ProgressBar() { finish(); }
  void update(size_t done, const std::string& label = "");
  void finish();  // ends the line once

  static bool stderr_is_tty();
  // The bar alone, for tests: width characters between brackets, then "done/total label".
  static std::string render(size_t done, size_t total, size_t width, const std::string& label);

 private:
  size_t total_;
  bool enabled_;
  std::FILE* out_;
  bool drawn_ = false;
};

}  // namespace vellum::bench
