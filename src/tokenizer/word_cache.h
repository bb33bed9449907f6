#pragma once
// A per-thread cache of encoded words (BPE pre-tokenized words, SentencePiece space-separated
// segments): natural text repeats its words, and a word's tokens depend only on the word and the
// vocabulary. Each encoder has a unique owner id; a thread's cache belongs to one owner at a time
// and is dropped when another owner uses it or when it grows past a bound, so memory stays bounded
// and no lock is needed.

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace vellum::tokenizer {

class WordCache {
 public:
  static constexpr size_t kMaxWordBytes = 64;
  static constexpr size_t kMaxEntries = 1 << 16;

  // Process-wide switch, for measuring the encoders without the cache (benchmarks, tests).
  static void set_enabled(bool on) { enabled_flag().store(on, std::memory_order_relaxed); }
  static bool enabled() { return enabled_flag().load(std::memory_order_relaxed); }

  static uint64_t new_owner() {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1);
  }

  // Appends the cached ids of `word` to `out` and returns true, or returns false.
  static bool lookup(uint64_t owner, std::string_view word, std::vector<int32_t>& out) {
    if (word.size() > kMaxWordBytes || !enabled()) return false;
    Storage& s = storage();
    if (s.owner != owner) return false;
    const auto it = s.map.find(word);
    if (it == s.map.end()) return false;
    out.insert(out.end(), it->second.begin(), it->second.end());
    return true;
  }

  static void insert(uint64_t owner, std::string_view word, const int32_t* ids, size_t n) {
    if (word.size() > kMaxWordBytes || !enabled()) return;
    Storage& s = storage();
    if (s.owner != owner || s.map.size() >= kMaxEntries) {
      s.map.clear();
      s.owner = owner;
    }
    s.map.emplace(std::string(word), std::vector<int32_t>(ids, ids + n));
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct Storage {
    uint64_t owner = 0;
    std::unordered_map<std::string, std::vector<int32_t>, Hash, std::equal_to<>> map;
  };
  static std::atomic<bool>& enabled_flag() {
    static std::atomic<bool> on{true};
    return on;
  }
  static Storage& storage() {
    thread_local Storage s;
    return s;
  }
};

}  // namespace vellum::tokenizer
