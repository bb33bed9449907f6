#pragma once
// Physical KV blocks: a reference count per block and the free list.
//
// The free list is in LRU order and is *lazy*: a freed block keeps its KV (and, in the prefix cache,
// its hash) until it is handed out again, so a later request with the same prefix can revive it.
// pop_free() takes from the head (least recently used); release() puts a block whose content is
// worth keeping at the tail (kept longest) and a worthless one (no cached hash) at the head (reused
// first). Freeing a sequence releases its blocks deepest first, so within one chain the deepest
// blocks reach the tail before their parents and are evicted before them.
//
// Invariants: a block is free iff its reference count is 0; the free list holds each free block
// exactly once and nothing else. BlockPool knows nothing of hashes; KvManager decides the position.

#include "kv/kv_types.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vellum::kv {

class BlockPool {
 public:
  enum class FreeAt { kHead, kTail };

  explicit BlockPool(uint32_t num_blocks);

  uint32_t num_blocks() const { return static_cast<uint32_t>(ref_.size()); }
  uint32_t num_free() const { return num_free_; }
  uint32_t ref_count(BlockId b) const { return ref_[static_cast<size_t>(b)]; }
  bool is_free(BlockId b) const { return ref_count(b) == 0; }

  // The least recently used free block, now with one reference. Precondition: num_free() > 0.
  BlockId pop_free();
  // One more reference; a free block leaves the free list (a cached block revived by a prefix hit).
  void acquire(BlockId b);
  // One reference less; returns true when the block became free (it is then linked at `where`).
  bool release(BlockId b, FreeAt where);

  // Free blocks from least to most recently used (tests, invariant checks, stats).
  std::vector<BlockId> free_list() const;
  // Throws std::logic_error naming the first broken invariant.
  void check_invariants() const;

 private:
  void link(BlockId b, FreeAt where);
  void unlink(BlockId b);

  std::vector<uint32_t> ref_;
  // Intrusive doubly linked free list; index num_blocks is the sentinel.
  std::vector<BlockId> prev_, next_;
  uint32_t num_free_ = 0;
};

}  // namespace vellum::kv
