#pragma once
// A path in the temp directory for one test process (its pid in the name), removed with the object:
// at the end of a test, or at exit for a static one. CTest runs every test in a process of its
// own, so a file a test leaves behind is left once per test, every run.

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace vellum::testing {

class TempPath {
 public:
  explicit TempPath(const std::string& stem, const std::string& suffix = "")
      : path_((std::filesystem::temp_directory_path() / (stem + "_" + std::to_string(::getpid()) + suffix)).string()) {}
  ~TempPath() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  TempPath(const TempPath&) = delete;
  TempPath& operator=(const TempPath&) = delete;
  const std::string& str() const { return path_; }
  operator const std::string&() const { return path_; }

 private:
  std::string path_;
};

}  // namespace vellum::testing
