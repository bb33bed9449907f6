#include "tokenizer/unicode.h"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "tokenizer/unicode_data.h"

namespace vellum::tokenizer::unicode {

bool decode(std::string_view s, size_t& pos, uint32_t& cp) {
  const size_t n = s.size();
  const auto b0 = static_cast<uint8_t>(s[pos]);
  if (b0 < 0x80) {
    cp = b0;
    ++pos;
    return true;
  }
  size_t len;
  uint32_t c;
  uint32_t min;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, c = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, c = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, c = b0 & 0x07, min = 0x10000;
  } else {
    ++pos;
    return false;
  }
  if (pos + len > n) {
    ++pos;
    return false;
  }
  for (size_t i = 1; i < len; ++i) {
    const auto b = static_cast<uint8_t>(s[pos + i]);
    if ((b & 0xC0) != 0x80) {
      ++pos;
      return false;
    }
    c = (c << 6) | (b & 0x3F);
  }
  if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
    ++pos;
    return false;
  }
  cp = c;
  pos += len;
  return true;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp > 0x10FFFF) cp = kReplacement;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string to_utf8(uint32_t cp) {
  std::string s;
  append_utf8(s, cp);
  return s;
}

bool is_valid_utf8(std::string_view text) {
  size_t pos = 0;
  uint32_t cp;
  while (pos < text.size()) {
    if (!decode(text, pos, cp)) return false;
  }
  return true;
}

size_t incomplete_suffix(std::string_view text) {
  // Look back at most 3 bytes for a lead byte whose sequence runs past the end.
  const size_t n = text.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto b = static_cast<uint8_t>(text[n - back]);
    if ((b & 0xC0) == 0x80) continue;  // continuation byte: keep looking for its lead
    size_t need = 0;
    if ((b & 0xE0) == 0xC0) need = 2;
    else if ((b & 0xF0) == 0xE0) need = 3;
    else if ((b & 0xF8) == 0xF0) need = 4;
    if (need > back) {
      // Only hold back what could still become valid: the lead and, when present, the second byte.
      const uint8_t lead = b;
      uint8_t second_min = 0x80, second_max = 0xBF;
      if (lead == 0xE0) second_min = 0xA0;
      if (lead == 0xED) second_max = 0x9F;
      if (lead == 0xF0) second_min = 0x90;
      if (lead == 0xF4) second_max = 0x8F;
      if (lead < 0xC2 || lead > 0xF4) return 0;
      if (back >= 2) {
        const auto s2 = static_cast<uint8_t>(text[n - back + 1]);
        if (s2 < second_min || s2 > second_max) return 0;
      }
      return back;
    }
    return 0;
  }
  return 0;
}

std::string sanitize_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = pos;
    uint32_t cp;
    if (decode(text, pos, cp)) {
      out.append(text.substr(start, pos - start));
    } else {
      append_utf8(out, kReplacement);
    }
  }
  return out;
}

namespace {

struct ByteMap {
  std::array<std::string, 256> to_unicode;
  std::array<uint32_t, 256> cps{};
  ByteMap() {
    // GPT-2's bytes_to_unicode(): printable Latin-1 bytes map to themselves, the rest to 256+n.
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const uint32_t cp = printable ? static_cast<uint32_t>(b) : static_cast<uint32_t>(256 + n++);
      cps[b] = cp;
      to_unicode[b] = to_utf8(cp);
    }
  }
};

const ByteMap& byte_map() {
  static const ByteMap map;
  return map;
}

unicode_data::Category category(uint32_t cp) {
  using unicode_data::kCategoryRangeCount;
  using unicode_data::kCategoryRanges;
  if (cp > 0x10FFFF) return unicode_data::Category::Cn;
  const auto* end = kCategoryRanges + kCategoryRangeCount;
  const auto* it = std::upper_bound(kCategoryRanges, end, cp,
                                    [](uint32_t c, const unicode_data::CategoryRange& r) { return c < r.first; });
  return (it - 1)->category;
}

uint32_t lookup_pair(const unicode_data::CodepointPair* table, size_t count, uint32_t cp) {
  const auto* end = table + count;
  const auto* it = std::lower_bound(table, end, cp,
                                    [](const unicode_data::CodepointPair& p, uint32_t c) { return p.from < c; });
  return (it != end && it->from == cp) ? it->to : cp;
}

}  // namespace

const std::string& byte_to_unicode(uint8_t byte) { return byte_map().to_unicode[byte]; }

int unicode_to_byte(uint32_t cp) {
  if (cp >= 0x21 && cp <= 0xFF && cp != 0x7F && !(cp >= 0x80 && cp <= 0xA0) && cp != 0xAD) {
    return static_cast<int>(cp);
  }
  if (cp >= 256 && cp < 256 + 68) {
    const auto& cps = byte_map().cps;
    for (int b = 0; b < 256; ++b) {
      if (cps[b] == cp) return b;
    }
  }
  return -1;
}

bool is_whitespace(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

using C = unicode_data::Category;

bool is_letter(uint32_t cp) {
  const C c = category(cp);
  return c == C::Ll || c == C::Lm || c == C::Lo || c == C::Lt || c == C::Lu;
}
bool is_number(uint32_t cp) {
  const C c = category(cp);
  return c == C::Nd || c == C::Nl || c == C::No;
}
bool is_mark(uint32_t cp) {
  const C c = category(cp);
  return c == C::Mc || c == C::Me || c == C::Mn;
}
bool is_nonspacing_mark(uint32_t cp) { return category(cp) == C::Mn; }
bool is_punctuation(uint32_t cp) {
  const C c = category(cp);
  return c >= C::Pc && c <= C::Ps;
}
bool is_symbol(uint32_t cp) {
  const C c = category(cp);
  return c >= C::Sc && c <= C::So;
}
bool is_other(uint32_t cp) {
  const C c = category(cp);
  return c <= C::Cs;
}
bool is_cjk(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}
uint32_t nfd_first(uint32_t cp) {
  return lookup_pair(unicode_data::kNfdFirst, unicode_data::kNfdFirstCount, cp);
}
uint32_t to_lower(uint32_t cp) {
  return lookup_pair(unicode_data::kLowercase, unicode_data::kLowercaseCount, cp);
}

uint8_t combining_class(uint32_t cp) {
  using unicode_data::kCombiningClass;
  const auto* end = kCombiningClass + unicode_data::kCombiningClassCount;
  const auto* it = std::upper_bound(kCombiningClass, end, cp,
                                    [](uint32_t c, const unicode_data::CccRange& r) { return c < r.first; });
  if (it == kCombiningClass) return 0;
  --it;
  return cp <= it->last ? it->ccc : 0;
}

namespace {

constexpr uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr uint32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = 11172;

bool nfc_inert(uint32_t cp) {
  if (cp < 0x300) return true;
  using unicode_data::kNfcNonInert;
  const auto* end = kNfcNonInert + unicode_data::kNfcNonInertCount;
  const auto* it = std::upper_bound(kNfcNonInert, end, cp,
                                    [](uint32_t c, const unicode_data::CodepointRange& r) { return c < r.first; });
  if (it == kNfcNonInert) return true;
  --it;
  return cp > it->last;
}

void decompose_canonical(uint32_t cp, std::vector<uint32_t>& out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const uint32_t s = cp - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount != 0) out.push_back(kTBase + s % kTCount);
    return;
  }
  using unicode_data::kCanonicalDecomposition;
  const auto* end = kCanonicalDecomposition + unicode_data::kCanonicalDecompositionCount;
  const auto* it = std::lower_bound(kCanonicalDecomposition, end, cp,
                                    [](const unicode_data::Decomposition& d, uint32_t c) { return d.cp < c; });
  if (it == end || it->cp != cp) {
    out.push_back(cp);
    return;
  }
  decompose_canonical(it->first, out);
  if (it->second != 0) decompose_canonical(it->second, out);
}

uint32_t compose_pair(uint32_t a, uint32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount) {
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  }
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount) {
    return a + (b - kTBase);
  }
  using unicode_data::kComposition;
  const auto* end = kComposition + unicode_data::kCompositionCount;
  const auto* it = std::lower_bound(kComposition, end, std::make_pair(a, b),
                                    [](const unicode_data::Composition& c, const std::pair<uint32_t, uint32_t>& k) {
                                      return c.first < k.first || (c.first == k.first && c.second < k.second);
                                    });
  return (it != end && it->first == a && it->second == b) ? it->composite : 0;
}

// Full NFC of a run of code points.
void nfc_run(const std::vector<uint32_t>& in, std::string& out) {
  std::vector<uint32_t> d;
  for (uint32_t cp : in) decompose_canonical(cp, d);
  // Canonical ordering: stable sort of each run of non-starters by combining class.
  for (size_t i = 0; i < d.size();) {
    if (combining_class(d[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < d.size() && combining_class(d[j]) != 0) ++j;
    std::stable_sort(d.begin() + static_cast<std::ptrdiff_t>(i), d.begin() + static_cast<std::ptrdiff_t>(j),
                     [](uint32_t a, uint32_t b) { return combining_class(a) < combining_class(b); });
    i = j;
  }
  // Canonical composition.
  std::vector<uint32_t> r;
  r.reserve(d.size());
  ptrdiff_t starter = -1;
  uint8_t last_cc = 0;
  for (uint32_t c : d) {
    const uint8_t cc = combining_class(c);
    if (starter >= 0) {
      const bool adjacent = static_cast<ptrdiff_t>(r.size()) - 1 == starter;
      const bool blocked = !adjacent && (last_cc == 0 || last_cc >= cc);
      if (!blocked) {
        if (const uint32_t comp = compose_pair(r[static_cast<size_t>(starter)], c); comp != 0) {
          r[static_cast<size_t>(starter)] = comp;
          continue;
        }
      }
    }
    if (cc == 0) starter = static_cast<ptrdiff_t>(r.size());
    last_cc = cc;
    r.push_back(c);
  }
  for (uint32_t c : r) append_utf8(out, c);
}

}  // namespace

std::string nfc(std::string_view text) {
  // Fast path: nothing at or above U+0300 (all of ASCII and Latin-1 text).
  size_t first = 0;
  while (first < text.size() && static_cast<uint8_t>(text[first]) < 0xCC) ++first;  // 0xCC 0x80 = U+0300
  if (first == text.size()) return std::string(text);

  std::string out;
  out.reserve(text.size());
  std::vector<uint32_t> run;  // the last inert starter before a non-inert run, then the run
  size_t pos = 0;
  size_t last_char_start = std::string::npos;  // start of the most recent valid inert code point
  auto flush_run = [&]() {
    if (run.empty()) return;
    nfc_run(run, out);
    run.clear();
  };
  while (pos < text.size()) {
    const size_t start = pos;
    uint32_t cp;
    if (!decode(text, pos, cp)) {
      flush_run();
      out += text[start];
      last_char_start = std::string::npos;
      continue;
    }
    if (nfc_inert(cp)) {
      flush_run();
      out.append(text.substr(start, pos - start));
      last_char_start = start;
      continue;
    }
    if (run.empty()) {
      // Take the preceding inert character back: the run may compose with it.
      if (last_char_start != std::string::npos) {
        size_t p = last_char_start;
        uint32_t prev;
        decode(text, p, prev);
        out.resize(out.size() - (p - last_char_start));
        run.push_back(prev);
      }
    }
    run.push_back(cp);
    last_char_start = std::string::npos;
  }
  flush_run();
  return out;
}

}  // namespace vellum::tokenizer::unicode
