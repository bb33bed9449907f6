#include "bench/grid.h"

#include <charconv>

#include "core/error.h"

namespace vellum::bench {

std::vector<uint32_t> parse_list(const std::string& text, const std::string& flag, bool allow_zero, uint32_t max) {
  std::vector<uint32_t> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) throw_error("{} '{}': empty item (expected comma-separated integers such as 1,8,32)", flag, text);
    uint64_t value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (ec != std::errc() || end != item.data() + item.size()) throw_error("{} '{}': '{}' is not a non-negative integer", flag, text, item);
    if (value == 0 && !allow_zero) throw_error("{} '{}': values must be positive", flag, text);
    if (value > max) throw_error("{} '{}': {} is above the limit {}", flag, text, value, max);
    out.push_back(static_cast<uint32_t>(value));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<GridPoint> make_grid(const std::vector<uint32_t>& prompts, const std::vector<uint32_t>& gens,
                                 const std::vector<uint32_t>& batches) {
  std::vector<GridPoint> grid;
  for (uint32_t b : batches)
    for (uint32_t p : prompts)
      for (uint32_t n : gens) grid.push_back({p, n, b});
  return grid;
}

}  // namespace vellum::bench
