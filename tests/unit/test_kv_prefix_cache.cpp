#include "kv/prefix_cache.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

using namespace vellum::kv;

TEST(KvPrefixCache, InsertFindErase) {
  PrefixCache cache(4, 2);
  const std::vector<TokenId> t{5, 6};
  const BlockHash h = hash_block(kRootBlockHash, t, 0, 0);
  EXPECT_EQ(cache.find(h, kRootBlockHash, t, 0).block, kNoBlock);
  EXPECT_TRUE(cache.insert(3, h, kRootBlockHash, t, 0, false, 42));
  EXPECT_TRUE(cache.contains(3));
  EXPECT_EQ(cache.entry(3).owner, 42u);
  EXPECT_FALSE(cache.entry(3).computed);
  EXPECT_EQ(cache.find(h, kRootBlockHash, t, 0).block, 3);
  cache.mark_computed(3);
  EXPECT_TRUE(cache.entry(3).computed);
  EXPECT_EQ(cache.entry(3).owner, kNoSeq);
  cache.erase(3);
  EXPECT_FALSE(cache.contains(3));
  EXPECT_EQ(cache.find(h, kRootBlockHash, t, 0).block, kNoBlock);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(KvPrefixCache, HashMatchWithOtherContentIsACollisionNotAHit) {
  PrefixCache cache(4, 2);
  const std::vector<TokenId> stored{5, 6}, other{7, 8};
  const BlockHash h{123, 456};  // pretend both contents hash alike
  ASSERT_TRUE(cache.insert(0, h, kRootBlockHash, stored, 0, true, kNoSeq));
  const auto r = cache.find(h, kRootBlockHash, other, 0);
  EXPECT_EQ(r.block, kNoBlock);
  EXPECT_TRUE(r.collision);
  const auto r2 = cache.find(h, kRootBlockHash, stored, 1);  // same tokens, other adapter
  EXPECT_EQ(r2.block, kNoBlock);
  EXPECT_TRUE(r2.collision);
  EXPECT_EQ(cache.find(h, kRootBlockHash, stored, 0).block, 0);
  const auto r3 = cache.find(h, BlockHash{9, 9}, stored, 0);  // same block after another prefix
  EXPECT_EQ(r3.block, kNoBlock);
  EXPECT_TRUE(r3.collision);
}

TEST(KvPrefixCache, TakenHashIsNotReplaced) {
  PrefixCache cache(4, 2);
  const std::vector<TokenId> t{1, 2};
  const BlockHash h = hash_block(kRootBlockHash, t, 0, 0);
  ASSERT_TRUE(cache.insert(0, h, kRootBlockHash, t, 0, true, kNoSeq));
  EXPECT_FALSE(cache.insert(1, h, kRootBlockHash, t, 0, true, kNoSeq));
  EXPECT_FALSE(cache.contains(1));
  EXPECT_EQ(cache.find(h, kRootBlockHash, t, 0).block, 0);
}

TEST(KvPrefixCache, OnlyFullBlocks) {
  PrefixCache cache(4, 2);
  const std::vector<TokenId> t{1};
  EXPECT_THROW(cache.insert(0, BlockHash{1, 1}, kRootBlockHash, t, 0, true, kNoSeq), std::logic_error);
}
