#include "kv/block_hash.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

using namespace vellum::kv;

TEST(KvBlockHash, DeterministicForSameInputs) {
  const std::vector<TokenId> t{1, 2, 3, 4};
  EXPECT_EQ(hash_block(kRootBlockHash, t, 0, 7), hash_block(kRootBlockHash, t, 0, 7));
}

TEST(KvBlockHash, EveryInputChangesTheHash) {
  const std::vector<TokenId> t{1, 2, 3, 4};
  const BlockHash base = hash_block(kRootBlockHash, t, 0, 7);
  const std::vector<TokenId> t2{1, 2, 3, 5};
  EXPECT_NE(base, hash_block(kRootBlockHash, t2, 0, 7));                   // tokens
  EXPECT_NE(base, hash_block(kRootBlockHash, t, 1, 7));                    // extra key (adapter)
  EXPECT_NE(base, hash_block(kRootBlockHash, t, 0, 8));                    // seed
  EXPECT_NE(base, hash_block(BlockHash{1, 0}, t, 0, 7));                   // parent, low half
  EXPECT_NE(base, hash_block(BlockHash{0, 1}, t, 0, 7));                   // parent, high half
  const std::vector<TokenId> t3{1, 2, 3};
  EXPECT_NE(hash_block(kRootBlockHash, t3, 0, 7), hash_block(kRootBlockHash, t, 0, 7));  // length
}

TEST(KvBlockHash, ChainCoversTheWholePrefix) {
  // Same second block after different first blocks: different hashes.
  const std::vector<TokenId> a{1, 2, 9, 9}, b{3, 4, 9, 9};
  const auto ha = hash_full_blocks(a, 2, 0, 1);
  const auto hb = hash_full_blocks(b, 2, 0, 1);
  ASSERT_EQ(ha.size(), 2u);
  ASSERT_EQ(hb.size(), 2u);
  EXPECT_NE(ha[1], hb[1]);
  EXPECT_EQ(ha[1], hash_block(ha[0], std::vector<TokenId>{9, 9}, 0, 1));
}

TEST(KvBlockHash, OnlyFullBlocksAreHashed) {
  const std::vector<TokenId> t{1, 2, 3, 4, 5};
  EXPECT_EQ(hash_full_blocks(t, 2, 0, 0).size(), 2u);
  EXPECT_EQ(hash_full_blocks(t, 8, 0, 0).size(), 0u);
  EXPECT_EQ(hash_full_blocks(t, 5, 0, 0).size(), 1u);
}

TEST(KvBlockHash, LongBlocksUseTheHeapPathConsistently) {
  std::vector<TokenId> t(1000);
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<TokenId>(i * 31);
  const BlockHash h = hash_block(kRootBlockHash, t, 3, 5);
  EXPECT_EQ(h, hash_block(kRootBlockHash, t, 3, 5));
  t[999] ^= 1;
  EXPECT_NE(h, hash_block(kRootBlockHash, t, 3, 5));
}

TEST(KvBlockHash, NoCollisionsAmongManySmallBlocks) {
  std::set<std::pair<uint64_t, uint64_t>> seen;
  for (TokenId a = 0; a < 200; ++a) {
    for (TokenId b = 0; b < 200; ++b) {
      const std::vector<TokenId> t{a, b};
      const BlockHash h = hash_block(kRootBlockHash, t, 0, 0);
      EXPECT_TRUE(seen.insert({h.lo, h.hi}).second);
    }
  }
}
