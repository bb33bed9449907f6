#pragma once
// The sweep axes of `vellum bench` ("-p 512,2048 -b 1,8"): comma-separated positive integers.

#include <cstdint>
#include <string>
#include <vector>

namespace vellum::bench {

// "512,2048" -> {512, 2048}. Throws vellum::Error naming `flag` for an empty list, an empty item,
// a non-number, zero when !allow_zero, or a value above max.
std::vector<uint32_t> parse_list(const std::string& text, const std::string& flag, bool allow_zero = false,
                                 uint32_t max = 1u << 20);

struct GridPoint {
  uint32_t prompt = 0, generate = 0, batch = 0;
};

// Every combination, batch outermost, then prompt length, then generated length.
std::vector<GridPoint> make_grid(const std::vector<uint32_t>& prompts, const std::vector<uint32_t>& gens,
                                 const std::vector<uint32_t>& batches);

}  // namespace vellum::bench
