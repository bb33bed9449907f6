#include "tokenizer/vocab.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "tokenizer/unicode.h"

namespace vellum::tokenizer {

namespace {

uint32_t attr_from_type(int32_t type) {
  switch (static_cast<TokenType>(type)) {
    case TokenType::Normal: return kAttrNormal;
    case TokenType::Unknown: return kAttrUnknown;
    case TokenType::Control: return kAttrControl;
    case TokenType::UserDefined: return kAttrUserDefined;
    case TokenType::Unused: return kAttrUnused;
    case TokenType::Byte: return kAttrByte;
    case TokenType::Undefined: return kAttrUndefined;
  }
  return kAttrUndefined;
}

// Pre-tokenizers whose HF model sets ignore_merges (llama.cpp keys it off the pre-tokenizer name).
bool pre_ignores_merges(const std::string& pre) {
  static const std::array<std::string_view, 8> names = {"llama3", "llama-v3", "llama-bpe", "falcon3",
                                                        "falcon-h1", "pixtral", "tekken", "midm-2.0"};
  return std::find(names.begin(), names.end(), pre) != names.end();
}

}  // namespace

int32_t Vocab::find(std::string_view text) const {
  const auto it = token_to_id_.find(text);
  return it == token_to_id_.end() ? -1 : it->second;
}

int Vocab::byte_value(int32_t id) const {
  if (!valid(id) || !(token(id).attr & kAttrByte)) return -1;
  const std::string& t = token(id).text;
  if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>') {
    auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      return -1;
    };
    const int hi = hex(t[3]), lo = hex(t[4]);
    if (hi >= 0 && lo >= 0) return hi * 16 + lo;
  }
  if (t.size() == 1) return static_cast<uint8_t>(t[0]);
  return -1;
}

bool Vocab::is_eog(int32_t id) const {
  return id >= 0 && std::find(eog_.begin(), eog_.end(), id) != eog_.end();
}

Vocab Vocab::from_metadata(const gguf::Metadata& md) {
  Vocab v;
  if (!md.contains("tokenizer.ggml.model")) throw_error("tokenizer.ggml.model: missing (no tokenizer in this file)");
  v.model_name_ = md.get<std::string>("tokenizer.ggml.model");
  if (v.model_name_ == "llama") {
    v.type_ = VocabType::Spm;
  } else if (v.model_name_ == "gpt2") {
    v.type_ = VocabType::Bpe;
  } else if (v.model_name_ == "bert") {
    v.type_ = VocabType::Wpm;
  } else {
    throw_error("tokenizer.ggml.model: unsupported tokenizer model '{}' (supported: llama, gpt2, bert)", v.model_name_);
  }
  v.pre_ = md.get_or<std::string>("tokenizer.ggml.pre", "default");

  auto texts = md.get_array<std::string>("tokenizer.ggml.tokens");
  if (texts.empty()) throw_error("tokenizer.ggml.tokens: empty vocabulary");
  if (texts.size() > static_cast<size_t>(INT32_MAX)) throw_error("tokenizer.ggml.tokens: too many tokens");
  const size_t n = texts.size();
  std::vector<float> scores;
  if (md.contains("tokenizer.ggml.scores")) {
    scores = md.get_array<float>("tokenizer.ggml.scores");
    if (scores.size() != n) throw_error("tokenizer.ggml.scores: {} entries for {} tokens", scores.size(), n);
  }
  std::vector<int32_t> types;
  if (md.contains("tokenizer.ggml.token_type")) {
    types = md.get_array<int32_t>("tokenizer.ggml.token_type");
    if (types.size() != n) throw_error("tokenizer.ggml.token_type: {} entries for {} tokens", types.size(), n);
  }

  v.tokens_.resize(n);
  v.token_to_id_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    TokenData& t = v.tokens_[i];
    t.text = std::move(texts[i]);
    // A NaN score would break the merge queue's ordering; treat it as the lowest score.
    t.score = scores.empty() ? 0.0f : (std::isnan(scores[i]) ? -std::numeric_limits<float>::max() : scores[i]);
    t.attr = types.empty() ? kAttrNormal : attr_from_type(types[i]);
    v.max_token_len_ = std::max(v.max_token_len_, t.text.size());
    // First occurrence wins for duplicate texts, as a map built front to back would give.
    v.token_to_id_.emplace(t.text, static_cast<int32_t>(i));
  }

  // Special ids: out-of-range ids are dropped rather than trusted.
  auto special = [&](const char* key, int32_t fallback) -> int32_t {
    const auto id = md.find_int(key);
    if (!id) return v.valid(fallback) ? fallback : -1;
    return (*id >= 0 && static_cast<uint64_t>(*id) < n) ? static_cast<int32_t>(*id) : -1;
  };
  switch (v.type_) {
    case VocabType::Spm:
      v.bos_ = special("tokenizer.ggml.bos_token_id", 1);
      v.eos_ = special("tokenizer.ggml.eos_token_id", 2);
      v.unk_ = special("tokenizer.ggml.unknown_token_id", 0);
      break;
    case VocabType::Bpe:
      v.bos_ = special("tokenizer.ggml.bos_token_id", -1);
      v.eos_ = special("tokenizer.ggml.eos_token_id", -1);
      v.unk_ = special("tokenizer.ggml.unknown_token_id", -1);
      break;
    case VocabType::Wpm:
      v.unk_ = special("tokenizer.ggml.unknown_token_id", 100);
      v.cls_ = special("tokenizer.ggml.cls_token_id", 101);
      v.sep_ = special("tokenizer.ggml.seperator_token_id", 102);
      v.bos_ = special("tokenizer.ggml.bos_token_id", v.cls_);
      v.eos_ = special("tokenizer.ggml.eos_token_id", v.sep_);
      break;
  }
  if (v.sep_ < 0) v.sep_ = special("tokenizer.ggml.seperator_token_id", -1);
  if (v.cls_ < 0) v.cls_ = special("tokenizer.ggml.cls_token_id", -1);
  v.pad_ = special("tokenizer.ggml.padding_token_id", -1);
  v.mask_ = special("tokenizer.ggml.mask_token_id", -1);
  v.eot_ = special("tokenizer.ggml.eot_token_id", -1);
  const int32_t eom = special("tokenizer.ggml.eom_token_id", -1);

  const bool is_wpm = v.type_ == VocabType::Wpm;
  // llama.cpp's defaults: SentencePiece and WordPiece add BOS/CLS, BPE only for the llama3 family.
  const bool llama3_family = v.type_ == VocabType::Bpe && v.pre_ != "tekken" && pre_ignores_merges(v.pre_);
  v.add_bos_ = md.get_or<bool>("tokenizer.ggml.add_bos_token", v.type_ != VocabType::Bpe || llama3_family);
  v.add_eos_ = md.get_or<bool>("tokenizer.ggml.add_eos_token", is_wpm);
  v.add_space_prefix_ = md.get_or<bool>("tokenizer.ggml.add_space_prefix", v.type_ == VocabType::Spm);
  v.ignore_merges_ = v.type_ == VocabType::Bpe && pre_ignores_merges(v.pre_);
  v.normalize_nfc_ = v.type_ == VocabType::Bpe &&
                     (v.pre_ == "qwen2" || v.pre_ == "qwen2.5" || v.pre_ == "qwen-2.5" || v.pre_ == "deepseek-r1-qwen");

  // End-of-generation markers: the explicit ids plus the usual end-of-turn texts.
  static const std::array<std::string_view, 12> eog_texts = {
      "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>",
      "<EOT>", "_<EOT>", "<｜end▁of▁sentence｜>", "<end_of_utterance>", "<|return|>", "<|call|>"};
  if (v.eot_ < 0) {
    for (auto text : {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<EOT>", "_<EOT>",
                      "<｜end▁of▁sentence｜>"}) {
      const int32_t id = v.find(text);
      if (id >= 0 && (v.tokens_[static_cast<size_t>(id)].attr & (kAttrControl | kAttrUserDefined))) {
        v.eot_ = id;
        break;
      }
    }
  }
  for (int32_t id : {v.eos_, v.eot_, eom}) {
    if (id >= 0) v.eog_.push_back(id);
  }
  for (auto text : eog_texts) {
    const int32_t id = v.find(text);
    if (id >= 0 && (v.tokens_[static_cast<size_t>(id)].attr & (kAttrControl | kAttrUserDefined)) &&
        std::find(v.eog_.begin(), v.eog_.end(), id) == v.eog_.end()) {
      v.eog_.push_back(id);
    }
  }

  // Byte fallback tokens.
  for (int b = 0; b < 256; ++b) {
    if (v.type_ == VocabType::Spm) {
      static const char* hex = "0123456789ABCDEF";
      const char buf[7] = {'<', '0', 'x', hex[b >> 4], hex[b & 15], '>', 0};
      int32_t id = v.find(buf);
      if (id < 0) id = v.find(std::string(1, static_cast<char>(b)));
      v.byte_tokens_[static_cast<size_t>(b)] = id;
    } else {
      v.byte_tokens_[static_cast<size_t>(b)] = v.find(unicode::byte_to_unicode(static_cast<uint8_t>(b)));
    }
  }

  if (v.type_ == VocabType::Bpe) {
    if (!md.contains("tokenizer.ggml.merges")) throw_error("tokenizer.ggml.merges: missing for a gpt2 (BPE) vocabulary");
    const auto merges = md.get_array<std::string>("tokenizer.ggml.merges");
    v.merges_.reserve(merges.size());
    std::string joined;
    for (size_t rank = 0; rank < merges.size(); ++rank) {
      const std::string& m = merges[rank];
      const size_t pos = m.find(' ', 1);
      if (pos == std::string::npos) continue;
      const std::string_view left = std::string_view(m).substr(0, pos);
      const std::string_view right = std::string_view(m).substr(pos + 1);
      const int32_t l = v.find(left), r = v.find(right);
      if (l < 0 || r < 0) continue;
      joined.assign(left);
      joined.append(right);
      const int32_t result = v.find(joined);
      if (result < 0) continue;
      v.merges_.emplace(merge_key(l, r), Merge{static_cast<int32_t>(rank), result});
    }
  }

  if (v.type_ == VocabType::Spm) {
    v.spm_splits_at_spaces_ = true;
    static constexpr std::string_view kSpace = "\xe2\x96\x81";
    for (const TokenData& t : v.tokens_) {
      if (t.attr & (kAttrControl | kAttrUnknown | kAttrUnused | kAttrByte)) continue;
      for (size_t p = t.text.find(kSpace, 1); p != std::string::npos; p = t.text.find(kSpace, p + 1)) {
        if (p < 3 || std::string_view(t.text).substr(p - 3, 3) != kSpace) {
          v.spm_splits_at_spaces_ = false;
          break;
        }
      }
      if (!v.spm_splits_at_spaces_) break;
    }
  }

  for (size_t i = 0; i < n; ++i) {
    const TokenData& t = v.tokens_[i];
    if ((t.attr & (kAttrControl | kAttrUserDefined | kAttrUnknown)) && !t.text.empty()) {
      v.special_tokens_.push_back(static_cast<int32_t>(i));
    }
  }
  // Strip attributes are not stored in GGUF; llama.cpp sets them per model, and so do we.
  {
    std::string name = md.get_or<std::string>("general.name", "");
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto set_attr = [&](std::string_view text, uint32_t attr, bool on) {
      const int32_t id = v.find(text);
      if (id < 0) return;
      auto& a = v.tokens_[static_cast<size_t>(id)].attr;
      a = on ? (a | attr) : (a & ~attr);
    };
    if (v.pre_ == "jina-v2-de" || v.pre_ == "jina-v2-es" || v.pre_ == "jina-v2-code") {
      set_attr("<mask>", kAttrLStrip, true);
    } else if (name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos) {
      for (int32_t id : v.special_tokens_) v.tokens_[static_cast<size_t>(id)].attr |= kAttrRStrip;
      set_attr("</s>", kAttrRStrip, true);
      for (auto t : {"<unk>", "<s>", "<|endoftext|>"}) set_attr(t, kAttrRStrip, false);
    }
  }
  std::stable_sort(v.special_tokens_.begin(), v.special_tokens_.end(), [&](int32_t a, int32_t b) {
    return v.tokens_[static_cast<size_t>(a)].text.size() > v.tokens_[static_cast<size_t>(b)].text.size();
  });
  return v;
}

}  // namespace vellum::tokenizer
