#pragma once
// Streaming detokenizer: turns generated token ids into text deltas that are always valid UTF-8.
// A multi-byte character split across tokens (byte-fallback tokens, byte-level BPE pieces) is held
// back until the token that completes it arrives; bytes that can never become valid are replaced by
// U+FFFD. With strip_leading_space, the first text piece loses one leading space (SentencePiece's
// dummy prefix, for decoding a sequence from its start; a continuation after a prompt keeps it).

#include <cstdint>
#include <string>

#include "tokenizer/tokenizer.h"

namespace vellum::tokenizer {

class StreamingDetokenizer {
 public:
  explicit StreamingDetokenizer(Tokenizer tokenizer, bool strip_leading_space = false, bool special = false)
      : tokenizer_(std::move(tokenizer)),
        strip_(strip_leading_space && tokenizer_.strips_leading_space()),
        special_(special) {}

  // Text completed by this token (possibly empty).
  std::string push(int32_t id);
  // Whatever is still held back, with incomplete sequences replaced by U+FFFD; resets the stream.
  std::string flush();
  // Bytes currently held back.
  size_t pending() const { return pending_.size(); }

 private:
  Tokenizer tokenizer_;
  bool strip_;
  bool special_;
  std::string pending_;
};

}  // namespace vellum::tokenizer
