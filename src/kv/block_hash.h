#pragma once
// Chained content hash of a KV block: the hash of a block covers its parent's hash (so the whole
// prefix before it), its own token ids and an extra key for anything else that changes the KV (an
// adapter id, a multimodal input hash). Two blocks with equal hashes therefore hold the same KV.
//
// The hash is 128 bits (XXH3-128) and seeded: the prefix cache keys on it, and additionally verifies
// the block's own token ids on every lookup, so a wrong reuse needs a 128-bit collision on a chain
// whose last block also has identical tokens. The seed is random per process by default so that a
// client cannot precompute colliding prompts to read another client's cached KV.

#include "kv/kv_types.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace vellum::kv {

struct BlockHash {
  uint64_t lo = 0;
  uint64_t hi = 0;
  friend bool operator==(const BlockHash&, const BlockHash&) = default;
};

// For unordered containers: the low half is already uniformly distributed.
struct BlockHashHasher {
  size_t operator()(const BlockHash& h) const noexcept { return static_cast<size_t>(h.lo); }
};

// The parent of a sequence's first block.
inline constexpr BlockHash kRootBlockHash{0, 0};

// hash(parent, tokens, extra_key) under `seed`. Tests may substitute a weaker function (KvConfig::hash_fn)
// to force collisions.
using BlockHashFn = BlockHash (*)(const BlockHash& parent, std::span<const TokenId> tokens,
                                  uint64_t extra_key, uint64_t seed);

BlockHash hash_block(const BlockHash& parent, std::span<const TokenId> tokens, uint64_t extra_key,
                     uint64_t seed);

// Chained hashes of the full blocks of `tokens` (a trailing partial block gets none).
std::vector<BlockHash> hash_full_blocks(std::span<const TokenId> tokens, uint32_t block_size,
                                        uint64_t extra_key, uint64_t seed, BlockHashFn fn = hash_block);

}  // namespace vellum::kv
