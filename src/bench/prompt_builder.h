#pragma once
// Prompts of a given token length for a remote server. With the server's /tokenize endpoint (vellum,
// vLLM, llama-server's variant) the word count is searched until the prompt has exactly (or at most)
// the wanted tokens; without it, one token per word is assumed and the report says "approximate".

#include <cstdint>
#include <optional>
#include <string>

namespace vellum::bench {

class PromptBuilder {
 public:
  // Probes base_url's /tokenize once.
  explicit PromptBuilder(std::string base_url, std::string model = "");
  bool exact() const { return exact_; }
  std::string method() const;  // for reports

  // `tokens` tokens of text starting with word `seed` of a fixed word cycle (distinct seeds give
  // distinct texts). With /tokenize the count includes what the server adds (BOS).
  std::string make(uint32_t tokens, uint64_t seed);
  // Tokens the server counts for `text` (nullopt without /tokenize).
  std::optional<uint32_t> count(const std::string& text);

  static std::string words(uint32_t n, uint64_t seed);

 private:
  std::string base_url_, model_;
  bool exact_ = false;
};

}  // namespace vellum::bench
