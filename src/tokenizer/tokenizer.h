#pragma once
// The tokenizer facade: a vocabulary from GGUF metadata plus the encoder its model names
// (SentencePiece-style, byte-level BPE or WordPiece). Cheap to copy (shared immutable state) and safe
// to use from several threads at once.
//
// encode(): special tokens are first cut out of the text (user-defined tokens always; control and
// unknown tokens only with parse_special, as chat prompts need), then each stretch of plain text is
// normalized where the vocabulary says so (NFC for Qwen2) and encoded by the model's algorithm. decode(): pieces concatenated; control tokens are dropped unless
// asked for; SentencePiece's dummy-prefix space is removed from the first piece. Bytes are returned
// as the tokens spell them (use StreamingDetokenizer for text that must be valid UTF-8).

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf_file.h"
#include "gguf/metadata.h"
#include "tokenizer/vocab.h"

namespace vellum::tokenizer {

class Tokenizer {
 public:
  static Tokenizer from_gguf(const gguf::GgufFile& file) { return from_metadata(file.metadata()); }
  static Tokenizer from_metadata(const gguf::Metadata& md);
  static Tokenizer from_vocab(Vocab vocab);

  // add_bos: add the special tokens the vocabulary asks for (BOS when tokenizer.ggml.add_bos_token,
  // EOS when add_eos_token; CLS/SEP for WordPiece). parse_special: text such as "<|im_end|>" becomes
  // that control token instead of plain text.
  std::vector<int32_t> encode(std::string_view text, bool add_bos = true, bool parse_special = false) const;
  // Concatenated pieces; `special`: render control tokens as their text instead of dropping them.
  // Throws vellum::Error for an id outside the vocabulary.
  std::string decode(std::span<const int32_t> ids, bool special = false) const;
  // One token's bytes (no leading-space removal). Throws for an out-of-range id.
  std::string token_to_piece(int32_t id, bool special = true) const;

  const Vocab& vocab() const;
  size_t vocab_size() const { return vocab().size(); }
  int32_t bos() const { return vocab().bos(); }
  int32_t eos() const { return vocab().eos(); }
  int32_t eot() const { return vocab().eot(); }
  int32_t pad() const { return vocab().pad(); }
  int32_t unk() const { return vocab().unk(); }
  bool is_eog(int32_t id) const { return vocab().is_eog(id); }
  // Whether decode() drops one leading space from the first piece (SentencePiece dummy prefix, WordPiece).
  bool strips_leading_space() const;

 private:
  struct State;
  explicit Tokenizer(std::shared_ptr<const State> state) : state_(std::move(state)) {}
  std::shared_ptr<const State> state_;
};

}  // namespace vellum::tokenizer
