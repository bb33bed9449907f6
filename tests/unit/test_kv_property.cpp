// Property test of KvManager: a seeded random driver plays engine (allocate, compute chunks, append,
// fork, free, lookups, deliberate misuse) over many sequences on small pools, so that eviction,
// copy-on-write, pending sharing and orphan hand-off all happen often. Besides check_invariants()
// after every step it simulates the KV itself: every slot holds a value derived from the whole token
// prefix at that position (as real KV depends on the prefix), the driver writes values only through
// slot_mapping and performs the block copies it is handed, and after every step every computed
// position of every sequence must read back its expected value through the block table. A wrong
// prefix hit, a missed copy or a block reused while referenced all show up as a wrong value.
//
// VELLUM_KV_PROPERTY_STEPS=N runs N steps per seed (default 10000, 10 seeds);
// VELLUM_KV_PROPERTY_SEED_BASE=B shifts the seeds (for long soak runs).

#include "kv/kv_manager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace vellum::kv;

namespace {

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct SimSeq {
  std::vector<TokenId> tokens;
  std::vector<uint64_t> expect;  // expected KV value of each position
  uint64_t extra = 0;
  std::vector<BlockCopy> copies;  // handed out, not yet performed
  SeqProgress seen;               // the last progress the driver saw
};

// How often the interesting paths ran, summed over seeds.
struct Coverage {
  uint64_t whole_prompt_copies = 0, fork_copies = 0, pending_waits = 0, orphan_handoffs = 0, evictions = 0,
           failed_allocations = 0, failed_appends = 0;
};

class Driver {
 public:
  Driver(uint64_t seed, uint32_t block_size, uint32_t num_blocks, bool caching) : rng_(seed) {
    KvConfig c;
    c.block_size = block_size;
    c.num_blocks = num_blocks;
    c.enable_prefix_caching = caching;
    c.hash_seed = seed;
    m_ = std::make_unique<KvManager>(c);
    bs_ = block_size;
    kv_.assign(static_cast<size_t>(num_blocks) * block_size, 0);
    for (int d = 0; d < 3; ++d) {
      std::vector<TokenId> doc(40);
      for (auto& t : doc) t = static_cast<TokenId>(rand(4));  // a tiny vocabulary: equal blocks in different chains
      docs_.push_back(doc);
    }
  }

  void step() {
    const uint32_t op = rand(100);
    if (op < 24) {
      op_allocate();
    } else if (op < 60) {
      if (!seqs_.empty()) op_compute(pick());
    } else if (op < 74) {
      if (!seqs_.empty()) op_append(pick());
    } else if (op < 79) {
      if (!seqs_.empty()) op_fork(pick());
    } else if (op < 95) {
      if (!seqs_.empty()) op_free(pick());
    } else if (op < 98) {
      op_lookup();
    } else {
      if (!seqs_.empty()) op_misuse(pick());
    }
    check();
  }

  // Compute everything that can be computed; every sequence must finish (no wait cycles).
  void drain() {
    for (int round = 0;; ++round) {
      ASSERT_LT(round, 10000) << "drain does not terminate";
      bool progress = false, unfinished = false;
      for (auto& [id, s] : seqs_) {
        const uint32_t before = m_->num_computed_tokens(id);
        while (op_compute(id, /*all*/ true)) {
        }
        progress |= m_->num_computed_tokens(id) != before;
        unfinished |= m_->num_computed_tokens(id) != s.tokens.size();
      }
      check();
      if (!unfinished) break;
      ASSERT_TRUE(progress) << "sequences wait on each other forever";
    }
  }

  void free_all() {
    while (!seqs_.empty()) op_free(seqs_.begin()->first);
    check();
    const KvStats st = m_->stats();
    EXPECT_EQ(st.blocks_used, 0u);
    EXPECT_EQ(st.blocks_free, st.blocks_total);
    EXPECT_EQ(st.blocks_cached_free, st.blocks_cached);
    EXPECT_EQ(m_->pool().free_list().size(), st.blocks_total);
  }

  const KvManager& manager() const { return *m_; }
  Coverage coverage() const {
    Coverage c = cov_;
    c.evictions = m_->stats().evictions;
    return c;
  }
  // The last operations, for failure messages.
  std::string trace() const {
    std::string out;
    for (const auto& l : log_) out += l + "\n";
    return out;
  }

 private:
  uint32_t rand(uint32_t n) { return static_cast<uint32_t>(rng_() % n); }
  SeqId pick() {
    auto it = seqs_.begin();
    std::advance(it, rand(static_cast<uint32_t>(seqs_.size())));
    return it->first;
  }

  std::string table_str(SeqId id) const {
    std::string out;
    for (BlockId b : m_->block_table(id).blocks) {
      const auto& e = m_->prefix_cache().entry(b);
      out += std::to_string(b) + (e.cached ? (e.computed ? "c" : "p" + (e.owner == kNoSeq ? std::string("?") : std::to_string(e.owner))) : "") +
             "r" + std::to_string(m_->pool().ref_count(b)) + " ";
    }
    return out + "computed " + std::to_string(m_->num_computed_tokens(id)) + "/" + std::to_string(m_->num_tokens(id));
  }

  std::string fmt_alloc(SeqId id, const std::vector<TokenId>& prompt, uint64_t extra, const std::optional<AllocateResult>& r) const {
    std::string out = "allocate " + std::to_string(id) + " len " + std::to_string(prompt.size()) + " extra " + std::to_string(extra);
    if (!r) return out + " FULL";
    out += " -> " + std::to_string(r->progress.num_computed_tokens) + "/" + std::to_string(r->progress.num_pending_tokens) + "/" +
           std::to_string(r->progress.num_computable_tokens) + " copies " + std::to_string(r->copies.size()) + " table " + table_str(id);
    return out;
  }

  static void extend(SimSeq& s, std::span<const TokenId> toks) {
    for (TokenId t : toks) {
      const uint64_t prev = s.expect.empty() ? mix(s.extra + 1) : s.expect.back();
      s.tokens.push_back(t);
      s.expect.push_back(mix(prev ^ mix(static_cast<uint64_t>(t) + 7)));
    }
  }

  std::vector<TokenId> random_prompt() {
    std::vector<TokenId> p;
    if (rand(10) < 8) {
      const auto& doc = docs_[rand(static_cast<uint32_t>(docs_.size()))];
      const uint32_t len = 1 + rand(24);
      p.assign(doc.begin(), doc.begin() + len);
    }
    const uint32_t extra = rand(5);
    for (uint32_t i = 0; i < extra; ++i) p.push_back(static_cast<TokenId>(rand(4)));
    if (p.empty()) p.push_back(0);
    return p;
  }

  static void check_progress(const SeqProgress& p, uint32_t n) {
    ASSERT_LE(p.num_computed_tokens + p.num_pending_tokens + p.num_computable_tokens, n);
    ASSERT_FALSE(p.num_pending_tokens > 0 && p.num_computable_tokens > 0);
    if (p.num_pending_tokens == 0 && p.num_computable_tokens == 0) {
      ASSERT_EQ(p.num_computed_tokens, n);
    }
  }

  void op_allocate() {
    if (seqs_.size() >= 10) return;
    const auto prompt = random_prompt();
    const uint64_t extra = rand(8) == 0 ? 1 : 0;
    const auto hit = m_->lookup_prefix(prompt, extra);
    const uint32_t needed = m_->blocks_needed(prompt, extra);
    const uint32_t free0 = m_->num_free_blocks();
    ASSERT_EQ(m_->can_allocate(prompt, extra), needed <= free0);

    // Blocks of live sequences that hold the same leading content and are cached must be found.
    const uint32_t nfull = static_cast<uint32_t>(prompt.size()) / bs_;
    std::vector<BlockId> must_share;
    for (const auto& [oid, o] : seqs_) {
      if (o.extra != extra) continue;
      const auto& ob = m_->block_table(oid).blocks;
      const uint32_t o_full = static_cast<uint32_t>(o.tokens.size()) / bs_;
      for (uint32_t j = 0; j < std::min(nfull, o_full); ++j) {
        if (!std::equal(prompt.begin() + j * bs_, prompt.begin() + (j + 1) * bs_, o.tokens.begin() + j * bs_)) break;
        if (!m_->prefix_cache().contains(ob[j])) break;
        if (must_share.size() <= j) must_share.push_back(ob[j]);
      }
    }

    const SeqId id = next_id_++;
    const auto r = m_->allocate(id, prompt, extra);
    note(fmt_alloc(id, prompt, extra, r));
    if (!r) {
      ++cov_.failed_allocations;
      ASSERT_GT(needed, free0);
      ASSERT_EQ(m_->num_free_blocks(), free0);
      ASSERT_FALSE(m_->has_sequence(id));
      return;
    }
    ASSERT_LE(needed, free0);
    ASSERT_EQ(free0 - m_->num_free_blocks(), needed);
    ASSERT_EQ(r->progress.num_computed_tokens, hit.computed_tokens);
    ASSERT_EQ(r->progress.num_pending_tokens, hit.pending_tokens);
    ASSERT_EQ(r->num_shared_tokens, hit.shared_tokens);
    check_progress(r->progress, static_cast<uint32_t>(prompt.size()));
    const auto& table = m_->block_table(id).blocks;
    for (uint32_t j = 0; j < must_share.size(); ++j) {
      const bool last_of_whole_hit = j + 1 == nfull && prompt.size() % bs_ == 0;
      if (!last_of_whole_hit) {
        ASSERT_EQ(table[j], must_share[j]) << "missed a prefix hit at block " << j;
      }
    }
    SimSeq s;
    s.extra = extra;
    extend(s, prompt);
    s.copies = r->copies;
    s.seen = r->progress;
    cov_.whole_prompt_copies += !r->copies.empty();
    cov_.pending_waits += r->progress.num_pending_tokens > 0;
    seqs_.emplace(id, std::move(s));
  }

  void perform_copies() {
    // All copies of the step run before the forward pass; they are independent, so run them in a
    // random order to check that.
    std::vector<BlockCopy> all;
    for (auto& [id, s] : seqs_) {
      all.insert(all.end(), s.copies.begin(), s.copies.end());
      s.copies.clear();
    }
    std::shuffle(all.begin(), all.end(), rng_);
    for (const auto& c : all) {
      std::copy_n(kv_.begin() + static_cast<ptrdiff_t>(c.src) * bs_, bs_, kv_.begin() + static_cast<ptrdiff_t>(c.dst) * bs_);
    }
  }

  // One forward pass over (part of) what the sequence may compute; false when it could do nothing.
  bool op_compute(SeqId id, bool all = false) {
    perform_copies();
    SimSeq& s = seqs_.at(id);
    const auto n = static_cast<uint32_t>(s.tokens.size());
    const SeqProgress p = m_->update_progress(id);
    check_progress(p, n);
    // Blocks it waited for came back to it to compute: their computing sequence went away.
    if (s.seen.num_pending_tokens > 0 && p.num_computable_tokens > 0 &&
        p.num_computed_tokens < s.seen.num_computed_tokens + s.seen.num_pending_tokens) {
      ++cov_.orphan_handoffs;
    }
    s.seen = p;
    if (p.num_pending_tokens > 0 && rand(4) == 0) {
      EXPECT_THROW(m_->slot_mapping(id, p.num_computed_tokens, p.num_computed_tokens + 1), std::logic_error);
    }
    if (p.num_computable_tokens == 0) return false;
    const uint32_t k = all ? p.num_computable_tokens : 1 + rand(p.num_computable_tokens);
    const uint32_t begin = p.num_computed_tokens;
    const auto slots = m_->slot_mapping(id, begin, begin + k);
    for (uint32_t i = 0; i < k; ++i) kv_[static_cast<size_t>(slots[i])] = s.expect[begin + i];
    const SeqProgress after = m_->mark_computed(id, begin + k);
    s.seen = after;
    note("compute " + std::to_string(id) + " [" + std::to_string(begin) + "," + std::to_string(begin + k) + ") -> " +
         std::to_string(after.num_computed_tokens) + "/" + std::to_string(after.num_pending_tokens) + "/" +
         std::to_string(after.num_computable_tokens) + " table " + table_str(id));
    check_progress(after, n);
    EXPECT_GE(after.num_computed_tokens, begin + k);
    return true;
  }

  void op_append(SeqId id) {
    SimSeq& s = seqs_.at(id);
    if (s.tokens.size() > 48) return;
    std::vector<TokenId> toks(rand(4));
    for (auto& t : toks) t = static_cast<TokenId>(rand(4));
    const uint32_t needed = m_->blocks_needed_to_append(id, static_cast<uint32_t>(toks.size()));
    const uint32_t free0 = m_->num_free_blocks();
    ASSERT_EQ(m_->can_append(id, static_cast<uint32_t>(toks.size())), needed <= free0);
    const auto r = m_->append(id, toks);
    note("append " + std::to_string(id) + " +" + std::to_string(toks.size()) + (r ? " ok copies " + std::to_string(r->size()) : " FULL") + " table " + table_str(id));
    if (!r) {
      ++cov_.failed_appends;
      ASSERT_GT(needed, free0);
      ASSERT_EQ(m_->num_free_blocks(), free0);
      ASSERT_EQ(m_->num_tokens(id), s.tokens.size());
      return;
    }
    ASSERT_EQ(free0 - m_->num_free_blocks(), needed);
    s.copies.insert(s.copies.end(), r->begin(), r->end());
    cov_.fork_copies += !r->empty();
    extend(s, toks);
  }

  void op_fork(SeqId id) {
    if (seqs_.size() >= 10) return;
    const SeqId child = next_id_++;
    if (m_->num_computed_tokens(id) != m_->num_tokens(id)) {
      EXPECT_THROW(m_->fork(id, child), std::logic_error);
      return;
    }
    const uint32_t free0 = m_->num_free_blocks();
    m_->fork(id, child);
    note("fork " + std::to_string(id) + " -> " + std::to_string(child));
    ASSERT_EQ(m_->num_free_blocks(), free0);  // a fork takes no memory
    SimSeq c = seqs_.at(id);
    ASSERT_TRUE(c.copies.empty());
    seqs_.emplace(child, std::move(c));
  }

  void op_free(SeqId id) {
    note("free " + std::to_string(id));
    m_->free(id);
    seqs_.erase(id);  // its copies that never ran are dropped with it
  }

  void op_lookup() {
    const auto prompt = random_prompt();
    const auto before = m_->stats();
    const auto h = m_->lookup_prefix(prompt);
    ASSERT_LE(h.computed_tokens + h.pending_tokens, prompt.size());
    ASSERT_LE(h.shared_tokens, prompt.size());
    ASSERT_EQ(m_->stats().blocks_free, before.blocks_free);
  }

  void op_misuse(SeqId id) {
    const uint32_t n = m_->num_tokens(id);
    const uint32_t c = m_->num_computed_tokens(id);
    EXPECT_THROW(m_->mark_computed(id, n + 1), std::logic_error);
    if (c > 0) {
      EXPECT_THROW(m_->slot_mapping(id, c - 1, c), std::logic_error);
    }
    EXPECT_THROW(m_->allocate(id, std::vector<TokenId>{1}), std::logic_error);
    EXPECT_THROW(m_->fork(id, id), std::logic_error);
    EXPECT_EQ(m_->num_tokens(id), n);
    EXPECT_EQ(m_->num_computed_tokens(id), c);
  }

  void check() {
    m_->check_invariants();
    ASSERT_EQ(m_->num_sequences(), seqs_.size());
    for (const auto& [id, s] : seqs_) {
      const auto toks = m_->tokens(id);
      ASSERT_TRUE(std::equal(toks.begin(), toks.end(), s.tokens.begin(), s.tokens.end()));
      if (!s.copies.empty()) continue;  // its blocks are complete only after the copies ran
      const BlockTable& t = m_->block_table(id);
      const uint32_t computed = m_->num_computed_tokens(id);
      for (uint32_t p = 0; p < computed; ++p) {
        ASSERT_EQ(kv_[static_cast<size_t>(t.slot(p, bs_))], s.expect[p])
            << "sequence " << id << " position " << p << " reads wrong KV";
      }
    }
  }

  void note(std::string line) {
    if (log_.size() >= 40) log_.erase(log_.begin());
    log_.push_back(std::move(line));
  }

  std::vector<std::string> log_;
  Coverage cov_;
  std::mt19937_64 rng_;
  std::unique_ptr<KvManager> m_;
  uint32_t bs_ = 0;
  std::vector<uint64_t> kv_;
  std::vector<std::vector<TokenId>> docs_;
  std::map<SeqId, SimSeq> seqs_;
  SeqId next_id_ = 1;
};

int steps_per_seed() {
  if (const char* env = std::getenv("VELLUM_KV_PROPERTY_STEPS")) return std::max(1, std::atoi(env));
  return 10000;
}

// One seed: random configuration, random operations, then finish everything and free everything.
void run_seed(uint64_t seed, int steps, Coverage& total) {
  std::mt19937_64 cfg(seed * 7919);
  const uint32_t block_size = 1 + static_cast<uint32_t>(cfg() % 4);
  const uint32_t num_blocks = 6 + static_cast<uint32_t>(cfg() % 36);
  const bool caching = seed % 5 != 4;
  SCOPED_TRACE(testing::Message() << "seed " << seed << " block_size " << block_size << " blocks " << num_blocks
                                  << " caching " << caching);
  Driver d(seed, block_size, num_blocks, caching);
  for (int i = 0; i < steps; ++i) {
    try {
      d.step();
    } catch (const std::exception& e) {
      FAIL() << "at step " << i << ": " << e.what() << "\n" << d.trace();
    }
    if (testing::Test::HasFailure()) FAIL() << "at step " << i << "\n" << d.trace();
  }
  d.drain();
  d.free_all();
  const KvStats st = d.manager().stats();
  if (caching) {
    EXPECT_GT(st.prefix_hit_tokens, 0u);
  }
  if (block_size > 1 || caching) {  // one-token blocks are never partial: only whole-prompt hits copy
    EXPECT_GT(st.cow_copies, 0u);
  }
  const Coverage c = d.coverage();
  total.whole_prompt_copies += c.whole_prompt_copies;
  total.fork_copies += c.fork_copies;
  total.pending_waits += c.pending_waits;
  total.orphan_handoffs += c.orphan_handoffs;
  total.evictions += c.evictions;
  total.failed_allocations += c.failed_allocations;
  total.failed_appends += c.failed_appends;
}

}  // namespace

TEST(KvProperty, RandomOperationsKeepEveryInvariant) {
  uint64_t base = 0;
  if (const char* b = std::getenv("VELLUM_KV_PROPERTY_SEED_BASE")) base = std::strtoull(b, nullptr, 10);
  const int steps = steps_per_seed();
  Coverage total;
  for (uint64_t seed = base + 1; seed <= base + 10; ++seed) {
    run_seed(seed, steps, total);
    if (HasFailure()) return;
  }
  RecordProperty("coverage", testing::PrintToString(std::vector<uint64_t>{
      total.whole_prompt_copies, total.fork_copies, total.pending_waits, total.orphan_handoffs, total.evictions,
      total.failed_allocations, total.failed_appends}));
  // Every interesting path ran, many times.
  EXPECT_GT(total.whole_prompt_copies, 10u);
  EXPECT_GT(total.fork_copies, 10u);
  EXPECT_GT(total.pending_waits, 10u);
  EXPECT_GT(total.orphan_handoffs, 10u);
  EXPECT_GT(total.evictions, 10u);
  EXPECT_GT(total.failed_allocations, 10u);
  EXPECT_GT(total.failed_appends, 10u);
}
