#pragma once
// WordPiece encoding (tokenizer.ggml.model "bert"), as Hugging Face's BertNormalizer +
// BertPreTokenizer + WordPiece do it: control characters dropped, accents stripped (canonical
// decomposition, nonspacing marks removed), lowercased, CJK characters and punctuation isolated, then
// each word split greedily into the longest vocabulary pieces. GGUF stores word-initial pieces with a
// U+2581 prefix and continuation pieces bare (llama.cpp's convention), so "##" never appears.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace vellum::tokenizer {

class WpmTokenizer {
 public:
  explicit WpmTokenizer(const Vocab& vocab);
  void encode(std::string_view text, std::vector<int32_t>& out) const;
  // Normalized, lowercased words (exposed for tests).
  static std::vector<std::string> split_words(std::string_view text);

 private:
  void encode_word(const std::string& word, std::vector<int32_t>& out) const;

  const Vocab& vocab_;
  uint64_t cache_owner_;
};

}  // namespace vellum::tokenizer
