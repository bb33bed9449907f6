#include "tokenizer/spm_tokenizer.h"

#include <algorithm>
#include <queue>

#include "tokenizer/unicode.h"

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

void SpmTokenizer::encode(std::string_view text, std::vector<int32_t>& out) const {
  if (text.empty()) return;
  std::vector<Symbol> symbols;
  symbols.reserve(text.size());
  for (size_t offs = 0; offs < text.size();) {
    const size_t len = std::min(unicode::sequence_length(static_cast<uint8_t>(text[offs])), text.size() - offs);
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({offs, len, index - 1, offs + len == text.size() ? -1 : index + 1});
    offs += len;
  }

  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[static_cast<size_t>(left)];
    const Symbol& r = symbols[static_cast<size_t>(right)];
    const std::string_view joined = text.substr(l.start, l.n + r.n);
    const int32_t id = vocab_.find(joined);
    if (id < 0) return;
    // Only ordinary pieces are formed from text; control, unknown and byte tokens never are.
    if (vocab_.token(id).attr & (kAttrControl | kAttrUnknown | kAttrUnused | kAttrByte)) return;
    queue.push({vocab_.token(id).score, left, right, joined.size()});
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
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

  for (int i = 0; i != -1; i = symbols[static_cast<size_t>(i)].next) {
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
}

}  // namespace vellum::tokenizer
