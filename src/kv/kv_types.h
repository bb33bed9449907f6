#pragma once
// Small value types shared by the KV cache manager's parts (vellum::kv).

#include <cstdint>
#include <limits>

namespace vellum::kv {

using TokenId = int32_t;  // a vocabulary id, as llama.cpp's llama_token
using BlockId = int32_t;  // index of a physical block in the pool, [0, num_blocks)
using SeqId = uint64_t;   // a sequence, chosen by the caller (the engine)

inline constexpr BlockId kNoBlock = -1;
inline constexpr SeqId kNoSeq = std::numeric_limits<SeqId>::max();

// The backend must copy every token slot of block `src` into block `dst` (all layers, K and V) before
// the next forward pass that involves the sequence which asked for it (copy-on-write).
struct BlockCopy {
  BlockId src = kNoBlock;
  BlockId dst = kNoBlock;
  friend bool operator==(const BlockCopy&, const BlockCopy&) = default;
};

}  // namespace vellum::kv
