#pragma once
// vellum's one exception type. Everything that reads files, requests or parameters reports bad input
// by throwing vellum::Error with a message that names what is wrong and where; callers at the edges
// (CLI, HTTP) turn it into a message or an error response. Nothing aborts on bad input.

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace vellum {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// throw_error("key {}: expected {}, found {}", key, want, got)
template <typename... Args>
[[noreturn]] void throw_error(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace vellum
