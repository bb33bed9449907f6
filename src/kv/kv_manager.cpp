#include "kv/kv_manager.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <stdexcept>

namespace vellum::kv {
namespace {

[[noreturn]] void misuse(const std::string& what) { throw std::logic_error("KvManager: " + what); }

uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

uint64_t random_seed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace

KvManager::KvManager(const KvConfig& config)
    : config_((config.validate(), config)),
      seed_(config.hash_seed ? *config.hash_seed : random_seed()),
      pool_(config.num_blocks),
      cache_(config.num_blocks, config.block_size),
      pins_(config.num_blocks, 0) {
  if (config_.hash_fn == nullptr) config_.hash_fn = hash_block;
  seqs_.reserve(64);
}

// ---- helpers ---------------------------------------------------------------------------------------

const KvManager::Seq& KvManager::seq_ref(SeqId seq) const {
  const auto it = seqs_.find(seq);
  if (it == seqs_.end()) misuse(fmt::format("unknown sequence {}", seq));
  return it->second;
}

KvManager::Seq& KvManager::seq_ref(SeqId seq) {
  const auto it = seqs_.find(seq);
  if (it == seqs_.end()) misuse(fmt::format("unknown sequence {}", seq));
  return it->second;
}

BlockId KvManager::take_fresh() {
  const BlockId b = pool_.pop_free();
  if (cache_.contains(b)) {  // lazy eviction: the LRU cached block gives up its content now
    cache_.erase(b);
    --cached_free_;
    ++totals_.evictions;
  }
  return b;
}

void KvManager::acquire_hit(BlockId b) {
  if (pool_.is_free(b)) --cached_free_;  // hits are always cached
  pool_.acquire(b);
}

void KvManager::release_block(SeqId id, BlockId b) {
  const PrefixCache::Entry e = cache_.entry(b);
  if (pool_.ref_count(b) == 1) {
    if (e.cached && e.computed) {
      pool_.release(b, BlockPool::FreeAt::kTail);  // keeps its KV for later hits
      ++cached_free_;
    } else {
      // Never computed (nobody will now) or never cached: worthless, reuse it first.
      if (e.cached) cache_.erase(b);
      pool_.release(b, BlockPool::FreeAt::kHead);
    }
    return;
  }
  pool_.release(b, BlockPool::FreeAt::kHead);  // still referenced: not linked anywhere
  if (e.cached && !e.computed && e.owner == id) cache_.set_owner(b, kNoSeq);  // orphan: a holder claims it
}

bool KvManager::writable(SeqId id, BlockId b) const {
  const auto& e = cache_.entry(b);
  if (e.cached) return !e.computed && e.owner == id;
  return pool_.ref_count(b) - pins_[b] == 1;  // a reserved copy source is read before any write
}

void KvManager::register_full_blocks(SeqId id, Seq& s, uint32_t first, uint32_t end) {
  if (!config_.enable_prefix_caching) return;
  const uint32_t bs = config_.block_size;
  for (uint32_t i = first; i < end; ++i) {
    const auto toks = std::span<const TokenId>(s.tokens).subspan(static_cast<size_t>(i) * bs, bs);
    const BlockHash parent = i == 0 ? kRootBlockHash : s.hashes[i - 1];
    if (i >= s.hashes.size()) s.hashes.push_back(config_.hash_fn(parent, toks, s.extra_key, seed_));
    const BlockId b = s.table.blocks[i];
    if (cache_.contains(b)) continue;
    // Fails when the hash is taken (an identical block cached elsewhere, or a collision): this block
    // then stays private.
    cache_.insert(b, s.hashes[i], parent, toks, s.extra_key, s.num_computed >= (i + 1) * bs, id);
  }
}

SeqProgress KvManager::advance(SeqId id, Seq& s) {
  const uint32_t bs = config_.block_size;
  const uint32_t n = s.table.num_tokens;
  const uint32_t nfull = n / bs;
  const auto& blocks = s.table.blocks;
  SeqProgress p;
  if (s.num_computed % bs == 0) {
    // Blocks other sequences finished since we last looked.
    uint32_t i = s.num_computed / bs;
    while (i < nfull && cache_.entry(blocks[i]).cached && cache_.entry(blocks[i]).computed) ++i;
    s.num_computed = std::max(s.num_computed, i * bs);
    // Blocks other live sequences are computing: wait for them.
    uint32_t j = i;
    for (; j < nfull; ++j) {
      const auto& e = cache_.entry(blocks[j]);
      if (!e.cached || !(e.computed || (e.owner != kNoSeq && e.owner != id))) break;
    }
    if (j > i) {
      p.num_computed_tokens = s.num_computed;
      p.num_pending_tokens = (j - i) * bs;
      return p;
    }
    // Orphans (their computing sequence went away) become ours.
    for (; j < nfull; ++j) {
      const auto& e = cache_.entry(blocks[j]);
      if (!e.cached || e.computed || e.owner != kNoSeq) break;
      cache_.set_owner(blocks[j], id);
    }
  }
  uint32_t k = s.num_computed / bs;
  while (k < blocks.size() && writable(id, blocks[k])) ++k;
  p.num_computed_tokens = s.num_computed;
  p.num_computable_tokens = std::min(k * bs, n) - std::min(s.num_computed, std::min(k * bs, n));
  return p;
}

void KvManager::debug_check() const {
#ifndef NDEBUG
  check_invariants();
#endif
}

// ---- queries ---------------------------------------------------------------------------------------

KvManager::Plan KvManager::plan_allocation(std::span<const TokenId> tokens, uint64_t extra_key) const {
  Plan p;
  const uint32_t bs = config_.block_size;
  if (tokens.size() > UINT32_MAX - bs) misuse("prompt too long");
  const auto n = static_cast<uint32_t>(tokens.size());
  const uint32_t nb = ceil_div(n, bs);
  const uint32_t nfull = n / bs;
  if (config_.enable_prefix_caching) {
    p.hashes = hash_full_blocks(tokens, bs, extra_key, seed_, config_.hash_fn);
    for (uint32_t i = 0; i < nfull; ++i) {
      const auto r = cache_.find(p.hashes[i], i == 0 ? kRootBlockHash : p.hashes[i - 1],
                                 tokens.subspan(static_cast<size_t>(i) * bs, bs), extra_key);
      if (r.collision) ++p.collisions;
      if (r.block == kNoBlock) break;
      p.hits.push_back(r.block);
    }
    if (nfull > 0 && p.hits.size() == nfull && n % bs == 0) {
      // Whole prompt cached: the last token is recomputed for its logits, into a copy of the last
      // block. While any of the prompt is still pending the copy cannot be made yet (nor would
      // num_computed = n - 1 be true): compute the last block ourselves instead.
      if (std::all_of(p.hits.begin(), p.hits.end(), [&](BlockId b) { return cache_.entry(b).computed; })) {
        p.cow = true;
      } else {
        p.hits.pop_back();
      }
    }
  }
  auto count = [&] {
    const auto table_hits = static_cast<uint32_t>(p.hits.size()) - (p.cow ? 1 : 0);
    p.fresh = nb - table_hits;
    p.revive = static_cast<uint32_t>(std::count_if(p.hits.begin(), p.hits.end(), [&](BlockId b) { return pool_.is_free(b); }));
  };
  count();
  if (p.cow && p.needed() > pool_.num_free()) {
    // No room for the copy and its source: recompute the last block rather than fail.
    p.hits.pop_back();
    p.cow = false;
    count();
  }
  return p;
}

PrefixHit KvManager::lookup_prefix(std::span<const TokenId> tokens, uint64_t extra_key) const {
  const Plan p = plan_allocation(tokens, extra_key);
  const uint32_t bs = config_.block_size;
  const auto table_hits = static_cast<uint32_t>(p.hits.size()) - (p.cow ? 1 : 0);
  PrefixHit h;
  h.shared_tokens = table_hits * bs;
  if (p.cow) {
    h.computed_tokens = static_cast<uint32_t>(tokens.size()) - 1;
    return h;
  }
  uint32_t i = 0;
  while (i < table_hits && cache_.entry(p.hits[i]).computed) ++i;
  uint32_t j = i;
  while (j < table_hits && (cache_.entry(p.hits[j]).computed || cache_.entry(p.hits[j]).owner != kNoSeq)) ++j;
  h.computed_tokens = i * bs;
  h.pending_tokens = (j - i) * bs;
  return h;
}

uint32_t KvManager::blocks_needed(std::span<const TokenId> tokens, uint64_t extra_key) const {
  return plan_allocation(tokens, extra_key).needed();
}

bool KvManager::can_allocate(std::span<const TokenId> tokens, uint64_t extra_key) const {
  return static_cast<uint64_t>(blocks_needed(tokens, extra_key)) + config_.watermark_blocks <= pool_.num_free();
}

uint32_t KvManager::blocks_needed_to_append(SeqId seq, uint32_t n_tokens) const {
  const Seq& s = seq_ref(seq);
  if (n_tokens == 0) return 0;
  const uint32_t bs = config_.block_size;
  const uint32_t n0 = s.table.num_tokens;
  const uint64_t n1 = static_cast<uint64_t>(n0) + n_tokens;
  const bool cow = n0 % bs != 0 && pool_.ref_count(s.table.blocks.back()) - pins_[s.table.blocks.back()] > 1;
  const uint64_t add = (n1 + bs - 1) / bs - s.table.blocks.size();
  return static_cast<uint32_t>(std::min<uint64_t>(add + (cow ? 1 : 0), UINT32_MAX));
}

bool KvManager::can_append(SeqId seq, uint32_t n_tokens) const {
  return blocks_needed_to_append(seq, n_tokens) <= pool_.num_free();
}

// ---- operations ------------------------------------------------------------------------------------

std::optional<AllocateResult> KvManager::allocate(SeqId id, std::span<const TokenId> prompt, uint64_t extra_key) {
  if (seqs_.contains(id)) misuse(fmt::format("allocate: sequence {} exists already", id));
  Plan p = plan_allocation(prompt, extra_key);
  totals_.hash_collisions += p.collisions;
  if (p.needed() > pool_.num_free()) return std::nullopt;

  const uint32_t bs = config_.block_size;
  const auto n = static_cast<uint32_t>(prompt.size());
  const uint32_t nb = ceil_div(n, bs);
  const auto table_hits = static_cast<uint32_t>(p.hits.size()) - (p.cow ? 1 : 0);

  // Everything that allocates memory first, so the pool is only touched once nothing can fail.
  Seq fresh_seq;
  fresh_seq.table.blocks.reserve(nb);
  fresh_seq.tokens.assign(prompt.begin(), prompt.end());
  fresh_seq.hashes = std::move(p.hashes);
  fresh_seq.extra_key = extra_key;
  AllocateResult r;
  if (p.cow) {
    r.copies.reserve(1);
    fresh_seq.copy_sources.reserve(1);
  }
  Seq& s = seqs_.emplace(id, std::move(fresh_seq)).first->second;

  // Hits first: popping fresh blocks must not evict a block we are about to share.
  for (BlockId b : p.hits) acquire_hit(b);
  s.table.blocks.assign(p.hits.begin(), p.hits.begin() + table_hits);
  if (p.cow) {
    const BlockId src = p.hits.back();
    const BlockId dst = take_fresh();
    s.copy_sources.push_back(src);  // the hit reference becomes the copy's reservation
    ++pins_[src];
    s.table.blocks.push_back(dst);
    r.copies.push_back({src, dst});
    ++totals_.cow_copies;
  }
  while (s.table.blocks.size() < nb) s.table.blocks.push_back(take_fresh());
  s.table.num_tokens = n;
  if (p.cow) s.num_computed = n - 1;
  register_full_blocks(id, s, table_hits + (p.cow ? 1 : 0), n / bs);  // our fresh full blocks, as pending

  r.progress = advance(id, s);
  r.num_shared_tokens = table_hits * bs;
  if (config_.enable_prefix_caching) {
    ++totals_.prefix_lookups;
    totals_.prefix_query_tokens += n;
    totals_.prefix_hit_tokens += r.progress.num_computed_tokens + r.progress.num_pending_tokens;
    totals_.prefix_pending_hit_tokens += r.progress.num_pending_tokens;
  }
  debug_check();
  return r;
}

std::optional<std::vector<BlockCopy>> KvManager::append(SeqId id, std::span<const TokenId> new_tokens) {
  Seq& s = seq_ref(id);
  std::vector<BlockCopy> copies;
  if (new_tokens.empty()) return copies;
  const uint32_t bs = config_.block_size;
  const uint32_t n0 = s.table.num_tokens;
  if (new_tokens.size() > UINT32_MAX - bs - n0) misuse("append: sequence too long");
  const uint32_t n1 = n0 + static_cast<uint32_t>(new_tokens.size());
  const uint32_t needed = blocks_needed_to_append(id, static_cast<uint32_t>(new_tokens.size()));
  if (needed > pool_.num_free()) return std::nullopt;
  const bool cow = n0 % bs != 0 && pool_.ref_count(s.table.blocks.back()) - pins_[s.table.blocks.back()] > 1;

  s.table.blocks.reserve(ceil_div(n1, bs));
  s.tokens.reserve(n1);
  if (config_.enable_prefix_caching) s.hashes.reserve(n1 / bs);
  if (cow) {
    copies.reserve(1);
    s.copy_sources.reserve(s.copy_sources.size() + 1);
  }

  if (cow) {
    // The partial last block is shared (fork): write into a private copy.
    const BlockId src = s.table.blocks.back();
    const BlockId dst = take_fresh();
    s.table.blocks.back() = dst;
    s.copy_sources.push_back(src);  // our table reference becomes the copy's reservation
    ++pins_[src];
    copies.push_back({src, dst});
    ++totals_.cow_copies;
  }
  while (s.table.blocks.size() < ceil_div(n1, bs)) s.table.blocks.push_back(take_fresh());
  s.tokens.insert(s.tokens.end(), new_tokens.begin(), new_tokens.end());
  s.table.num_tokens = n1;
  register_full_blocks(id, s, n0 / bs, n1 / bs);
  debug_check();
  return copies;
}

void KvManager::fork(SeqId parent, SeqId child) {
  if (parent == child) misuse(fmt::format("fork: sequence {} onto itself", parent));
  if (seqs_.contains(child)) misuse(fmt::format("fork: sequence {} exists already", child));
  const Seq& p = seq_ref(parent);
  if (p.num_computed != p.table.num_tokens) {
    misuse(fmt::format("fork: parent {} has {} of {} tokens computed; fork after its KV is complete", parent,
                       p.num_computed, p.table.num_tokens));
  }
  Seq copy = p;  // copy_sources is empty: they are released by the mark_computed that completed it
  Seq& c = seqs_.emplace(child, std::move(copy)).first->second;
  for (BlockId b : c.table.blocks) pool_.acquire(b);
  debug_check();
}

void KvManager::free(SeqId id) {
  Seq& s = seq_ref(id);
  for (BlockId b : s.copy_sources) {
    --pins_[b];
    release_block(id, b);
  }
  // Deepest first: they reach the LRU tail before their parents, so they are evicted before them.
  for (auto it = s.table.blocks.rbegin(); it != s.table.blocks.rend(); ++it) release_block(id, *it);
  seqs_.erase(id);
  debug_check();
}

SeqProgress KvManager::mark_computed(SeqId id, uint32_t n) {
  Seq& s = seq_ref(id);
  const uint32_t bs = config_.block_size;
  if (n < s.num_computed || n > s.table.num_tokens) {
    misuse(fmt::format("mark_computed: sequence {} to {} tokens, but it has {} computed of {}", id, n,
                       s.num_computed, s.table.num_tokens));
  }
  // Positions [num_computed, n) must have been this sequence's to write.
  for (uint32_t i = s.num_computed / bs; n > s.num_computed && i < ceil_div(n, bs); ++i) {
    if (!writable(id, s.table.blocks[i])) {
      misuse(fmt::format("mark_computed: sequence {} did not own block {} (position {}) to compute it", id,
                         s.table.blocks[i], i * bs));
    }
  }
  const uint32_t first_new = s.num_computed / bs;
  for (uint32_t i = first_new; i < n / bs; ++i) {
    const BlockId b = s.table.blocks[i];
    if (cache_.entry(b).cached && !cache_.entry(b).computed) cache_.mark_computed(b);  // waiters may go on
  }
  s.num_computed = n;
  // A private duplicate (its hash was taken when it was allocated) may be publishable now, if the
  // block that held the hash has since gone.
  register_full_blocks(id, s, first_new, n / bs);
  // The forward pass that computed these tokens ran after this sequence's copies.
  for (BlockId b : s.copy_sources) {
    --pins_[b];
    release_block(id, b);
  }
  s.copy_sources.clear();
  const SeqProgress p = advance(id, s);
  debug_check();
  return p;
}

SeqProgress KvManager::update_progress(SeqId id) {
  Seq& s = seq_ref(id);
  const SeqProgress p = advance(id, s);
  debug_check();
  return p;
}

// ---- views -----------------------------------------------------------------------------------------

const BlockTable& KvManager::block_table(SeqId seq) const { return seq_ref(seq).table; }
uint32_t KvManager::num_computed_tokens(SeqId seq) const { return seq_ref(seq).num_computed; }
std::span<const TokenId> KvManager::tokens(SeqId seq) const { return seq_ref(seq).tokens; }

void KvManager::slot_mapping(SeqId id, uint32_t begin, uint32_t end, std::vector<int64_t>& out) const {
  const Seq& s = seq_ref(id);
  const uint32_t bs = config_.block_size;
  if (begin > end || end > s.table.num_tokens || begin < s.num_computed) {
    misuse(fmt::format("slot_mapping: sequence {} positions [{}, {}) outside its uncomputed tokens [{}, {})", id,
                       begin, end, s.num_computed, s.table.num_tokens));
  }
  for (uint32_t i = begin / bs; i < ceil_div(end, bs); ++i) {
    if (!writable(id, s.table.blocks[i])) {
      misuse(fmt::format("slot_mapping: sequence {} may not write block {} (positions from {}): it is computed, "
                         "pending on another sequence or shared", id, s.table.blocks[i], i * bs));
    }
  }
  out.reserve(out.size() + (end - begin));
  for (uint32_t pos = begin; pos < end; ++pos) out.push_back(s.table.slot(pos, bs));
}

std::vector<int64_t> KvManager::slot_mapping(SeqId seq, uint32_t begin, uint32_t end) const {
  std::vector<int64_t> out;
  slot_mapping(seq, begin, end, out);
  return out;
}

KvStats KvManager::stats() const {
  KvStats st = totals_;
  st.blocks_total = pool_.num_blocks();
  st.blocks_free = pool_.num_free();
  st.blocks_used = st.blocks_total - st.blocks_free;
  st.blocks_cached_free = cached_free_;
  st.blocks_cached = static_cast<uint32_t>(cache_.size());
  st.num_sequences = static_cast<uint32_t>(seqs_.size());
  return st;
}

// ---- invariants ------------------------------------------------------------------------------------

void KvManager::check_invariants() const {
  auto fail = [](const std::string& what) { throw std::logic_error("KvManager invariant: " + what); };
  pool_.check_invariants();
  const uint32_t nblocks = pool_.num_blocks();
  const uint32_t bs = config_.block_size;
  std::vector<uint32_t> refs(nblocks, 0), pins(nblocks, 0);
  std::vector<SeqId> seen_in(nblocks, kNoSeq);

  for (const auto& [id, s] : seqs_) {
    const uint32_t n = s.table.num_tokens;
    if (s.table.blocks.size() != ceil_div(n, bs)) {
      fail(fmt::format("sequence {} has {} blocks for {} tokens", id, s.table.blocks.size(), n));
    }
    if (s.tokens.size() != n) fail(fmt::format("sequence {} stores {} tokens, table says {}", id, s.tokens.size(), n));
    if (s.num_computed > n) fail(fmt::format("sequence {} has {} computed of {} tokens", id, s.num_computed, n));
    if (config_.enable_prefix_caching && s.hashes.size() != n / bs) {
      fail(fmt::format("sequence {} has {} block hashes for {} full blocks", id, s.hashes.size(), n / bs));
    }
    for (uint32_t i = 0; i < s.table.blocks.size(); ++i) {
      const BlockId b = s.table.blocks[i];
      if (b < 0 || static_cast<uint32_t>(b) >= nblocks) fail(fmt::format("sequence {} names invalid block {}", id, b));
      if (seen_in[b] == id) fail(fmt::format("block {} is twice in the table of sequence {}", b, id));
      seen_in[b] = id;
      ++refs[b];
      const auto& e = cache_.entry(b);
      if (!e.cached) continue;
      if (i >= n / bs) fail(fmt::format("partial block {} of sequence {} is in the prefix cache", b, id));
      const auto toks = std::span<const TokenId>(s.tokens).subspan(static_cast<size_t>(i) * bs, bs);
      const auto stored = cache_.tokens(b);
      if (!std::equal(toks.begin(), toks.end(), stored.begin()) || e.extra_key != s.extra_key ||
          e.hash != s.hashes[i] || e.parent != (i == 0 ? kRootBlockHash : s.hashes[i - 1])) {
        fail(fmt::format("cached block {} does not hold block {} of sequence {}", b, i, id));
      }
      if ((i + 1) * bs <= s.num_computed && !e.computed) {
        fail(fmt::format("sequence {} counts block {} as computed but it is pending", id, b));
      }
    }
    if (config_.enable_prefix_caching) {
      BlockHash parent = kRootBlockHash;
      for (uint32_t i = 0; i < n / bs; ++i) {
        parent = config_.hash_fn(parent, std::span<const TokenId>(s.tokens).subspan(static_cast<size_t>(i) * bs, bs),
                                 s.extra_key, seed_);
        if (parent != s.hashes[i]) fail(fmt::format("sequence {} block {} hash is stale", id, i));
      }
    }
    for (BlockId b : s.copy_sources) {
      ++refs[b];
      ++pins[b];
    }
  }

  uint32_t cached_free = 0;
  for (uint32_t b = 0; b < nblocks; ++b) {
    const auto bid = static_cast<BlockId>(b);
    if (refs[b] != pool_.ref_count(bid)) {
      fail(fmt::format("block {} has reference count {} but {} references", b, pool_.ref_count(bid), refs[b]));
    }
    if (pins[b] != pins_[b]) fail(fmt::format("block {} has {} copy reservations, counted {}", b, pins_[b], pins[b]));
    const auto& e = cache_.entry(bid);
    if (!e.cached) {
      if (e.computed || e.owner != kNoSeq) fail(fmt::format("uncached block {} has cache state", b));
      continue;
    }
    const auto it = cache_.map().find(e.hash);
    if (it == cache_.map().end() || it->second != bid) fail(fmt::format("cached block {} is not under its hash", b));
    if (config_.hash_fn(e.parent, cache_.tokens(bid), e.extra_key, seed_) != e.hash) {
      fail(fmt::format("cached block {}: stored content does not hash to its key", b));
    }
    if (pool_.is_free(bid)) {
      ++cached_free;
      if (!e.computed) fail(fmt::format("free block {} is cached but was never computed", b));
    }
    if (e.computed && e.owner != kNoSeq) fail(fmt::format("computed block {} has an owner", b));
    if (!e.computed && e.owner != kNoSeq) {
      const auto o = seqs_.find(e.owner);
      if (o == seqs_.end() ||
          std::find(o->second.table.blocks.begin(), o->second.table.blocks.end(), bid) == o->second.table.blocks.end()) {
        fail(fmt::format("pending block {} is owned by sequence {}, which does not hold it", b, e.owner));
      }
    }
  }
  for (const auto& [h, b] : cache_.map()) {
    if (!cache_.entry(b).cached || cache_.entry(b).hash != h) fail(fmt::format("hash maps to block {} which is not cached under it", b));
  }
  if (cached_free != cached_free_) fail(fmt::format("cached-free count {} but {} counted", cached_free_, cached_free));
  if (!config_.enable_prefix_caching && cache_.size() != 0) fail("prefix caching is off but blocks are cached");
}

}  // namespace vellum::kv
