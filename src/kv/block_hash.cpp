#include "kv/block_hash.h"

#include <xxhash.h>

#include <array>
#include <cstring>

namespace vellum::kv {

BlockHash hash_block(const BlockHash& parent, std::span<const TokenId> tokens, uint64_t extra_key,
                     uint64_t seed) {
  // One contiguous buffer and a one-shot hash: cheaper than XXH3's streaming state for ~100 bytes.
  constexpr size_t kHeader = sizeof(parent.lo) + sizeof(parent.hi) + sizeof(extra_key);
  const size_t bytes = kHeader + tokens.size_bytes();
  std::array<unsigned char, 1024> stack_buf;
  std::vector<unsigned char> heap_buf;
  unsigned char* buf = stack_buf.data();
  if (bytes > stack_buf.size()) {
    heap_buf.resize(bytes);
    buf = heap_buf.data();
  }
  std::memcpy(buf, &parent.lo, sizeof(parent.lo));
  std::memcpy(buf + 8, &parent.hi, sizeof(parent.hi));
  std::memcpy(buf + 16, &extra_key, sizeof(extra_key));
  if (!tokens.empty()) std::memcpy(buf + kHeader, tokens.data(), tokens.size_bytes());
  const XXH128_hash_t h = XXH3_128bits_withSeed(buf, bytes, seed);
  return BlockHash{h.low64, h.high64};
}

std::vector<BlockHash> hash_full_blocks(std::span<const TokenId> tokens, uint32_t block_size,
                                        uint64_t extra_key, uint64_t seed, BlockHashFn fn) {
  std::vector<BlockHash> out;
  if (block_size == 0) return out;
  const size_t n_full = tokens.size() / block_size;
  out.reserve(n_full);
  BlockHash parent = kRootBlockHash;
  for (size_t i = 0; i < n_full; ++i) {
    parent = fn(parent, tokens.subspan(i * block_size, block_size), extra_key, seed);
    out.push_back(parent);
  }
  return out;
}

}  // namespace vellum::kv
