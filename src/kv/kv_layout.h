#pragma once
// Byte layout of one KV block and the pool-sizing arithmetic.
//
// A block holds, for every layer, the K and V of its block_size tokens:
//   [n_layers][K|V][block_size][n_kv_heads][head_dim]
// so that it moves between device and host memory as one contiguous copy. Layers may differ (head
// counts, head dims, even KV type), so the shape is a per-layer table.

#include "core/tensor_type.h"

#include <cstdint>
#include <vector>

namespace vellum::kv {

struct KvLayerShape {
  uint32_t n_kv_heads = 0;
  uint32_t head_dim_k = 0;
  uint32_t head_dim_v = 0;
  TensorType type = TensorType::F16;

  uint64_t k_bytes_per_token() const;  // n_kv_heads * head_dim_k elements of `type`
  uint64_t v_bytes_per_token() const;
};

struct KvLayout {
  uint32_t block_size = 16;
  std::vector<KvLayerShape> layers;

  // Every layer alike: n_layers x 2 x block_size x n_kv_heads x head_dim x sizeof(type) per block.
  static KvLayout uniform(uint32_t n_layers, uint32_t n_kv_heads, uint32_t head_dim,
                          TensorType type = TensorType::F16, uint32_t block_size = 16);

  uint64_t bytes_per_token() const;  // all layers, K and V
  uint64_t bytes_per_block() const { return bytes_per_token() * block_size; }
  // Byte offsets inside a block of layer l's K and V: [block_size][n_kv_heads][head_dim] each.
  uint64_t k_offset(uint32_t layer) const;
  uint64_t v_offset(uint32_t layer) const;

  // Throws vellum::Error when the layout is empty or a row is not whole quantization blocks.
  void validate() const;
};

// Blocks needed for `tokens` tokens (rounded up).
uint64_t blocks_for_tokens(uint64_t tokens, uint32_t block_size);
// Whole blocks that fit in `bytes` (rounded down).
uint64_t blocks_for_budget(uint64_t bytes, const KvLayout& layout);

}  // namespace vellum::kv
