#include "tokenizer/wpm_tokenizer.h"

#include <algorithm>

#include "tokenizer/unicode.h"
#include "tokenizer/word_cache.h"

namespace vellum::tokenizer {

namespace {

constexpr size_t kMaxCharsPerWord = 100;  // WordPiece's max_input_chars_per_word: longer words are [UNK]

// Canonical decomposition for the accent stripper: Hangul syllables algorithmically, everything else
// to the first code point of its decomposition (the rest of a decomposition is combining marks).
void decompose(uint32_t cp, std::vector<uint32_t>& out) {
  constexpr uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
  constexpr uint32_t kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = 11172;
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const uint32_t s = cp - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount != 0) out.push_back(kTBase + s % kTCount);
    return;
  }
  out.push_back(unicode::nfd_first(cp));
}

}  // namespace

std::vector<std::string> WpmTokenizer::split_words(std::string_view text) {
  std::vector<std::string> words(1);
  std::vector<uint32_t> cps;
  size_t pos = 0;
  while (pos < text.size()) {
    uint32_t cp;
    if (!unicode::decode(text, pos, cp)) continue;  // invalid bytes: dropped like U+FFFD
    cps.clear();
    decompose(cp, cps);
    for (uint32_t c : cps) {
      if (unicode::is_whitespace(c)) {
        if (!words.back().empty()) words.emplace_back();
        continue;
      }
      if (c == 0 || c == unicode::kReplacement || unicode::is_other(c) || unicode::is_nonspacing_mark(c)) continue;
      const std::string s = unicode::to_utf8(unicode::to_lower(c));
      if (unicode::is_punctuation(c) || (c < 0x7F && unicode::is_symbol(c)) || unicode::is_cjk(c)) {
        if (!words.back().empty()) words.emplace_back();
        words.back() = s;
        words.emplace_back();
      } else {
        words.back() += s;
      }
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

WpmTokenizer::WpmTokenizer(const Vocab& vocab) : vocab_(vocab), cache_owner_(WordCache::new_owner()) {}

void WpmTokenizer::encode(std::string_view text, std::vector<int32_t>& out) const {
  for (const std::string& word : split_words(text)) {
    if (WordCache::lookup(cache_owner_, word, out)) continue;
    const size_t before = out.size();
    encode_word(word, out);
    WordCache::insert(cache_owner_, word, out.data() + before, out.size() - before);
  }
}

void WpmTokenizer::encode_word(const std::string& word, std::vector<int32_t>& out) const {
  static const std::string kPhantom = "\xe2\x96\x81";
  const size_t max_len = vocab_.max_token_length();
  size_t chars = 0;
  for (char c : word) chars += (static_cast<uint8_t>(c) & 0xC0) != 0x80;
  const size_t before = out.size();
  if (chars <= kMaxCharsPerWord) {
    const std::string w = kPhantom + word;
    const size_t n = w.size();
    for (size_t i = 0; i < n;) {
      bool found = false;
      for (size_t j = std::min(n, i + max_len + 1); j > i; --j) {
        const int32_t id = vocab_.find(std::string_view(w).substr(i, j - i));
        if (id >= 0) {
          out.push_back(id);
          i = j;
          found = true;
          break;
        }
      }
      if (!found) {
        out.resize(before);
        break;
      }
    }
  }
  if (out.size() == before && vocab_.unk() >= 0) out.push_back(vocab_.unk());
}

}  // namespace vellum::tokenizer
