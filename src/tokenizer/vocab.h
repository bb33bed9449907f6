#pragma once
// A tokenizer vocabulary as GGUF stores it under tokenizer.ggml.*: token texts, scores, types, BPE
// merges, special token ids and the flags that change encoding (add_bos, add_space_prefix, the
// pre-tokenizer name). Immutable after loading; safe to share between threads.
//
// Invariants: every id in [0, size()) has a TokenData; special ids are -1 or valid ids; merges refer
// to tokens that exist (a merge whose parts or result are not tokens is dropped at load time).

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gguf/metadata.h"

namespace vellum::tokenizer {

enum class VocabType {
  Spm,  // "llama": SentencePiece-style, score-driven merges with byte fallback
  Bpe,  // "gpt2": byte-level BPE, rank-driven merges after a regex pre-tokenizer
  Wpm,  // "bert": WordPiece, greedy longest match
};

// llama.cpp's token attributes, derived from tokenizer.ggml.token_type.
enum TokenAttr : uint32_t {
  kAttrUndefined = 0,
  kAttrUnknown = 1u << 0,
  kAttrUnused = 1u << 1,
  kAttrNormal = 1u << 2,
  kAttrControl = 1u << 3,
  kAttrUserDefined = 1u << 4,
  kAttrByte = 1u << 5,
  kAttrLStrip = 1u << 6,  // when split out of text, whitespace before it is dropped
  kAttrRStrip = 1u << 7,  // when split out of text, whitespace after it is dropped
};

// GGUF token types (tokenizer.ggml.token_type values).
enum class TokenType : int32_t { Undefined = 0, Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6 };

struct TokenData {
  std::string text;
  float score = 0.0f;
  uint32_t attr = kAttrNormal;
};

class Vocab {
 public:
  static Vocab from_metadata(const gguf::Metadata& md);

  VocabType type() const { return type_; }
  const std::string& model_name() const { return model_name_; }  // tokenizer.ggml.model
  const std::string& pre() const { return pre_; }                // tokenizer.ggml.pre ("default" if absent)
  size_t size() const { return tokens_.size(); }
  bool valid(int32_t id) const { return id >= 0 && static_cast<size_t>(id) < tokens_.size(); }
  const TokenData& token(int32_t id) const { return tokens_[static_cast<size_t>(id)]; }
  // Token id of exactly `text`, or -1.
  int32_t find(std::string_view text) const;
  size_t max_token_length() const { return max_token_len_; }

  // Byte fallback: the token for one raw byte ("<0x41>" for SPM, the byte-level char for BPE), or -1.
  int32_t byte_token(uint8_t byte) const { return byte_tokens_[byte]; }
  // For a byte-fallback token (kAttrByte), its byte; -1 otherwise.
  int byte_value(int32_t id) const;

  struct Merge {
    int32_t rank;
    int32_t result;
  };
  // The BPE merge of two adjacent tokens, or null.
  const Merge* find_merge(int32_t left, int32_t right) const {
    const auto it = merges_.find(merge_key(left, right));
    return it == merges_.end() ? nullptr : &it->second;
  }
  size_t merge_count() const { return merges_.size(); }

  // Tokens that split raw text before the model's own algorithm runs (control, user-defined, unknown),
  // longest text first.
  const std::vector<int32_t>& special_tokens() const { return special_tokens_; }
  bool is_control(int32_t id) const { return valid(id) && (token(id).attr & kAttrControl); }
  // End of generation: eos, eot and other end markers.
  bool is_eog(int32_t id) const;

  int32_t bos() const { return bos_; }
  int32_t eos() const { return eos_; }
  int32_t eot() const { return eot_; }
  int32_t pad() const { return pad_; }
  int32_t unk() const { return unk_; }
  int32_t sep() const { return sep_; }
  int32_t cls() const { return cls_; }
  int32_t mask() const { return mask_; }
  bool add_bos() const { return add_bos_; }
  bool add_eos() const { return add_eos_; }
  bool add_space_prefix() const { return add_space_prefix_; }
  // SentencePiece: no mergeable piece has a space (U+2581) right after a non-space, so text can be
  // encoded in independent segments cut before each run of spaces.
  bool spm_splits_at_spaces() const { return spm_splits_at_spaces_; }
  // Text is NFC-normalized before encoding (Qwen2's tokenizer.json normalizer; GGUF has no key for
  // normalizers, so this follows the pre-tokenizer name).
  bool normalize_nfc() const { return normalize_nfc_; }
  // llama3-style BPE: a pre-tokenized word that is itself a token skips the merges.
  bool ignore_merges() const { return ignore_merges_; }

 private:
  static uint64_t merge_key(int32_t l, int32_t r) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(r);
  }

  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  VocabType type_ = VocabType::Spm;
  std::string model_name_;
  std::string pre_;
  std::vector<TokenData> tokens_;
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> token_to_id_;
  std::unordered_map<uint64_t, Merge> merges_;
  std::vector<int32_t> byte_tokens_ = std::vector<int32_t>(256, -1);
  std::vector<int32_t> special_tokens_;
  std::vector<int32_t> eog_;
  size_t max_token_len_ = 0;

  int32_t bos_ = -1, eos_ = -1, eot_ = -1, pad_ = -1, unk_ = -1, sep_ = -1, cls_ = -1, mask_ = -1;
  bool add_bos_ = false, add_eos_ = false, add_space_prefix_ = false, ignore_merges_ = false;
  bool spm_splits_at_spaces_ = false;
  bool normalize_nfc_ = false;
};

}  // namespace vellum::tokenizer
