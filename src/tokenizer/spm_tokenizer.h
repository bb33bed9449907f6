#pragma once
// SentencePiece-style encoding (tokenizer.ggml.model "llama"): start from single UTF-8 characters and
// repeatedly merge the adjacent pair whose concatenation is the highest-scoring token (ties: leftmost),
// using a priority queue with lazy invalidation, so the cost is O(n log n) in the text length.
// Characters that end up in no token are emitted as byte-fallback tokens (<0xXX>).

#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace vellum::tokenizer {

class SpmTokenizer {
 public:
  explicit SpmTokenizer(const Vocab& vocab);
  // `text` must already have its spaces escaped as U+2581 (and the dummy prefix added).
  void encode(std::string_view text, std::vector<int32_t>& out) const;

 private:
  const Vocab& vocab_;
  uint64_t cache_owner_;
};

}  // namespace vellum::tokenizer
