#pragma once
// KvManager's settings, and how to derive the pool size from a memory budget or a token count.

#include "kv/block_hash.h"
#include "kv/kv_layout.h"

#include <cstdint>
#include <optional>
#include <string>

namespace vellum::kv {

struct KvConfig {
  uint32_t block_size = 16;  // tokens per block (--block-size)
  uint32_t num_blocks = 0;   // physical blocks in the pool
  // When non-zero, construction fails unless one sequence of this many tokens fits in the pool.
  uint32_t max_seq_len = 0;
  bool enable_prefix_caching = true;
  // Admission rule: can_allocate() keeps this many blocks free after the new sequence, so running
  // sequences can still grow (decode) before anyone has to be preempted.
  uint32_t watermark_blocks = 0;
  // Seed of the block hash; nullopt draws a random one (see block_hash.h for why).
  std::optional<uint64_t> hash_seed;
  BlockHashFn hash_fn = hash_block;  // tests may force collisions

  // Pool sized from a memory budget in bytes (CPU --kv-cache-memory; later the GPU memory left under
  // --gpu-memory-utilization). Throws vellum::Error when it cannot hold one max_seq_len sequence.
  static KvConfig from_memory(const KvLayout& layout, uint64_t bytes, uint32_t max_seq_len);
  // Pool sized to hold `tokens` tokens (-c style), rounded up to whole blocks.
  static KvConfig from_tokens(const KvLayout& layout, uint64_t tokens, uint32_t max_seq_len);

  // Throws vellum::Error naming the problem (zero sizes, too many blocks, pool below max_seq_len).
  void validate() const;
};

// "1.50 GiB", "640 KiB", "17 B"
std::string format_bytes(uint64_t bytes);

}  // namespace vellum::kv
