#pragma once
// Byte-for-byte comparison of two runs' generated token ids (one list per prompt), for `vellum
// proof`: the first divergence (lowest prompt index, then position) and a readable report of it.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace vellum::bench {

using TokenRuns = std::vector<std::vector<int32_t>>;  // per prompt, the generated ids

struct Divergence {
  size_t prompt = 0;      // index into the suite
  size_t position = 0;    // index into the generated ids
  std::optional<int32_t> a, b;  // nullopt: that side ended here (shorter output)
};

struct Comparison {
  size_t prompts = 0, identical_prompts = 0;
  uint64_t tokens_a = 0, tokens_b = 0;
  std::optional<Divergence> first;
  size_t differing_prompts = 0;
  bool same() const { return !first.has_value(); }
};

// Throws vellum::Error when the two runs cover different numbers of prompts.
Comparison compare_runs(const TokenRuns& a, const TokenRuns& b);

// Several lines: the prompt, position, both tokens (id and quoted text) and up to `context` tokens
// before. `piece` turns one id into its text.
std::string describe_divergence(const Divergence& d, const TokenRuns& a, const TokenRuns& b,
                                const std::vector<std::string>& prompts,
                                const std::function<std::string(int32_t)>& piece, size_t context = 8);

// The last line: "proof: IDENTICAL ..." or "proof: DIFFERENT ...".
std::string summary_line(const Comparison& c);

// Quotes text for one-line display: escapes control characters, quotes and backslashes.
std::string quote(const std::string& text);

}  // namespace vellum::bench
