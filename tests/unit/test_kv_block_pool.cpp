#include "kv/block_pool.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

using namespace vellum::kv;
using FreeAt = BlockPool::FreeAt;

TEST(KvBlockPool, StartsAllFreeInIdOrder) {
  BlockPool pool(4);
  EXPECT_EQ(pool.num_blocks(), 4u);
  EXPECT_EQ(pool.num_free(), 4u);
  EXPECT_EQ(pool.free_list(), (std::vector<BlockId>{0, 1, 2, 3}));
  EXPECT_NO_THROW(pool.check_invariants());
}

TEST(KvBlockPool, PopTakesTheLeastRecentlyUsed) {
  BlockPool pool(4);
  EXPECT_EQ(pool.pop_free(), 0);
  EXPECT_EQ(pool.pop_free(), 1);
  EXPECT_EQ(pool.ref_count(0), 1u);
  EXPECT_EQ(pool.num_free(), 2u);
  pool.check_invariants();
}

TEST(KvBlockPool, ReleaseToTailKeepsLongestAndHeadIsReusedFirst) {
  BlockPool pool(4);
  for (int i = 0; i < 4; ++i) pool.pop_free();
  EXPECT_TRUE(pool.release(2, FreeAt::kTail));
  EXPECT_TRUE(pool.release(0, FreeAt::kTail));
  EXPECT_TRUE(pool.release(3, FreeAt::kHead));
  EXPECT_EQ(pool.free_list(), (std::vector<BlockId>{3, 2, 0}));
  EXPECT_EQ(pool.pop_free(), 3);
  EXPECT_EQ(pool.pop_free(), 2);
  pool.check_invariants();
}

TEST(KvBlockPool, ReferenceCounting) {
  BlockPool pool(2);
  const BlockId b = pool.pop_free();
  pool.acquire(b);
  EXPECT_EQ(pool.ref_count(b), 2u);
  EXPECT_FALSE(pool.release(b, FreeAt::kTail));
  EXPECT_FALSE(pool.is_free(b));
  EXPECT_TRUE(pool.release(b, FreeAt::kTail));
  EXPECT_TRUE(pool.is_free(b));
  EXPECT_THROW(pool.release(b, FreeAt::kTail), std::logic_error);
  pool.check_invariants();
}

TEST(KvBlockPool, AcquireRevivesAFreeBlockFromTheMiddle) {
  BlockPool pool(3);
  pool.acquire(1);  // a prefix hit on a cached free block
  EXPECT_EQ(pool.free_list(), (std::vector<BlockId>{0, 2}));
  EXPECT_EQ(pool.num_free(), 2u);
  pool.check_invariants();
}

TEST(KvBlockPool, PopOnEmptyThrows) {
  BlockPool pool(1);
  pool.pop_free();
  EXPECT_THROW(pool.pop_free(), std::logic_error);
}
