#include "kv/kv_manager.h"

#include "core/error.h"

#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>
#include <vector>

using namespace vellum::kv;

namespace {

using V = std::vector<TokenId>;

KvConfig config(uint32_t block_size, uint32_t num_blocks, bool caching = true) {
  KvConfig c;
  c.block_size = block_size;
  c.num_blocks = num_blocks;
  c.enable_prefix_caching = caching;
  c.hash_seed = 1234;
  return c;
}

std::vector<TokenId> seq_tokens(TokenId start, size_t n) {
  std::vector<TokenId> t(n);
  std::iota(t.begin(), t.end(), start);
  return t;
}

std::vector<TokenId> concat(std::vector<TokenId> a, const std::vector<TokenId>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Runs the sequence's forward over everything it may compute now.
SeqProgress compute_all(KvManager& m, SeqId s) {
  SeqProgress p = m.update_progress(s);
  while (p.num_computable_tokens > 0) {
    const uint32_t end = p.num_computed_tokens + p.num_computable_tokens;
    (void)m.slot_mapping(s, p.num_computed_tokens, end);
    p = m.mark_computed(s, end);
  }
  return p;
}

}  // namespace

TEST(KvManager, AllocateWithoutHitsAndSlotMapping) {
  KvManager m(config(4, 8));
  const auto r = m.allocate(1, seq_tokens(0, 10));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->progress, (SeqProgress{0, 0, 10}));
  EXPECT_EQ(r->num_shared_tokens, 0u);
  EXPECT_TRUE(r->copies.empty());
  const auto& t = m.block_table(1);
  ASSERT_EQ(t.blocks.size(), 3u);
  EXPECT_EQ(t.num_tokens, 10u);
  EXPECT_EQ(m.num_free_blocks(), 5u);
  const auto slots = m.slot_mapping(1, 0, 10);
  ASSERT_EQ(slots.size(), 10u);
  for (uint32_t p = 0; p < 10; ++p) EXPECT_EQ(slots[p], int64_t{t.blocks[p / 4]} * 4 + p % 4);
  m.free(1);
  EXPECT_EQ(m.num_free_blocks(), 8u);
  EXPECT_FALSE(m.has_sequence(1));
  m.check_invariants();
}

TEST(KvManager, PrefixHitAfterComputeReusesFullBlocksOnly) {
  KvManager m(config(4, 16));
  const auto P = seq_tokens(100, 10);  // 2 full blocks + 2 tokens
  ASSERT_TRUE(m.allocate(1, concat(P, {1, 2, 3})));
  EXPECT_EQ(compute_all(m, 1), (SeqProgress{13, 0, 0}));
  const auto a_blocks = m.block_table(1).blocks;
  m.free(1);
  EXPECT_EQ(m.stats().blocks_cached_free, 3u);  // 3 full blocks of 13 tokens

  const auto r = m.allocate(2, concat(P, {7, 8, 9}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->progress, (SeqProgress{8, 0, 5}));
  EXPECT_EQ(r->num_shared_tokens, 8u);
  EXPECT_EQ(m.block_table(2).blocks[0], a_blocks[0]);
  EXPECT_EQ(m.block_table(2).blocks[1], a_blocks[1]);
  EXPECT_NE(m.block_table(2).blocks[2], a_blocks[2]);
  const auto st = m.stats();
  EXPECT_EQ(st.prefix_lookups, 2u);
  EXPECT_EQ(st.prefix_query_tokens, 26u);
  EXPECT_EQ(st.prefix_hit_tokens, 8u);
  // Shared blocks are read-only to the new sequence.
  EXPECT_THROW(m.slot_mapping(2, 4, 9), std::logic_error);
  EXPECT_NO_THROW(m.slot_mapping(2, 8, 13));
}

TEST(KvManager, LookupPrefixHasNoSideEffects) {
  KvManager m(config(4, 16));
  const auto P = seq_tokens(0, 12);
  ASSERT_TRUE(m.allocate(1, P));
  compute_all(m, 1);
  m.free(1);
  const auto before = m.stats();
  const auto free_list = m.pool().free_list();
  const auto h = m.lookup_prefix(concat(P, {5}));
  EXPECT_EQ(h.computed_tokens, 12u);
  EXPECT_EQ(h.shared_tokens, 12u);
  EXPECT_EQ(h.pending_tokens, 0u);
  EXPECT_EQ(m.pool().free_list(), free_list);
  EXPECT_EQ(m.stats().prefix_lookups, before.prefix_lookups);
  EXPECT_EQ(m.blocks_needed(concat(P, {5})), 4u);  // 3 revived + 1 new
}

TEST(KvManager, UncomputedBlocksAreNotHitsOnceTheirOwnerIsGone) {
  KvManager m(config(4, 16));
  const auto P = seq_tokens(0, 12);
  ASSERT_TRUE(m.allocate(1, P));
  m.free(1);  // aborted before its prefill ran: its KV is garbage
  EXPECT_EQ(m.stats().blocks_cached, 0u);
  const auto r = m.allocate(2, P);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->progress, (SeqProgress{0, 0, 12}));
}

TEST(KvManager, ConcurrentRequestsSharePendingBlocksAndWait) {
  KvManager m(config(4, 32));
  const auto P = seq_tokens(0, 16);  // 4 blocks
  ASSERT_TRUE(m.allocate(1, concat(P, {50, 51})));
  const auto r = m.allocate(2, concat(P, {60, 61, 62}));
  ASSERT_TRUE(r);
  // B shares A's four prompt blocks, which A has not computed yet: B waits for them.
  EXPECT_EQ(r->progress, (SeqProgress{0, 16, 0}));
  EXPECT_EQ(r->num_shared_tokens, 16u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(m.block_table(2).blocks[i], m.block_table(1).blocks[i]);
    EXPECT_EQ(m.pool().ref_count(m.block_table(1).blocks[i]), 2u);
  }
  EXPECT_EQ(m.stats().prefix_pending_hit_tokens, 16u);
  EXPECT_EQ(m.num_free_blocks(), 32u - 5 - 1);
  EXPECT_THROW(m.slot_mapping(2, 0, 4), std::logic_error);
  EXPECT_THROW(m.mark_computed(2, 4), std::logic_error);

  // A computes a chunk of 6 tokens: one block done, B may take it.
  (void)m.slot_mapping(1, 0, 6);
  EXPECT_EQ(m.mark_computed(1, 6), (SeqProgress{6, 0, 12}));
  EXPECT_EQ(m.update_progress(2), (SeqProgress{4, 12, 0}));
  // A finishes its prompt: B's whole prefix is ready; it computes only its own suffix.
  EXPECT_EQ(m.mark_computed(1, 18), (SeqProgress{18, 0, 0}));
  EXPECT_EQ(m.update_progress(2), (SeqProgress{16, 0, 3}));
  EXPECT_EQ(compute_all(m, 2), (SeqProgress{19, 0, 0}));
  // A third, later request hits all of P as computed.
  const auto r3 = m.allocate(3, concat(P, {70}));
  EXPECT_EQ(r3->progress, (SeqProgress{16, 0, 1}));
  m.check_invariants();
}

TEST(KvManager, PendingBlocksPassToAWaiterWhenTheirOwnerIsFreed) {
  KvManager m(config(4, 32));
  const auto P = seq_tokens(0, 8);
  ASSERT_TRUE(m.allocate(1, concat(P, {1})));
  ASSERT_TRUE(m.allocate(2, concat(P, {2})));
  ASSERT_TRUE(m.allocate(3, concat(P, {3})));
  EXPECT_EQ(m.update_progress(2).num_pending_tokens, 8u);
  m.free(1);  // preempted before computing
  // The first waiter to look claims the orphaned blocks; the other waits for it.
  EXPECT_EQ(m.update_progress(2), (SeqProgress{0, 0, 9}));
  EXPECT_EQ(m.update_progress(3), (SeqProgress{0, 8, 0}));
  EXPECT_EQ(compute_all(m, 2), (SeqProgress{9, 0, 0}));
  EXPECT_EQ(m.update_progress(3), (SeqProgress{8, 0, 1}));
  m.check_invariants();
}

TEST(KvManager, LookupPrefixReportsPendingTokens) {
  KvManager m(config(4, 32));
  const auto P = seq_tokens(0, 8);
  ASSERT_TRUE(m.allocate(1, concat(P, {1})));
  const auto h = m.lookup_prefix(concat(P, {2}));
  EXPECT_EQ(h.computed_tokens, 0u);
  EXPECT_EQ(h.pending_tokens, 8u);
  EXPECT_EQ(h.shared_tokens, 8u);
}

TEST(KvManager, WholePromptHitCopiesTheLastBlockAndRecomputesOneToken) {
  KvManager m(config(4, 16));
  const auto P = seq_tokens(0, 12);  // exactly 3 blocks
  ASSERT_TRUE(m.allocate(1, P));
  compute_all(m, 1);
  const auto a_blocks = m.block_table(1).blocks;
  m.free(1);
  const auto r = m.allocate(2, P);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->progress, (SeqProgress{11, 0, 1}));
  ASSERT_EQ(r->copies.size(), 1u);
  EXPECT_EQ(r->copies[0].src, a_blocks[2]);
  const auto& t = m.block_table(2);
  EXPECT_EQ(r->copies[0].dst, t.blocks[2]);
  EXPECT_EQ(t.blocks[0], a_blocks[0]);
  EXPECT_EQ(t.blocks[1], a_blocks[1]);
  // The source stays reserved until the forward pass that follows the copy.
  EXPECT_EQ(m.pool().ref_count(a_blocks[2]), 1u);
  EXPECT_EQ(m.stats().cow_copies, 1u);
  EXPECT_EQ(m.slot_mapping(2, 11, 12), (std::vector<int64_t>{int64_t{t.blocks[2]} * 4 + 3}));
  EXPECT_EQ(m.mark_computed(2, 12), (SeqProgress{12, 0, 0}));
  EXPECT_TRUE(m.pool().is_free(a_blocks[2]));
  EXPECT_TRUE(m.prefix_cache().contains(a_blocks[2]));  // still a hit for the next one
  m.free(2);
  m.check_invariants();
}

TEST(KvManager, WholePromptHitOnPendingBlocksComputesTheLastBlockItself) {
  KvManager m(config(4, 16));
  const auto P = seq_tokens(0, 12);
  ASSERT_TRUE(m.allocate(1, P));
  const auto r = m.allocate(2, P);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->copies.empty());
  EXPECT_EQ(r->progress, (SeqProgress{0, 8, 0}));
  EXPECT_NE(m.block_table(2).blocks[2], m.block_table(1).blocks[2]);
  compute_all(m, 1);
  EXPECT_EQ(compute_all(m, 2), (SeqProgress{12, 0, 0}));
}

TEST(KvManager, WholePromptHitWithoutRoomForTheCopyFallsBackToRecomputingTheBlock) {
  KvManager m(config(4, 3));
  const auto P = seq_tokens(0, 12);
  ASSERT_TRUE(m.allocate(1, P));
  compute_all(m, 1);
  m.free(1);
  EXPECT_EQ(m.blocks_needed(P), 3u);
  const auto r = m.allocate(2, P);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->copies.empty());
  EXPECT_EQ(r->progress, (SeqProgress{8, 0, 4}));
}

TEST(KvManager, ForkSharesEverythingAndCopiesTheTailOnce) {
  KvManager m(config(4, 16));
  ASSERT_TRUE(m.allocate(1, seq_tokens(0, 10)));
  EXPECT_THROW(m.fork(1, 2), std::logic_error);  // not computed yet
  compute_all(m, 1);
  const uint32_t used_before = m.stats().blocks_used;
  m.fork(1, 2);
  m.fork(1, 3);
  EXPECT_EQ(m.stats().blocks_used, used_before);  // n = 3 branches, one copy of the prompt
  for (BlockId b : m.block_table(1).blocks) EXPECT_EQ(m.pool().ref_count(b), 3u);
  const BlockId tail = m.block_table(1).blocks[2];

  const std::vector<TokenId> t1{900}, t2{901}, t3{902};
  auto c2 = m.append(2, t2);
  ASSERT_TRUE(c2);
  ASSERT_EQ(c2->size(), 1u);
  EXPECT_EQ((*c2)[0].src, tail);
  EXPECT_EQ((*c2)[0].dst, m.block_table(2).blocks[2]);
  auto c3 = m.append(3, t3);
  ASSERT_EQ(c3->size(), 1u);
  // The last branch still holding the tail writes into it: no copy.
  auto c1 = m.append(1, t1);
  EXPECT_TRUE(c1->empty());
  EXPECT_EQ(m.block_table(1).blocks[2], tail);
  EXPECT_EQ(m.stats().cow_copies, 2u);
  for (SeqId s : {1, 2, 3}) {
    EXPECT_EQ(m.num_tokens(s), 11u);
    EXPECT_NO_THROW(m.slot_mapping(s, 10, 11));
    EXPECT_EQ(m.mark_computed(s, 11), (SeqProgress{11, 0, 0}));
  }
  for (SeqId s : {1, 2, 3}) m.free(s);
  EXPECT_EQ(m.num_free_blocks(), 16u);
  m.check_invariants();
}

TEST(KvManager, AppendRegistersBlocksAsTheyFill) {
  KvManager m(config(4, 16));
  ASSERT_TRUE(m.allocate(1, seq_tokens(0, 3)));
  compute_all(m, 1);
  std::vector<TokenId> all = seq_tokens(0, 3);
  for (TokenId t = 3; t < 9; ++t) {  // decode one token at a time
    ASSERT_TRUE(m.append(1, std::vector<TokenId>{t}));
    all.push_back(t);
    m.slot_mapping(1, t, t + 1);
    m.mark_computed(1, t + 1);
  }
  EXPECT_EQ(m.stats().blocks_cached, 2u);  // blocks [0,4) and [4,8); [8,9) is partial
  const auto h = m.lookup_prefix(concat(all, {77}));
  EXPECT_EQ(h.computed_tokens, 8u);
  EXPECT_EQ(m.append(1, std::vector<TokenId>{}).value().size(), 0u);
}

TEST(KvManager, AppendOfManyTokensAtOnce) {
  KvManager m(config(4, 16));
  ASSERT_TRUE(m.allocate(1, seq_tokens(0, 2)));
  compute_all(m, 1);
  EXPECT_EQ(m.blocks_needed_to_append(1, 11), 3u);
  ASSERT_TRUE(m.append(1, seq_tokens(2, 11)));
  EXPECT_EQ(m.block_table(1).blocks.size(), 4u);
  EXPECT_EQ(m.update_progress(1), (SeqProgress{2, 0, 11}));
}

TEST(KvManager, FailedOperationsChangeNothing) {
  KvManager m(config(4, 4));
  ASSERT_TRUE(m.allocate(1, seq_tokens(0, 8)));
  compute_all(m, 1);
  ASSERT_TRUE(m.allocate(2, seq_tokens(100, 7)));
  const auto st = m.stats();
  const auto fl = m.pool().free_list();
  EXPECT_FALSE(m.can_allocate(seq_tokens(200, 1)));
  EXPECT_FALSE(m.allocate(3, seq_tokens(200, 1)));
  EXPECT_FALSE(m.has_sequence(3));
  ASSERT_TRUE(m.append(2, seq_tokens(107, 1)));  // fills block 2 of seq 2: no new block
  EXPECT_FALSE(m.can_append(2, 1));
  EXPECT_FALSE(m.append(2, seq_tokens(108, 1)));
  EXPECT_EQ(m.num_tokens(2), 8u);
  EXPECT_EQ(m.stats().blocks_used, st.blocks_used);
  EXPECT_EQ(m.pool().free_list(), fl);
  m.check_invariants();
}

TEST(KvManager, MisuseThrowsAndChangesNothing) {
  KvManager m(config(4, 8));
  ASSERT_TRUE(m.allocate(1, seq_tokens(0, 5)));
  EXPECT_THROW(m.allocate(1, seq_tokens(0, 5)), std::logic_error);
  EXPECT_THROW(m.mark_computed(1, 6), std::logic_error);
  EXPECT_THROW(m.free(9), std::logic_error);
  EXPECT_THROW(m.append(9, seq_tokens(0, 1)), std::logic_error);
  EXPECT_THROW(m.fork(9, 10), std::logic_error);
  EXPECT_THROW(m.fork(1, 1), std::logic_error);
  EXPECT_THROW(m.block_table(9), std::logic_error);
  EXPECT_THROW(m.slot_mapping(1, 3, 6), std::logic_error);
  m.mark_computed(1, 2);
  EXPECT_THROW(m.slot_mapping(1, 1, 3), std::logic_error);  // already computed
  EXPECT_THROW(m.mark_computed(1, 1), std::logic_error);    // backwards
  EXPECT_EQ(m.num_computed_tokens(1), 2u);
  m.check_invariants();
}

TEST(KvManager, EvictionIsLruAndDeepestBlocksFirst) {
  KvManager m(config(2, 6));
  // Blocks 4 and 5 are never used: they are reused before anything cached.
  ASSERT_TRUE(m.allocate(1, V{1, 2, 3, 4}));
  compute_all(m, 1);
  const auto a = m.block_table(1).blocks;
  ASSERT_TRUE(m.allocate(2, V{5, 6, 7, 8}));
  compute_all(m, 2);
  const auto b = m.block_table(2).blocks;
  m.free(1);
  m.free(2);
  EXPECT_EQ(m.pool().free_list(), (std::vector<BlockId>{4, 5, a[1], a[0], b[1], b[0]}));
  ASSERT_TRUE(m.allocate(3, V{9, 9, 9, 9}));  // takes 4 and 5: no eviction
  EXPECT_EQ(m.stats().evictions, 0u);
  ASSERT_TRUE(m.allocate(4, V{8, 8}));  // evicts A's deepest block
  EXPECT_EQ(m.block_table(4).blocks[0], a[1]);
  EXPECT_EQ(m.stats().evictions, 1u);
  EXPECT_EQ(m.lookup_prefix(V{1, 2, 3, 4, 0}).computed_tokens, 2u);  // A's first block survives
  EXPECT_EQ(m.lookup_prefix(V{5, 6, 7, 8, 0}).computed_tokens, 4u);
}

TEST(KvManager, AHitRefreshesRecency) {
  KvManager m(config(2, 4));
  ASSERT_TRUE(m.allocate(1, V{1, 2}));
  compute_all(m, 1);
  ASSERT_TRUE(m.allocate(2, V{3, 4}));
  compute_all(m, 2);
  m.free(1);
  m.free(2);
  ASSERT_TRUE(m.allocate(3, V{1, 2, 0}));  // hit on A's block: A's block becomes most recent
  compute_all(m, 3);
  m.free(3);
  ASSERT_TRUE(m.allocate(4, V{7, 7, 7, 7, 7, 7}));  // needs 3: the 2 never-cached ones, then B's
  EXPECT_EQ(m.lookup_prefix(V{3, 4, 0}).computed_tokens, 0u);
  EXPECT_EQ(m.lookup_prefix(V{1, 2, 0}).computed_tokens, 2u);
}

TEST(KvManager, ExtraKeySeparatesCaches) {
  KvManager m(config(4, 16));
  const auto P = seq_tokens(0, 8);
  ASSERT_TRUE(m.allocate(1, concat(P, {1}), /*adapter*/ 7));
  compute_all(m, 1);
  EXPECT_EQ(m.lookup_prefix(concat(P, {2}), 7).computed_tokens, 8u);
  EXPECT_EQ(m.lookup_prefix(concat(P, {2}), 0).computed_tokens, 0u);
  EXPECT_EQ(m.lookup_prefix(concat(P, {2}), 8).computed_tokens, 0u);
}

TEST(KvManager, HashCollisionsAreMissesNeverWrongHits) {
  KvConfig c = config(2, 16);
  // Every block of a chain position hashes alike whatever its tokens.
  c.hash_fn = [](const BlockHash& parent, std::span<const TokenId>, uint64_t, uint64_t) {
    return BlockHash{parent.lo + 1, parent.hi};
  };
  KvManager m(c);
  ASSERT_TRUE(m.allocate(1, V{1, 2, 3, 4, 5}));
  compute_all(m, 1);
  const auto r = m.allocate(2, V{1, 2, 9, 9, 5});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->progress.num_computed_tokens, 2u);  // first block matches, second collides
  EXPECT_EQ(m.stats().hash_collisions, 1u);
  const auto r3 = m.allocate(3, V{7, 7, 3, 4, 5});
  EXPECT_EQ(r3->progress.num_computed_tokens, 0u);
  EXPECT_EQ(m.stats().hash_collisions, 2u);
  m.check_invariants();
}

TEST(KvManager, PrefixCachingOff) {
  KvManager m(config(4, 16, /*caching*/ false));
  const auto P = seq_tokens(0, 12);
  ASSERT_TRUE(m.allocate(1, concat(P, {1})));
  ASSERT_TRUE(m.allocate(2, concat(P, {2})));
  EXPECT_EQ(m.update_progress(2), (SeqProgress{0, 0, 13}));
  compute_all(m, 1);
  m.free(1);
  const auto r = m.allocate(3, concat(P, {3}));
  EXPECT_EQ(r->progress, (SeqProgress{0, 0, 13}));
  EXPECT_EQ(m.stats().blocks_cached, 0u);
  EXPECT_EQ(m.stats().prefix_lookups, 0u);
  m.check_invariants();
}

TEST(KvManager, WatermarkIsTheAdmissionRule) {
  KvConfig c = config(4, 8);
  c.watermark_blocks = 2;
  KvManager m(c);
  EXPECT_TRUE(m.can_allocate(seq_tokens(0, 24)));   // 6 blocks + 2 free
  EXPECT_FALSE(m.can_allocate(seq_tokens(0, 25)));  // 7 blocks
  EXPECT_TRUE(m.allocate(1, seq_tokens(0, 25)));    // allocate itself only needs the blocks
}

TEST(KvManager, StatsAndFormat) {
  KvManager m(config(4, 16));
  const auto P = seq_tokens(0, 8);
  ASSERT_TRUE(m.allocate(1, concat(P, {1})));
  compute_all(m, 1);
  m.free(1);
  ASSERT_TRUE(m.allocate(2, concat(P, {2})));
  const auto s = m.stats();
  EXPECT_EQ(s.blocks_total, 16u);
  EXPECT_EQ(s.blocks_used, 3u);
  EXPECT_EQ(s.blocks_free, 13u);
  EXPECT_EQ(s.blocks_cached_free, 0u);
  EXPECT_EQ(s.blocks_cached, 2u);
  EXPECT_EQ(s.num_sequences, 1u);
  EXPECT_EQ(s.prefix_hit_tokens, 8u);
  EXPECT_EQ(s.prefix_query_tokens, 18u);
  const std::string line = m.format_stats();
  EXPECT_NE(line.find("blocks 16 used 3 free 13"), std::string::npos) << line;
  EXPECT_NE(line.find("8/18 tokens hit (44.4%)"), std::string::npos) << line;
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(KvManager, CheckInvariantsDetectsCorruptionThroughTheApiOnly) {
  // The checker accepts every state the API produces; spot-check a busy one.
  KvManager m(config(2, 12));
  ASSERT_TRUE(m.allocate(1, V{1, 2, 3, 4, 5}));
  ASSERT_TRUE(m.allocate(2, V{1, 2, 3, 4, 6}));
  compute_all(m, 1);
  compute_all(m, 2);
  m.fork(2, 3);
  ASSERT_TRUE(m.append(3, std::vector<TokenId>{7}));
  EXPECT_NO_THROW(m.check_invariants());
}

TEST(KvManager, WholePromptHitBehindAPendingBlockWaitsInsteadOfCopying) {
  // Regression (found by the property test): a whole-prompt hit whose last block is computed but an
  // earlier one pending must not claim n - 1 computed tokens.
  KvManager m(config(1, 16));
  ASSERT_TRUE(m.allocate(1, V{5}));  // X: [5] pending
  const auto s = m.allocate(2, V{5});  // S: whole hit on a pending block -> private duplicate
  EXPECT_EQ(s->progress, (SeqProgress{0, 0, 1}));
  compute_all(m, 2);
  ASSERT_TRUE(m.append(2, V{6}));
  compute_all(m, 2);  // S's [5, 6] block is cached and computed; its [5] block is a private duplicate
  m.free(1);          // X never computed [5]: dropped
  ASSERT_TRUE(m.allocate(3, V{5}));  // Y: [5] pending again
  const auto z = m.allocate(4, V{5, 6});
  ASSERT_TRUE(z);
  EXPECT_TRUE(z->copies.empty());
  EXPECT_EQ(z->progress, (SeqProgress{0, 1, 0}));  // waits for Y's [5], computes its own [6]
  compute_all(m, 3);
  EXPECT_EQ(compute_all(m, 4), (SeqProgress{2, 0, 0}));
  m.check_invariants();
}
