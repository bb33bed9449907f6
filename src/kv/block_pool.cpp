#include "kv/block_pool.h"

#include <fmt/format.h>

#include <stdexcept>

namespace vellum::kv {

BlockPool::BlockPool(uint32_t num_blocks)
    : ref_(num_blocks, 0), prev_(num_blocks + 1), next_(num_blocks + 1) {
  const auto sentinel = static_cast<BlockId>(num_blocks);
  prev_[num_blocks] = next_[num_blocks] = sentinel;
  // Initially every block is free, in id order (block 0 is handed out first).
  for (uint32_t b = 0; b < num_blocks; ++b) link(static_cast<BlockId>(b), FreeAt::kTail);
}

void BlockPool::link(BlockId b, FreeAt where) {
  const auto s = static_cast<BlockId>(ref_.size());
  const BlockId before = where == FreeAt::kTail ? prev_[s] : s;
  const BlockId after = next_[before];
  prev_[b] = before;
  next_[b] = after;
  next_[before] = b;
  prev_[after] = b;
  ++num_free_;
}

void BlockPool::unlink(BlockId b) {
  next_[prev_[b]] = next_[b];
  prev_[next_[b]] = prev_[b];
  prev_[b] = next_[b] = kNoBlock;
  --num_free_;
}

BlockId BlockPool::pop_free() {
  if (num_free_ == 0) throw std::logic_error("BlockPool::pop_free: no free block");
  const BlockId b = next_[ref_.size()];
  unlink(b);
  ref_[b] = 1;
  return b;
}

void BlockPool::acquire(BlockId b) {
  if (ref_[b]++ == 0) unlink(b);
}

bool BlockPool::release(BlockId b, FreeAt where) {
  if (ref_[b] == 0) throw std::logic_error(fmt::format("BlockPool::release: block {} is already free", b));
  if (--ref_[b] > 0) return false;
  link(b, where);
  return true;
}

std::vector<BlockId> BlockPool::free_list() const {
  std::vector<BlockId> out;
  out.reserve(num_free_);
  const auto s = static_cast<BlockId>(ref_.size());
  for (BlockId b = next_[s]; b != s && out.size() <= ref_.size(); b = next_[b]) out.push_back(b);
  return out;
}

void BlockPool::check_invariants() const {
  auto fail = [](const std::string& what) { throw std::logic_error("BlockPool invariant: " + what); };
  const auto n = static_cast<BlockId>(ref_.size());
  std::vector<char> seen(ref_.size(), 0);
  uint32_t count = 0;
  BlockId prev = n;
  for (BlockId b = next_[n]; b != n; b = next_[b]) {
    if (b < 0 || b >= n) fail(fmt::format("free list holds invalid id {}", b));
    if (seen[b]) fail(fmt::format("block {} is twice in the free list", b));
    if (prev_[b] != prev) fail(fmt::format("free list back link of block {} is broken", b));
    if (ref_[b] != 0) fail(fmt::format("block {} is in the free list with {} references", b, ref_[b]));
    seen[b] = 1;
    prev = b;
    ++count;
  }
  if (prev_[n] != prev) fail("free list tail link is broken");
  if (count != num_free_) fail(fmt::format("free count {} but {} blocks in the free list", num_free_, count));
  for (BlockId b = 0; b < n; ++b) {
    if (ref_[b] == 0 && !seen[b]) fail(fmt::format("block {} has no references but is not in the free list", b));
  }
}

}  // namespace vellum::kv
