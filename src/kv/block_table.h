#pragma once
// A sequence's block table: logical block i (tokens [i*block_size, (i+1)*block_size)) lives in
// physical block blocks[i]. This is what the attention op reads through and what a Batch carries.

#include "kv/kv_types.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace vellum::kv {

struct BlockTable {
  std::vector<BlockId> blocks;
  uint32_t num_tokens = 0;  // tokens with a slot; blocks.size() == ceil(num_tokens / block_size)

  std::span<const BlockId> ids() const { return blocks; }
  // Physical KV slot of token position `pos`: the row of the pool's [num_blocks * block_size] token axis.
  int64_t slot(uint32_t pos, uint32_t block_size) const {
    return static_cast<int64_t>(blocks[pos / block_size]) * block_size + pos % block_size;
  }
};

}  // namespace vellum::kv
