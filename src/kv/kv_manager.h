#pragma once
// KvManager: the paged KV cache's bookkeeping (no KV bytes live here; the backend owns the pool
// memory and performs the block copies this class asks for).
//
// What it does: per-sequence block tables over one pool of ref-counted blocks; automatic prefix
// sharing through a cache of full blocks keyed by chained content hash; lazy LRU eviction (a freed
// block keeps its KV until reused); copy-on-write when a sequence must write into a block it shares;
// sharing of blocks that are still being computed (concurrent requests with a common prefix compute
// it once).
//
// Not thread-safe: the engine thread owns it.
//
// ---- Contract with the scheduler / runner -------------------------------------------------------
// A sequence's tokens are [0, num_tokens); [0, num_computed) have their KV in the blocks. After
// num_computed come either `pending` tokens (in blocks another sequence is computing right now: wait)
// or `computable` tokens (this sequence's to compute now), never both; see SeqProgress. The manager
// tracks num_computed from what the caller reports (mark_computed) and from blocks other sequences
// finish (update_progress).
//
//  1. Admission. `if (kv.can_allocate(prompt, key)) r = *kv.allocate(seq, prompt, key);`
//     can_allocate is the admission rule: the free blocks the prompt needs (after prefix hits) plus
//     KvConfig::watermark_blocks must be free, so running sequences can still grow. allocate() itself
//     only needs the blocks (use it directly when nothing else runs); it returns nullopt, changing
//     nothing, when they are not there. It allocates blocks for the whole prompt, and registers the
//     prompt's full blocks in the prefix cache at once, before their KV exists (pending), so that a
//     request with the same prefix arriving before they are computed shares them instead of computing
//     its own copy. r.progress says what to do next (as update_progress would).
//     A whole-prompt hit still computes the last prompt token (its logits are needed): its block is
//     copied (copy-on-write) and num_computed = prompt length - 1 (when every hit block is computed
//     and the pool has room for the copy; otherwise the last block is not shared and is recomputed).
//  2. Copies. Every BlockCopy returned (allocate, append) must be performed before the next forward
//     pass. The copies of one step are independent (no block is both a source and a destination, and
//     sources stay reserved until the sequence's next mark_computed), so they may run in any order.
//     Drop the copies of a sequence freed before they ran (their destinations are free again).
//  3. Forward. The runner writes the KV of positions [p0, p1) at slot_mapping(seq, p0, p1), with p0 =
//     num_computed and p1 <= num_computed + computable; slot_mapping throws std::logic_error for a
//     slot the sequence may not write (computed, pending or shared). After the pass:
//     kv.mark_computed(seq, p1): full blocks now computed become hits for everyone and wake their
//     waiters; it returns the new progress.
//  4. Waiting. A sequence with pending tokens calls kv.update_progress(seq) once per step until
//     pending is 0. If the sequence computing a shared block is freed first (finished, aborted,
//     preempted), its pending blocks pass to a waiting holder: that holder's pending drops and its
//     computable rises. A sequence that owns pending blocks must keep being scheduled or be freed, or
//     its waiters wait forever. Waits have no cycles: a sequence only waits on blocks that come
//     before its own in its chain, and a block has one position in every chain that holds it.
//  5. Growth. Before a step adds tokens (a sampled token):
//     `if (!kv.can_append(seq, n)) preempt someone (scheduler policy); copies = *kv.append(seq, ids);`
//     append returns nullopt, changing nothing, when the pool cannot supply the blocks. It copies the
//     last block first when it is shared (after fork), and registers blocks as they become full.
//  6. Forking (n > 1 sampling): once the prompt is computed (num_computed == num_tokens),
//     fork(parent, child) for each extra branch. The child shares every block; the first append of a
//     branch that still shares the partial last block copies it.
//  7. free(seq) when a sequence finishes, is aborted or is preempted (recompute). Its blocks keep their
//     KV in the prefix cache until the pool needs them.
//
// Failure: every operation either succeeds or leaves the manager as it was (allocate/append return
// nullopt for a full pool; misuse throws std::logic_error before changing anything; std::bad_alloc
// aside). Configuration problems (pool too small for one sequence) throw vellum::Error at
// construction.
//
// Invariants (check_invariants(), run after every operation in debug builds): every block is free
// xor referenced; a block's reference count equals the table entries naming it plus the copy sources
// reserved for it; the free list holds exactly the blocks with no references, once each; the cache
// maps each hash to one block whose stored parent hash, tokens and extra key hash to it; a cached
// block at position i of a table holds that sequence's tokens of block i; a pending cached block is
// held by someone and owned by a live holder or by nobody; no block appears twice in a table.

#include "kv/block_pool.h"
#include "kv/block_table.h"
#include "kv/kv_config.h"
#include "kv/kv_stats.h"
#include "kv/kv_types.h"
#include "kv/prefix_cache.h"

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace vellum::kv {

// What a prompt would get from the prefix cache right now.
struct PrefixHit {
  uint32_t shared_tokens = 0;    // tokens in cached blocks it would share (ready, pending or orphaned)
  uint32_t computed_tokens = 0;  // leading tokens whose KV is ready
  uint32_t pending_tokens = 0;   // following tokens other sequences are computing
};

// Where a sequence stands: [0, computed) ready; then either [computed, computed + pending) being
// computed by others (wait) or [computed, computed + computable) to compute now. At most one of
// pending and computable is non-zero; both are zero when every token is computed.
struct SeqProgress {
  uint32_t num_computed_tokens = 0;
  uint32_t num_pending_tokens = 0;
  uint32_t num_computable_tokens = 0;
  friend bool operator==(const SeqProgress&, const SeqProgress&) = default;
};

struct AllocateResult {
  SeqProgress progress;
  uint32_t num_shared_tokens = 0;  // prompt tokens in blocks shared through the cache (no new memory)
  std::vector<BlockCopy> copies;
};

class KvManager {
 public:
  // Throws vellum::Error when the configuration is unusable (see KvConfig::validate).
  explicit KvManager(const KvConfig& config);

  const KvConfig& config() const { return config_; }
  uint32_t block_size() const { return config_.block_size; }
  uint32_t num_blocks() const { return pool_.num_blocks(); }
  uint32_t num_free_blocks() const { return pool_.num_free(); }

  // ---- Queries (no side effects) ----
  PrefixHit lookup_prefix(std::span<const TokenId> tokens, uint64_t extra_key = 0) const;
  // Free blocks allocate() would consume (new blocks plus cached free blocks it would revive).
  uint32_t blocks_needed(std::span<const TokenId> tokens, uint64_t extra_key = 0) const;
  // The admission rule: blocks_needed + watermark_blocks <= free blocks.
  bool can_allocate(std::span<const TokenId> tokens, uint64_t extra_key = 0) const;
  uint32_t blocks_needed_to_append(SeqId seq, uint32_t n_tokens) const;
  bool can_append(SeqId seq, uint32_t n_tokens) const;

  // ---- Sequence operations (see the contract above) ----
  // Throws std::logic_error if `seq` exists already.
  std::optional<AllocateResult> allocate(SeqId seq, std::span<const TokenId> prompt, uint64_t extra_key = 0);
  std::optional<std::vector<BlockCopy>> append(SeqId seq, std::span<const TokenId> tokens);
  void fork(SeqId parent, SeqId child);
  void free(SeqId seq);
  SeqProgress mark_computed(SeqId seq, uint32_t num_computed_tokens);
  SeqProgress update_progress(SeqId seq);

  // ---- Per-sequence views ----
  bool has_sequence(SeqId seq) const { return seqs_.contains(seq); }
  size_t num_sequences() const { return seqs_.size(); }
  const BlockTable& block_table(SeqId seq) const;
  uint32_t num_tokens(SeqId seq) const { return block_table(seq).num_tokens; }
  uint32_t num_computed_tokens(SeqId seq) const;
  std::span<const TokenId> tokens(SeqId seq) const;
  // Physical slots of positions [begin, end) (block * block_size + offset), appended to `out`. Throws
  // std::logic_error unless the sequence may write them now (computed, pending and shared blocks are
  // read-only to it).
  void slot_mapping(SeqId seq, uint32_t begin, uint32_t end, std::vector<int64_t>& out) const;
  std::vector<int64_t> slot_mapping(SeqId seq, uint32_t begin, uint32_t end) const;

  // ---- Observability ----
  KvStats stats() const;
  std::string format_stats() const { return kv::format_stats(stats()); }
  // Throws std::logic_error naming the first broken invariant.
  void check_invariants() const;
  // Read-only access to the parts, for tests and the host tier.
  const BlockPool& pool() const { return pool_; }
  const PrefixCache& prefix_cache() const { return cache_; }

 private:
  struct Seq {
    BlockTable table;
    std::vector<TokenId> tokens;
    std::vector<BlockHash> hashes;  // chained hash of each full block (when caching)
    uint64_t extra_key = 0;
    uint32_t num_computed = 0;
    std::vector<BlockId> copy_sources;  // held until mark_computed: the copies read them
  };

  struct Plan {
    std::vector<BlockHash> hashes;
    std::vector<BlockId> hits;  // cached blocks to share, in order (the CoW source last when cow)
    bool cow = false;           // whole-prompt hit: copy the last hit block instead of sharing it
    uint32_t fresh = 0;         // blocks popped from the free list
    uint32_t revive = 0;        // hit blocks currently free
    uint64_t collisions = 0;
    uint32_t needed() const { return fresh + revive; }
  };

  Plan plan_allocation(std::span<const TokenId> tokens, uint64_t extra_key) const;
  const Seq& seq_ref(SeqId seq) const;
  Seq& seq_ref(SeqId seq);
  BlockId take_fresh();
  void release_block(SeqId seq, BlockId b);
  void register_full_blocks(SeqId id, Seq& s, uint32_t first, uint32_t end);
  void acquire_hit(BlockId b);
  bool writable(SeqId id, BlockId b) const;
  SeqProgress advance(SeqId id, Seq& s);
  void debug_check() const;

  KvConfig config_;
  uint64_t seed_;
  BlockPool pool_;
  PrefixCache cache_;
  std::unordered_map<SeqId, Seq> seqs_;
  std::vector<uint32_t> pins_;  // per block: copy sources reserved (part of its reference count)
  uint32_t cached_free_ = 0;    // free blocks still in the prefix cache
  KvStats totals_;
};

}  // namespace vellum::kv
