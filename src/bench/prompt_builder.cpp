#include "bench/prompt_builder.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace vellum::bench {
namespace {
// Common English words: most are one token in every BPE/SentencePiece vocabulary.
const char* const kWords[] = {"the", "cat", "sat", "on", "a", "mat", "and", "the", "dog", "ran", "to", "the", "park",
                              "with", "his", "friend", "they", "played", "all", "day", "in", "sun", "then", "went",
                              "home", "for", "tea", "she", "was", "very", "happy", "little", "bird", "saw", "big",
                              "tree", "by", "old", "house", "one", "morning"};
constexpr size_t kNumWords = sizeof(kWords) / sizeof(kWords[0]);
}  // namespace

PromptBuilder::PromptBuilder(std::string base_url, std::string model) : base_url_(std::move(base_url)), model_(std::move(model)) {
  exact_ = count("the cat").has_value();
}

std::string PromptBuilder::method() const {
  return exact_ ? "exact (server /tokenize)" : "approximate (no /tokenize: one token per word assumed)";
}

std::string PromptBuilder::words(uint32_t n, uint64_t seed) {
  std::string s;
  for (uint32_t i = 0; i < n; ++i) {
    if (i) s += ' ';
    // A seed-dependent stride keeps texts with different seeds apart from their first word on.
    s += kWords[(seed * 7 + i * (1 + seed % 5)) % kNumWords];
  }
  return s;
}

std::optional<uint32_t> PromptBuilder::count(const std::string& text) {
  httplib::Client cli(base_url_);
  cli.set_connection_timeout(5, 0);
  cli.set_read_timeout(30, 0);
  nlohmann::json body = {{"prompt", text}};
  if (!model_.empty()) body["model"] = model_;
  auto res = cli.Post("/tokenize", body.dump(), "application/json");
  if (!res || res->status != 200) return std::nullopt;
  auto j = nlohmann::json::parse(res->body, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  if (j.contains("count") && j["count"].is_number_unsigned()) return j["count"].get<uint32_t>();
  if (j.contains("tokens") && j["tokens"].is_array()) return static_cast<uint32_t>(j["tokens"].size());
  return std::nullopt;
}

std::string PromptBuilder::make(uint32_t tokens, uint64_t seed) {
  if (!exact_) return words(tokens, seed);
  // The largest word count whose text has at most `tokens` tokens (counts grow with words).
  uint32_t lo = 0, hi = tokens + 1;
  while (lo + 1 < hi) {
    const uint32_t mid = (lo + hi) / 2;
    const auto c = count(words(mid, seed));
    if (c && *c <= tokens) lo = mid;
    else hi = mid;
  }
  return words(std::max<uint32_t>(lo, 1), seed);
}

}  // namespace vellum::bench
