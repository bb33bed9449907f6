#include "kv/kv_config.h"

#include "core/error.h"

#include <limits>

namespace vellum::kv {
namespace {

// Block ids are int32 and slots block * block_size must fit in int64 (always true below this).
constexpr uint64_t kMaxBlocks = static_cast<uint64_t>(std::numeric_limits<BlockId>::max());

}  // namespace

std::string format_bytes(uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.2f} {}", v, units[u]);
}

KvConfig KvConfig::from_memory(const KvLayout& layout, uint64_t bytes, uint32_t max_seq_len) {
  layout.validate();
  const uint64_t per_block = layout.bytes_per_block();
  const uint64_t blocks = blocks_for_budget(bytes, layout);
  const uint64_t need = blocks_for_tokens(max_seq_len, layout.block_size);
  if (blocks < need || blocks == 0) {
    throw_error(
        "KV cache memory {} holds {} blocks of {} tokens ({} per block, {} per token), but one sequence of "
        "the maximum length {} needs {} blocks ({}); raise the KV cache memory or lower the context length",
        format_bytes(bytes), blocks, layout.block_size, format_bytes(per_block), format_bytes(layout.bytes_per_token()),
        max_seq_len, std::max<uint64_t>(need, 1), format_bytes(std::max<uint64_t>(need, 1) * per_block));
  }
  if (blocks > kMaxBlocks) throw_error("KV cache memory {} is {} blocks, more than the {} supported", format_bytes(bytes), blocks, kMaxBlocks);
  KvConfig c;
  c.block_size = layout.block_size;
  c.num_blocks = static_cast<uint32_t>(blocks);
  c.max_seq_len = max_seq_len;
  return c;
}

KvConfig KvConfig::from_tokens(const KvLayout& layout, uint64_t tokens, uint32_t max_seq_len) {
  layout.validate();
  const uint64_t blocks = blocks_for_tokens(tokens, layout.block_size);
  const uint64_t need = blocks_for_tokens(max_seq_len, layout.block_size);
  if (blocks < need || blocks == 0) {
    throw_error("KV cache of {} tokens ({} blocks of {}) cannot hold one sequence of the maximum length {} "
                "({} blocks); raise the KV cache size or lower the context length",
                tokens, blocks, layout.block_size, max_seq_len, std::max<uint64_t>(need, 1));
  }
  if (blocks > kMaxBlocks) throw_error("KV cache of {} tokens is {} blocks, more than the {} supported", tokens, blocks, kMaxBlocks);
  KvConfig c;
  c.block_size = layout.block_size;
  c.num_blocks = static_cast<uint32_t>(blocks);
  c.max_seq_len = max_seq_len;
  return c;
}

void KvConfig::validate() const {
  if (block_size == 0) throw_error("KV cache: block size must be at least 1 token");
  if (num_blocks == 0) throw_error("KV cache: the pool has no blocks");
  if (num_blocks > kMaxBlocks) throw_error("KV cache: {} blocks, more than the {} supported", num_blocks, kMaxBlocks);
  const uint64_t need = blocks_for_tokens(max_seq_len, block_size);
  if (need > num_blocks) {
    throw_error("KV cache of {} blocks of {} tokens ({} tokens) cannot hold one sequence of the maximum length {} "
                "({} blocks); raise the KV cache size or lower the context length",
                num_blocks, block_size, static_cast<uint64_t>(num_blocks) * block_size, max_seq_len, need);
  }
}

}  // namespace vellum::kv
