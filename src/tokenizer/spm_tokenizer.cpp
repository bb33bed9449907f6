#include "tokenizer/spm_tokenizer.h"

#include <algorithm>

#include "tokenizer/unicode.h"
#include "tokenizer/word_cache.h"

namespace vellum::tokenizer {

namespace {

struct Symbol {
  size_t start;
  size_t n;  // 0 once merged into its left neighbour
  int prev;
  int next;
};

struct Bigram {
  float score;
  int left;
  int right;
  size_t size;
};

struct BigramOrder {
  // Highest score first; among equal scores the leftmost pair, as SentencePiece does.
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

}  // namespace

SpmTokenizer::SpmTokenizer(const Vocab& vocab) : vocab_(vocab), cache_owner_(WordCache::new_owner()) {}

void SpmTokenizer::encode(std::string_view text, std::vector<int32_t>& out) const {
  if (text.empty()) return;
  static constexpr std::string_view kSpace = "\xe2\x96\x81";
  std::vector<Symbol> symbols;
  symbols.reserve(text.size());
  for (size_t offs = 0; offs < text.size();) {
    const size_t len = std::min(unicode::sequence_length(static_cast<uint8_t>(text[offs])), text.size() - offs);
    symbols.push_back({offs, len, -1, -1});
    offs += len;
  }
  auto is_space = [&](size_t i) { return text.substr(symbols[i].start, symbols[i].n) == kSpace; };

  std::vector<Bigram> heap;
  const BigramOrder order;
  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[static_cast<size_t>(left)];
    const Symbol& r = symbols[static_cast<size_t>(right)];
    const std::string_view joined = text.substr(l.start, l.n + r.n);
    const int32_t id = vocab_.find(joined);
    if (id < 0) return;
    // Only ordinary pieces are formed from text; control, unknown and byte tokens never are.
    if (vocab_.token(id).attr & (kAttrControl | kAttrUnknown | kAttrUnused | kAttrByte)) return;
    heap.push_back({vocab_.token(id).score, left, right, joined.size()});
    std::push_heap(heap.begin(), heap.end(), order);
  };

  // Segments merge independently when no token spans their boundary: with whitespace-split
  // vocabularies (no piece has a space after a non-space) the text is cut before each run of spaces,
  // which gives the same result as one pass over everything and keeps the queue small.
  const bool split = vocab_.spm_splits_at_spaces();
  size_t seg_start = 0;
  while (seg_start < symbols.size()) {
    size_t seg_end = seg_start + 1;
    if (split) {
      while (seg_end < symbols.size() && !(is_space(seg_end) && !is_space(seg_end - 1))) ++seg_end;
    } else {
      seg_end = symbols.size();
    }
    // Segments are independent only when split; the cache is keyed by the segment text alone.
    const size_t seg_bytes_start = symbols[seg_start].start;
    const size_t seg_bytes_end = symbols[seg_end - 1].start + symbols[seg_end - 1].n;
    const std::string_view seg_text = text.substr(seg_bytes_start, seg_bytes_end - seg_bytes_start);
    if (split && WordCache::lookup(cache_owner_, seg_text, out)) {
      seg_start = seg_end;
      continue;
    }
    const size_t out_before = out.size();
    for (size_t i = seg_start; i < seg_end; ++i) {
      symbols[i].prev = i == seg_start ? -1 : static_cast<int>(i) - 1;
      symbols[i].next = i + 1 == seg_end ? -1 : static_cast<int>(i) + 1;
    }
    heap.clear();
    for (size_t i = seg_start + 1; i < seg_end; ++i) try_add(static_cast<int>(i) - 1, static_cast<int>(i));

    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), order);
      const Bigram b = heap.back();
      heap.pop_back();
      Symbol& l = symbols[static_cast<size_t>(b.left)];
      Symbol& r = symbols[static_cast<size_t>(b.right)];
      // Stale: one side was merged away or grew since this pair was queued.
      if (l.n == 0 || r.n == 0 || l.n + r.n != b.size || l.next != b.right) continue;
      l.n += r.n;
      r.n = 0;
      l.next = r.next;
      if (r.next >= 0) symbols[static_cast<size_t>(r.next)].prev = b.left;
      try_add(l.prev, b.left);
      try_add(b.left, l.next);
    }

    for (int i = static_cast<int>(seg_start); i != -1; i = symbols[static_cast<size_t>(i)].next) {
      const Symbol& s = symbols[static_cast<size_t>(i)];
      const std::string_view piece = text.substr(s.start, s.n);
      const int32_t id = vocab_.find(piece);
      if (id >= 0) {
        out.push_back(id);
        continue;
      }
      for (char c : piece) {
        const int32_t byte_id = vocab_.byte_token(static_cast<uint8_t>(c));
        if (byte_id >= 0) {
          out.push_back(byte_id);
        } else if (vocab_.unk() >= 0) {
          out.push_back(vocab_.unk());
        }
      }
    }
    if (split) WordCache::insert(cache_owner_, seg_text, out.data() + out_before, out.size() - out_before);
    seg_start = seg_end;
  }
}

}  // namespace vellum::tokenizer
