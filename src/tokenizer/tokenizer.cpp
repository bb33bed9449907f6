#include "tokenizer/tokenizer.h"

#include <array>
#include <cstring>
#include <optional>

#include "core/error.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/spm_tokenizer.h"
#include "tokenizer/unicode.h"
#include "tokenizer/wpm_tokenizer.h"

namespace vellum::tokenizer {

namespace {

// Special tokens indexed by first byte, longest first: the scan takes the longest token at the
// leftmost position where one occurs (how Hugging Face's added-token matcher splits text).
struct SpecialIndex {
  std::array<std::vector<int32_t>, 256> by_first_byte;
  std::array<bool, 256> present{};
  bool empty = true;

  void build(const Vocab& v, uint32_t attrs) {
    for (int32_t id : v.special_tokens()) {  // already longest first
      if (!(v.token(id).attr & attrs)) continue;
      const auto b = static_cast<uint8_t>(v.token(id).text[0]);
      by_first_byte[b].push_back(id);
      present[b] = true;
      empty = false;
    }
  }
};

// Hugging Face's clean_up_tokenization for WordPiece output: "hello , world !" -> "hello, world!".
std::string clean_up_spaces(std::string s) {
  static const std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"},
      {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) {
    std::string out;
    out.reserve(s.size());
    size_t pos = 0;
    while (true) {
      const size_t hit = s.find(from, pos);
      if (hit == std::string::npos) break;
      out.append(s, pos, hit - pos);
      out.append(to);
      pos = hit + from.size();
    }
    out.append(s, pos, std::string::npos);
    s = std::move(out);
  }
  return s;
}

bool is_ascii_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

struct Fragment {
  int32_t token;          // >= 0: a special token
  std::string_view text;  // otherwise raw text
};

// A token's bytes as decoding renders it (control tokens as their text).
std::string render_piece(const Vocab& v, int32_t id) {
  const TokenData& t = v.token(id);
  if (t.attr & kAttrControl) return t.text;
  if (t.attr & (kAttrUnknown | kAttrUserDefined)) return t.text;
  if (t.attr & kAttrUnused) return std::string();
  if (t.attr & kAttrByte) {
    const int b = v.byte_value(id);
    if (b >= 0) return std::string(1, static_cast<char>(b));
  }
  switch (v.type()) {
    case VocabType::Spm:
    case VocabType::Wpm: {
      std::string out;
      out.reserve(t.text.size());
      const std::string& s = t.text;
      for (size_t i = 0; i < s.size(); ++i) {
        if (i + 2 < s.size() && s[i] == '\xe2' && s[i + 1] == '\x96' && s[i + 2] == '\x81') {
          out += ' ';
          i += 2;
        } else {
          out += s[i];
        }
      }
      return out;
    }
    case VocabType::Bpe: {
      std::string out;
      out.reserve(t.text.size());
      size_t pos = 0;
      while (pos < t.text.size()) {
        const size_t start = pos;
        uint32_t cp;
        if (unicode::decode(t.text, pos, cp)) {
          const int b = unicode::unicode_to_byte(cp);
          if (b >= 0) {
            out += static_cast<char>(b);
          } else {
            out.append(t.text, start, pos - start);  // not a byte-level character: keep it as written
          }
        } else {
          out += t.text[start];
        }
      }
      return out;
    }
  }
  return t.text;
}

}  // namespace

struct Tokenizer::State {
  Vocab vocab;
  std::optional<SpmTokenizer> spm;
  std::optional<BpeTokenizer> bpe;
  std::optional<WpmTokenizer> wpm;
  SpecialIndex user_defined;  // always split out
  SpecialIndex all_special;   // with parse_special
  std::vector<std::string> pieces;  // render_piece() of every token, computed once

  explicit State(Vocab v) : vocab(std::move(v)) {
    pieces.reserve(vocab.size());
    for (size_t i = 0; i < vocab.size(); ++i) pieces.push_back(render_piece(vocab, static_cast<int32_t>(i)));
    switch (vocab.type()) {
      case VocabType::Spm: spm.emplace(vocab); break;
      case VocabType::Bpe: bpe.emplace(vocab); break;
      case VocabType::Wpm: wpm.emplace(vocab); break;
    }
    user_defined.build(vocab, kAttrUserDefined);
    all_special.build(vocab, kAttrUserDefined | kAttrControl | kAttrUnknown);
  }

  void partition(std::string_view text, bool parse_special, std::vector<Fragment>& out) const {
    const SpecialIndex& idx = parse_special ? all_special : user_defined;
    if (idx.empty) {
      if (!text.empty()) out.push_back({-1, text});
      return;
    }
    size_t raw_start = 0;
    for (size_t pos = 0; pos < text.size();) {
      const auto b = static_cast<uint8_t>(text[pos]);
      int32_t hit = -1;
      if (idx.present[b]) {
        for (int32_t id : idx.by_first_byte[b]) {
          const std::string& t = vocab.token(id).text;
          if (t.size() <= text.size() - pos && std::memcmp(text.data() + pos, t.data(), t.size()) == 0) {
            hit = id;
            break;
          }
        }
      }
      if (hit < 0) {
        ++pos;
        continue;
      }
      const uint32_t attr = vocab.token(hit).attr;
      size_t raw_end = pos;
      if (attr & kAttrLStrip) {
        while (raw_end > raw_start && is_ascii_space(text[raw_end - 1])) --raw_end;
      }
      if (raw_end > raw_start) out.push_back({-1, text.substr(raw_start, raw_end - raw_start)});
      out.push_back({hit, {}});
      pos += vocab.token(hit).text.size();
      if (attr & kAttrRStrip) {
        while (pos < text.size() && is_ascii_space(text[pos])) ++pos;
      }
      raw_start = pos;
    }
    if (raw_start < text.size()) out.push_back({-1, text.substr(raw_start)});
  }
};

Tokenizer Tokenizer::from_metadata(const gguf::Metadata& md) { return from_vocab(Vocab::from_metadata(md)); }

Tokenizer Tokenizer::from_vocab(Vocab vocab) { return Tokenizer(std::make_shared<const State>(std::move(vocab))); }

const Vocab& Tokenizer::vocab() const { return state_->vocab; }

bool Tokenizer::strips_leading_space() const {
  return (vocab().type() == VocabType::Spm && vocab().add_space_prefix()) || vocab().type() == VocabType::Wpm;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
  const State& s = *state_;
  const Vocab& v = s.vocab;
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 4);
  if (add_bos && v.add_bos() && v.bos() >= 0) out.push_back(v.bos());

  std::vector<Fragment> fragments;
  s.partition(text, parse_special, fragments);

  switch (v.type()) {
    case VocabType::Spm: {
      static const std::string kSpace = "\xe2\x96\x81";
      bool prev_special = true;  // the dummy prefix goes before the first stretch of text
      std::string escaped;
      for (const Fragment& f : fragments) {
        if (f.token >= 0) {
          out.push_back(f.token);
          prev_special = true;
          continue;
        }
        escaped.clear();
        escaped.reserve(f.text.size() + 8);
        if (v.add_space_prefix() && prev_special) escaped += kSpace;
        for (char c : f.text) {
          if (c == ' ') {
            escaped += kSpace;
          } else {
            escaped += c;
          }
        }
        s.spm->encode(escaped, out);
        prev_special = false;
      }
      break;
    }
    case VocabType::Bpe:
      for (const Fragment& f : fragments) {
        if (f.token >= 0) {
          out.push_back(f.token);
        } else if (v.normalize_nfc()) {
          s.bpe->encode(unicode::nfc(f.text), out);
        } else {
          s.bpe->encode(f.text, out);
        }
      }
      break;
    case VocabType::Wpm:
      for (const Fragment& f : fragments) {
        if (f.token >= 0) {
          out.push_back(f.token);
        } else {
          s.wpm->encode(f.text, out);
        }
      }
      break;
  }

  if (add_bos && v.add_eos() && v.eos() >= 0) out.push_back(v.eos());
  return out;
}

std::string Tokenizer::token_to_piece(int32_t id, bool special) const {
  const Vocab& v = vocab();
  if (!v.valid(id)) throw_error("token id {} is out of range (vocabulary of {} tokens)", id, v.size());
  if (!special && v.is_control(id)) return std::string();
  return state_->pieces[static_cast<size_t>(id)];
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool special) const {
  const Vocab& v = vocab();
  std::string out;
  out.reserve(ids.size() * 4);
  bool first = strips_leading_space();
  for (int32_t id : ids) {
    if (!v.valid(id)) throw_error("token id {} is out of range (vocabulary of {} tokens)", id, v.size());
    const bool control = v.is_control(id);
    if (control && !special) continue;
    std::string_view piece = state_->pieces[static_cast<size_t>(id)];
    if (first && !control) {
      if (!piece.empty() && piece[0] == ' ') piece.remove_prefix(1);
      first = false;
    }
    out += piece;
  }
  if (vocab().type() == VocabType::Wpm) out = clean_up_spaces(out);
  return out;
}

}  // namespace vellum::tokenizer
