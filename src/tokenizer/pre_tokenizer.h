#pragma once
// The regex pre-tokenizer of byte-level BPE vocabularies: text is cut into pieces by a list of
// regexes, each applied to the pieces the previous one produced, keeping both the matches and the
// text between them (Hugging Face's Split with behavior "Isolated"). Which regexes a vocabulary uses
// is named by tokenizer.ggml.pre; patterns are the ones from the models' tokenizer.json, compiled
// with PCRE2 (UTF, UCP: \p{L}, \s and friends are Unicode-aware; JIT when available).
//
// Invalid UTF-8 in the input is allowed: no pattern matches an invalid byte, so such bytes end up in
// the gaps between matches and reach the byte-level encoder unchanged.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace vellum::tokenizer {

class PreTokenizer {
 public:
  // The regexes for a tokenizer.ggml.pre name; throws vellum::Error for an unknown name.
  static std::vector<std::string> patterns_for(std::string_view pre);
  // Compiles `patterns` (throws vellum::Error naming the pattern and offset on a bad one).
  explicit PreTokenizer(const std::vector<std::string>& patterns);
  ~PreTokenizer();
  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;

  // Appends the pieces of `text` (views into it, in order, covering it exactly) to `out`.
  void split(std::string_view text, std::vector<std::string_view>& out) const;
  size_t pattern_count() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vellum::tokenizer
