// The engine core on the real stories260K model: automatic prefix sharing across later and
// concurrent requests (counted tokens), outputs identical with caching on and off, preemption and
// recompute, aborts, batch invariance across token budgets and block sizes.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "core/error.h"
#include "test_engine_harness.h"

namespace vellum::engine {
namespace {

using namespace test;

std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST_F(EngineCoreTest, LaterRequestComputesOnlyItsSuffix) {
  const auto P = tokens(64, 1);  // 4 blocks of 16
  const auto A = std::vector<int32_t>{7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  const auto B = std::vector<int32_t>{20, 21, 22, 23, 24, 25, 26, 27, 28, 29};
  Harness h(config());
  h.core.add_request(greedy(concat(P, A)));
  h.run_to_end();
  const uint64_t before = h.core.total_computed_tokens();
  const RequestId b = h.core.add_request(greedy(concat(P, B)));
  h.core.step();
  EXPECT_EQ(h.core.last_step().scheduled_tokens, 10u) << "P+B's prompt step must compute only B";
  h.run_to_end();
  EXPECT_EQ(h.core.total_computed_tokens() - before, 10u + 7u) << "B, then 7 decode steps";

  Harness off(config(2048, 16, false));
  const RequestId b2 = off.core.add_request(greedy(concat(P, B)));
  off.run_to_end();
  EXPECT_EQ(off.finished[b2].cached_tokens, 0u);
  // outputs[b] lacks the first token (consumed by the step above): compare the full runs instead
  Harness on(config());
  on.core.add_request(greedy(concat(P, A)));
  on.run_to_end();
  const RequestId b3 = on.core.add_request(greedy(concat(P, B)));
  on.run_to_end();
  EXPECT_EQ(on.finished[b3].cached_tokens, 64u);
  EXPECT_EQ(on.outputs[b3], off.outputs[b2]) << "prefix caching changed the output";
  EXPECT_EQ(on.outputs[b3].size(), 8u);
  (void)b;
}

TEST_F(EngineCoreTest, ConcurrentRequestsShareThePrefixInTheSameStep) {
  const auto P = tokens(64, 2);
  Harness h(config());
  const RequestId a = h.core.add_request(greedy(concat(P, {7, 8, 9, 10, 11, 12, 13, 14, 15, 16})));
  const RequestId b = h.core.add_request(greedy(concat(P, {20, 21, 22, 23, 24, 25, 26, 27, 28, 29})));
  h.core.step();
  EXPECT_EQ(h.core.last_step().scheduled_tokens, 74u) << "B must wait for P, not compute its own copy";
  h.run_to_end();
  // P once, A and B once each, then 7 decode steps each.
  EXPECT_EQ(h.core.total_computed_tokens(), 64u + 10u + 10u + 2 * 7u);
  EXPECT_EQ(h.finished[b].cached_tokens, 64u);

  Harness alone(config(2048, 16, false));
  const RequestId b2 = alone.core.add_request(greedy(concat(P, {20, 21, 22, 23, 24, 25, 26, 27, 28, 29})));
  alone.run_to_end();
  EXPECT_EQ(h.outputs[b], alone.outputs[b2]);
  (void)a;
}

// Each request's tokens are the same whatever else runs, the budget, block size and caching.
TEST_F(EngineCoreTest, OutputsAreBatchInvariant) {
  std::vector<Request> requests;
  for (int i = 0; i < 6; ++i) {
    Request r = greedy(tokens(20 + 13 * i, i % 3), 12);
    if (i % 2) {
      r.sampling.temperature = 0.9f;
      r.sampling.seed = 100 + static_cast<uint64_t>(i);
    }
    requests.push_back(r);
  }
  std::vector<std::vector<int32_t>> alone;
  for (const auto& r : requests) {
    alone.push_back(run_alone(config(), r));
    ASSERT_EQ(alone.back().size(), 12u);
  }
  for (const uint32_t budget : {16u, 64u, 2048u}) {
    for (const uint32_t bs : {16u, 32u}) {
      for (const bool caching : {true, false}) {
        Harness h(config(budget, bs, caching));
        std::vector<RequestId> ids;
        for (const auto& r : requests) ids.push_back(h.core.add_request(r));
        h.run_to_end();
        for (size_t i = 0; i < ids.size(); ++i) {
          EXPECT_EQ(h.outputs[ids[i]], alone[i]) << "request " << i << " budget " << budget << " block " << bs
                                                 << " caching " << caching;
        }
        EXPECT_EQ(h.core.kv().num_sequences(), 0u);
      }
    }
  }
}

// A mixed set (greedy, seeded, penalised, logprobs) submitted in several orders and with staggered
// arrivals gives each request the tokens it gets alone.
TEST_F(EngineCoreTest, OutputsDoNotDependOnArrivalOrder) {
  std::vector<Request> requests;
  for (int i = 0; i < 6; ++i) {
    Request r = greedy(tokens(18 + 11 * i, 20 + i), 12);
    if (i % 2) {
      r.sampling.temperature = 1.0f;
      r.sampling.seed = 7 + static_cast<uint64_t>(i);
    }
    if (i % 3 == 2) {
      r.sampling.repetition_penalty = 1.3f;
      r.sampling.frequency_penalty = 0.5f;
      r.sampling.presence_penalty = 0.25f;
      r.logprobs = 3;
    }
    requests.push_back(r);
  }
  std::vector<std::vector<int32_t>> alone;
  for (const auto& r : requests) {
    alone.push_back(run_alone(config(), r));
    ASSERT_EQ(alone.back().size(), 12u);
  }
  const std::vector<std::vector<size_t>> orders{{0, 1, 2, 3, 4, 5}, {5, 4, 3, 2, 1, 0}, {2, 5, 0, 3, 1, 4}, {3, 0, 4, 1, 5, 2}};
  for (const auto& order : orders) {
    for (const int stagger : {0, 1, 3}) {  // steps between two arrivals (0: all at once)
      for (const uint32_t budget : {16u, 64u}) {
        Harness h(config(budget));
        std::map<size_t, RequestId> ids;
        size_t next = 0;
        for (int step = 0; next < order.size() || h.core.has_work(); ++step) {
          ASSERT_LT(step, 10000);
          while (next < order.size() && (stagger == 0 || step % stagger == 0)) {
            ids[order[next]] = h.core.add_request(requests[order[next]]);
            ++next;
            if (stagger != 0) break;
          }
          h.collect(h.core.step());
        }
        for (const auto& [i, id] : ids) {
          EXPECT_EQ(h.outputs[id], alone[i]) << "request " << i << " order starting " << order[0] << " stagger "
                                             << stagger << " budget " << budget;
        }
        EXPECT_EQ(h.core.kv().num_free_blocks(), h.core.kv().num_blocks());
      }
    }
  }
}

TEST_F(EngineCoreTest, PreemptionRecomputesToTheSameTokens) {
  std::vector<Request> requests;
  for (int i = 0; i < 4; ++i) requests.push_back(greedy(tokens(40, 10 + i), 40));
  std::vector<std::vector<int32_t>> alone;
  for (const auto& r : requests) alone.push_back(run_alone(config(), r));
  // 4 sequences of up to 80 tokens need 4 × 5 blocks of 16; 12 blocks force preemptions.
  EngineConfig small = config(2048, 16, true, 12);
  small.max_seq_len = 128;  // the pool must hold one sequence of the maximum length (8 blocks)
  Harness h(small);
  std::vector<RequestId> ids;
  for (const auto& r : requests) ids.push_back(h.core.add_request(r));
  uint32_t preempted = 0;
  while (h.core.has_work()) {
    for (auto& u : h.core.step()) {
      h.outputs[u.id].insert(h.outputs[u.id].end(), u.new_tokens.begin(), u.new_tokens.end());
    }
    preempted += h.core.last_step().preempted;
  }
  EXPECT_GT(preempted, 0u) << "the pool was meant to be too small";
  EXPECT_EQ(h.core.stats().preemptions, preempted);
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(h.outputs[ids[i]], alone[i]) << i;
  EXPECT_EQ(h.core.kv().num_sequences(), 0u);
  EXPECT_EQ(h.core.kv().num_free_blocks(), 12u);
}

TEST_F(EngineCoreTest, AbortFreesEveryBlock) {
  Harness h(config());
  const RequestId a = h.core.add_request(greedy(tokens(50, 3), 100));
  h.core.add_request(greedy(tokens(30, 4), 100));
  for (int i = 0; i < 5; ++i) h.core.step();
  h.core.abort(a);
  const auto updates = h.core.step();
  bool saw = false;
  for (const auto& u : updates) saw |= u.id == a && u.finish == FinishReason::Aborted;
  EXPECT_TRUE(saw);
  h.run_to_end();
  EXPECT_EQ(h.core.kv().num_sequences(), 0u);
  EXPECT_EQ(h.core.kv().num_free_blocks(), h.core.kv().num_blocks());
  h.core.kv().check_invariants();
}

// n > 1: the branches share the prompt's blocks (counted), and each decodes exactly as a single
// request with its seed would.
TEST_F(EngineCoreTest, BranchesShareThePromptAndDecodeCorrectly) {
  Request r = greedy(tokens(40, 6), 10);  // 2 full blocks of 16 and a partial one
  r.sampling.temperature = 0.9f;
  r.sampling.seed = 42;
  r.n = 4;
  Harness h(config());
  const RequestId id = h.core.add_request(r);
  std::map<uint32_t, std::vector<int32_t>> branches;
  std::map<uint32_t, FinishReason> finish;
  bool measured = false;
  while (h.core.has_work()) {
    for (const auto& u : h.core.step()) {
      ASSERT_EQ(u.id, id);
      branches[u.index].insert(branches[u.index].end(), u.new_tokens.begin(), u.new_tokens.end());
      if (u.finish != FinishReason::None) finish[u.index] = u.finish;
    }
    if (!measured && h.core.kv().stats().num_sequences == 4 && branches[0].size() == 2) {
      // After one decode step: 2 shared full blocks + 4 private last blocks (copy-on-write of the
      // shared partial block), instead of 4 × 3 without sharing.
      EXPECT_EQ(h.core.kv().stats().blocks_used, 6u);
      measured = true;
    }
  }
  EXPECT_TRUE(measured);
  ASSERT_EQ(branches.size(), 4u);
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(finish[i], FinishReason::Length);
    Request single = r;
    single.n = 1;
    single.sampling.seed = 42 + i;
    Harness alone(config());
    const RequestId a = alone.core.add_request(single);
    alone.run_to_end();
    EXPECT_EQ(branches[i], alone.outputs[a]) << "branch " << i;
  }
  EXPECT_NE(branches[0], branches[1]);
  EXPECT_EQ(h.core.kv().num_free_blocks(), h.core.kv().num_blocks());
}

TEST_F(EngineCoreTest, InvalidRequestsAreErrors) {
  Harness h(config());
  EXPECT_THROW(h.core.add_request(greedy({})), Error);
  EXPECT_THROW(h.core.add_request(greedy({1, 9999})), Error);
  EXPECT_THROW(h.core.add_request(greedy(tokens(600, 1))), Error);
  Request r = greedy(tokens(5, 1));
  r.sampling.temperature = -1;
  EXPECT_THROW(h.core.add_request(r), Error);
  Request many = greedy(tokens(5, 1));
  many.n = 0;
  EXPECT_THROW(h.core.add_request(many), Error);
  EXPECT_FALSE(h.core.has_work());
}

}  // namespace
}  // namespace vellum::engine
