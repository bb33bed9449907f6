#pragma once
// Byte-level BPE encoding (tokenizer.ggml.model "gpt2"): the pre-tokenizer cuts text into words, each
// word's bytes become their byte-level tokens, and adjacent pairs are merged lowest merge rank first
// (ties: leftmost) through a priority queue with lazy invalidation: O(n log n) per word, so huge
// repetitions stay linear-ish. Merges are looked up by token-id pair, never by building strings.

#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/vocab.h"

namespace vellum::tokenizer {

class BpeTokenizer {
 public:
  explicit BpeTokenizer(const Vocab& vocab);
  void encode(std::string_view text, std::vector<int32_t>& out) const;
  // One pre-tokenized word.
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;
  const PreTokenizer& pre_tokenizer() const { return pre_; }

 private:
  void merge_word(std::string_view word, std::vector<int32_t>& out) const;

  const Vocab& vocab_;
  PreTokenizer pre_;
  uint64_t cache_owner_;
};

}  // namespace vellum::tokenizer
