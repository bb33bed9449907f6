#include "tokenizer/bpe_tokenizer.h"

#include <algorithm>
#include <string>

#include "tokenizer/unicode.h"
#include "tokenizer/word_cache.h"

namespace vellum::tokenizer {

namespace {

struct Symbol {
  int32_t id;  // -1: a byte with no token of its own (it never merges)
  bool alive;
  int prev;
  int next;
};

struct Pair {
  int32_t rank;
  int left;
  int right;
  int32_t left_id;
  int32_t right_id;
  int32_t result;
};

struct PairOrder {
  bool operator()(const Pair& a, const Pair& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

}  // namespace

BpeTokenizer::BpeTokenizer(const Vocab& vocab)
    : vocab_(vocab), pre_(PreTokenizer::patterns_for(vocab.pre())), cache_owner_(WordCache::new_owner()) {}

void BpeTokenizer::encode(std::string_view text, std::vector<int32_t>& out) const {
  std::vector<std::string_view> words;
  pre_.split(text, words);
  for (std::string_view w : words) encode_word(w, out);
}

void BpeTokenizer::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (word.size() == 1) {
    const int32_t id = vocab_.byte_token(static_cast<uint8_t>(word[0]));
    if (id >= 0) out.push_back(id);
    return;
  }
  if (WordCache::lookup(cache_owner_, word, out)) return;
  const size_t before = out.size();
  merge_word(word, out);
  WordCache::insert(cache_owner_, word, out.data() + before, out.size() - before);
}

void BpeTokenizer::merge_word(std::string_view word, std::vector<int32_t>& out) const {
  if (vocab_.ignore_merges()) {
    std::string encoded;
    encoded.reserve(word.size() * 2);
    for (char c : word) encoded += unicode::byte_to_unicode(static_cast<uint8_t>(c));
    const int32_t id = vocab_.find(encoded);
    if (id >= 0) {
      out.push_back(id);
      return;
    }
  }

  // Scratch reused across words (and calls) on this thread: most words are short, allocation dominates.
  thread_local std::vector<Symbol> symbols;
  thread_local std::vector<Pair> heap;
  symbols.resize(word.size());
  heap.clear();
  const PairOrder order;
  for (size_t i = 0; i < word.size(); ++i) {
    const auto b = static_cast<uint8_t>(word[i]);
    symbols[i] = {vocab_.byte_token(b), true, static_cast<int>(i) - 1,
                  i + 1 == word.size() ? -1 : static_cast<int>(i) + 1};
  }

  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const int32_t l = symbols[static_cast<size_t>(left)].id, r = symbols[static_cast<size_t>(right)].id;
    if (l < 0 || r < 0) return;
    const Vocab::Merge* m = vocab_.find_merge(l, r);
    if (m == nullptr) return;
    heap.push_back({m->rank, left, right, l, r, m->result});
    std::push_heap(heap.begin(), heap.end(), order);
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_add(i - 1, i);

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), order);
    const Pair p = heap.back();
    heap.pop_back();
    Symbol& l = symbols[static_cast<size_t>(p.left)];
    Symbol& r = symbols[static_cast<size_t>(p.right)];
    // Stale: either side changed (a merge always changes a symbol's token) or they are no longer adjacent.
    if (!l.alive || !r.alive || l.next != p.right || l.id != p.left_id || r.id != p.right_id) continue;
    l.id = p.result;
    r.alive = false;
    l.next = r.next;
    if (r.next >= 0) symbols[static_cast<size_t>(r.next)].prev = p.left;
    try_add(l.prev, p.left);
    try_add(p.left, l.next);
  }

  for (int i = 0; i != -1; i = symbols[static_cast<size_t>(i)].next) {
    const Symbol& s = symbols[static_cast<size_t>(i)];
    if (s.id >= 0) {
      out.push_back(s.id);
    } else if (vocab_.unk() >= 0) {
      out.push_back(vocab_.unk());  // a byte the vocabulary cannot express
    }
  }
}

}  // namespace vellum::tokenizer
