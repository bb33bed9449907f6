#pragma once
// The prefix cache: chained block hash -> physical block, for full blocks only (a partial block's
// content is still changing, so it is never shared through the cache).
//
// Each cached block keeps a copy of its parent's hash, its own token ids and its extra key; find()
// compares them as well as the 128-bit hash, so a hash collision is a miss, not a wrong reuse.
//
// A cached block is either *computed* (its KV is in the block) or *pending*: registered as soon as a
// sequence allocated it, before its KV exists, so that a concurrent request with the same prefix shares
// it and waits instead of computing its own copy. A pending block has an `owner`, the sequence that
// will compute it, or kNoSeq when that sequence went away (an orphan, to be claimed by a holder).
//
// Invariants (checked by KvManager, which also knows the tables): each hash maps to one block and that
// block's entry carries that hash; a computed entry has no owner.

#include "kv/block_hash.h"
#include "kv/kv_types.h"

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace vellum::kv {

class PrefixCache {
 public:
  struct Entry {
    bool cached = false;  // registered in the map
    bool computed = false;
    SeqId owner = kNoSeq;  // pending entries: who computes it
    BlockHash hash{};
    BlockHash parent{};
    uint64_t extra_key = 0;
  };

  struct FindResult {
    BlockId block = kNoBlock;  // kNoBlock: miss
    bool collision = false;    // the hash matched a block with other tokens or extra key
  };

  PrefixCache(uint32_t num_blocks, uint32_t block_size);

  uint32_t block_size() const { return block_size_; }
  size_t size() const { return map_.size(); }

  // The cached block with this hash whose stored parent hash, tokens and extra key equal the given ones.
  FindResult find(const BlockHash& hash, const BlockHash& parent, std::span<const TokenId> tokens,
                  uint64_t extra_key) const;

  // Registers `block` (not cached yet) under `hash`; false (and nothing changes) when the hash is
  // already taken, by an identical block computed elsewhere or by a colliding one.
  bool insert(BlockId block, const BlockHash& hash, const BlockHash& parent, std::span<const TokenId> tokens,
              uint64_t extra_key, bool computed, SeqId owner);
  // Forgets a cached block (eviction, or a pending block nobody will compute).
  void erase(BlockId block);

  bool contains(BlockId block) const { return entries_[static_cast<size_t>(block)].cached; }
  const Entry& entry(BlockId block) const { return entries_[static_cast<size_t>(block)]; }
  void mark_computed(BlockId block);
  void set_owner(BlockId block, SeqId owner);
  std::span<const TokenId> tokens(BlockId block) const;

  // The map itself, for invariant checks.
  const std::unordered_map<BlockHash, BlockId, BlockHashHasher>& map() const { return map_; }

 private:
  uint32_t block_size_;
  std::vector<Entry> entries_;   // by block id
  std::vector<TokenId> tokens_;  // num_blocks * block_size, the cached blocks' token ids
  std::unordered_map<BlockHash, BlockId, BlockHashHasher> map_;
};

}  // namespace vellum::kv
