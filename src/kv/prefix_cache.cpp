#include "kv/prefix_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace vellum::kv {

PrefixCache::PrefixCache(uint32_t num_blocks, uint32_t block_size)
    : block_size_(block_size), entries_(num_blocks), tokens_(static_cast<size_t>(num_blocks) * block_size) {
  map_.reserve(num_blocks);
}

std::span<const TokenId> PrefixCache::tokens(BlockId block) const {
  return std::span<const TokenId>(tokens_).subspan(static_cast<size_t>(block) * block_size_, block_size_);
}

PrefixCache::FindResult PrefixCache::find(const BlockHash& hash, const BlockHash& parent,
                                          std::span<const TokenId> tokens, uint64_t extra_key) const {
  const auto it = map_.find(hash);
  if (it == map_.end()) return {};
  const BlockId b = it->second;
  const auto stored = this->tokens(b);
  if (entries_[b].extra_key != extra_key || entries_[b].parent != parent || tokens.size() != stored.size() ||
      !std::equal(tokens.begin(), tokens.end(), stored.begin())) {
    return FindResult{kNoBlock, true};
  }
  return FindResult{b, false};
}

bool PrefixCache::insert(BlockId block, const BlockHash& hash, const BlockHash& parent,
                         std::span<const TokenId> tokens, uint64_t extra_key, bool computed, SeqId owner) {
  if (tokens.size() != block_size_) throw std::logic_error("PrefixCache::insert: only full blocks are cached");
  Entry& e = entries_[block];
  if (e.cached) throw std::logic_error(fmt::format("PrefixCache::insert: block {} is already cached", block));
  if (!map_.try_emplace(hash, block).second) return false;
  e = Entry{true, computed, computed ? kNoSeq : owner, hash, parent, extra_key};
  std::copy(tokens.begin(), tokens.end(), tokens_.begin() + static_cast<ptrdiff_t>(block) * block_size_);
  return true;
}

void PrefixCache::erase(BlockId block) {
  Entry& e = entries_[block];
  if (!e.cached) return;
  map_.erase(e.hash);
  e = Entry{};
}

void PrefixCache::mark_computed(BlockId block) {
  Entry& e = entries_[block];
  e.computed = true;
  e.owner = kNoSeq;
}

void PrefixCache::set_owner(BlockId block, SeqId owner) { entries_[block].owner = owner; }

}  // namespace vellum::kv
