// Sampling through the engine core on the real stories260K model, against references computed here
// from scratch (a fresh one-shot forward pass of the whole sequence and hand-written formulas):
// logprobs, repetition / presence / frequency penalties, logit bias, min_tokens; EngineStats
// counters; request validation of the new parameters.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <cmath>
#include <numeric>
#include <string>

#include "core/error.h"
#include "test_engine_harness.h"

namespace vellum::engine {
namespace {

using namespace test;

// Logits after the last token of `seq`, from one prefill in a KV pool of its own.
std::vector<float> one_shot_logits(const std::vector<int32_t>& seq) {
  backend::CpuBackend be{2};
  model::Transformer m{stories(), be};
  const uint32_t bs = 16;
  const uint32_t nb = static_cast<uint32_t>((seq.size() + bs - 1) / bs);
  be.init_kv(m.kv_layout(bs), nb);
  std::vector<int32_t> table(nb);
  std::iota(table.begin(), table.end(), 0);
  Batch b;
  b.block_size = bs;
  b.add_sequence(seq, 0, table, Batch::Logits::Last);
  return m.forward(b);
}

int32_t argmax(const std::vector<double>& x) {
  return static_cast<int32_t>(std::max_element(x.begin(), x.end()) - x.begin());
}

// Each generated token's logprob and top alternatives equal a double log-softmax of fresh logits.
TEST_F(EngineCoreTest, LogprobsMatchALogSoftmaxOfFreshLogits) {
  Harness h(config());
  Request r = greedy(tokens(30, 1), 4);
  r.logprobs = 5;
  const RequestId id = h.core.add_request(r);
  h.run_to_end();
  const auto& out = h.outputs[id];
  const auto& lps = h.logprobs[id];
  ASSERT_EQ(out.size(), 4u);
  ASSERT_EQ(lps.size(), 4u);
  std::vector<int32_t> seq = r.prompt;
  for (size_t i = 0; i < out.size(); ++i) {
    const auto logits = one_shot_logits(seq);
    double mx = -INFINITY, sum = 0;
    for (float x : logits) mx = std::max<double>(mx, x);
    for (float x : logits) sum += std::exp(x - mx);
    std::vector<double> lp(logits.size());
    for (size_t v = 0; v < logits.size(); ++v) lp[v] = logits[v] - mx - std::log(sum);
    EXPECT_EQ(lps[i].token, out[i]);
    EXPECT_NEAR(lps[i].logprob, lp[static_cast<size_t>(out[i])], 1e-5);
    ASSERT_EQ(lps[i].top.size(), 5u);
    EXPECT_EQ(lps[i].top[0].first, out[i]) << "greedy takes the most likely token";
    std::vector<double> sorted = lp;
    std::sort(sorted.rbegin(), sorted.rend());
    for (size_t k = 0; k < 5; ++k) {
      EXPECT_NEAR(lps[i].top[k].second, sorted[k], 1e-5);
      EXPECT_NEAR(lps[i].top[k].second, lp[static_cast<size_t>(lps[i].top[k].first)], 1e-5);
    }
    seq.push_back(out[i]);
  }
}

// `reqs` run together in one engine with `c` until all finish: each request's tokens (its branches'
// interleaved as they arrived) and how many logprob entries it got.
struct Together {
  std::vector<std::vector<int32_t>> tokens;
  std::vector<size_t> logprobs;
};
Together run_together(const EngineConfig& c, const std::vector<Request>& reqs) {
  Harness h(c);
  std::vector<RequestId> ids;
  for (const Request& r : reqs) ids.push_back(h.core.add_request(r));
  h.run_to_end();
  Together out;
  for (RequestId id : ids) {
    out.tokens.push_back(h.outputs[id]);
    out.logprobs.push_back(h.logprobs[id].size());
  }
  return out;
}

// Rows reduced on the backend (a greedy row's argmax, a top-k row's candidates, a token drawn from a
// row without top-k) give the tokens the whole rows give: one engine run with
// EngineConfig::reduce_logits on and one with it off, over a mix of greedy, seeded top-k, top-k with
// a bias, top_k = 0 with top-p and min-p, top_k = 0 with nothing cut (the OpenAI API's defaults),
// penalties and min_tokens (edits the backend applies before it reduces the row) requests, all
// decoding in the same steps.
TEST_F(EngineCoreTest, ReducedLogitRowsGiveTheTokensOfWholeRows) {
  std::vector<Request> reqs;
  reqs.push_back(greedy(tokens(20, 1), 24));
  for (int i = 0; i < 4; ++i) {
    Request r = greedy(tokens(12 + i, 2 + i), 24);
    r.sampling.temperature = 1.5f;  // every candidate in play: no min-p or top-p cut
    r.sampling.top_p = 1.0f;
    r.sampling.min_p = 0.0f;
    r.sampling.top_k = 40 - 9 * i;
    r.sampling.seed = 100 + static_cast<uint64_t>(i);
    reqs.push_back(r);
  }
  Request biased = greedy(tokens(17, 9), 24);
  biased.sampling.temperature = 0.8f;
  biased.sampling.logit_bias = {{5, 2.0f}};
  biased.sampling.seed = 7;
  reqs.push_back(biased);
  Request whole = greedy(tokens(15, 11), 24);
  whole.sampling.temperature = 1.0f;
  whole.sampling.top_k = 0;
  whole.sampling.seed = 9;
  reqs.push_back(whole);
  for (int i = 0; i < 2; ++i) {
    Request drawn = greedy(tokens(13 + i, 14 + i), 24);
    drawn.sampling.temperature = 1.0f + 0.5f * i;
    drawn.sampling.top_k = 0;
    drawn.sampling.top_p = 1.0f;
    drawn.sampling.min_p = 0.0f;
    drawn.sampling.seed = 31 + static_cast<uint64_t>(i);
    reqs.push_back(drawn);
  }
  Request penalized = greedy(tokens(16, 21), 24);  // repetition and OpenAI penalties, drawn
  penalized.sampling.temperature = 0.9f;
  penalized.sampling.top_k = 0;
  penalized.sampling.repetition_penalty = 1.3f;
  penalized.sampling.presence_penalty = 0.4f;
  penalized.sampling.frequency_penalty = 0.3f;
  penalized.sampling.seed = 41;
  reqs.push_back(penalized);
  Request greedy_penalized = greedy(tokens(11, 23), 24);  // argmax after a repetition penalty and biases
  greedy_penalized.sampling.repetition_penalty = 1.8f;
  greedy_penalized.sampling.logit_bias = {{3, -5.0f}, {7, 1.5f}};
  reqs.push_back(greedy_penalized);
  Request late_end = greedy(tokens(14, 25), 24);  // top-k with its stop ids suppressed (min_tokens)
  late_end.sampling.temperature = 1.1f;
  late_end.sampling.top_k = 20;
  late_end.sampling.frequency_penalty = -0.5f;
  late_end.stop_token_ids = {5, 9, 12};
  late_end.min_tokens = 24;
  late_end.sampling.seed = 43;
  reqs.push_back(late_end);
  EngineConfig reducing = config(), copying = config();
  copying.reduce_logits = false;
  const auto reduced = run_together(reducing, reqs).tokens, whole_rows = run_together(copying, reqs).tokens;
  ASSERT_EQ(reduced.size(), reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(reduced[i].size(), 24u) << "request " << i;
    EXPECT_EQ(reduced[i], whole_rows[i]) << "request " << i;
  }
  // The top-k and drawn requests really sampled: not their prompts' greedy continuations.
  for (size_t i : {1, 2, 3, 4, 7, 8, 9, 11}) {
    Request g = reqs[i];
    g.sampling.temperature = 0;
    EXPECT_NE(reduced[i], run_alone(config(), g)) << "request " << i;
  }
}

// Logprobs of rows reduced on the backend (the row's normalizer, the chosen token's logit, its best
// candidates) are the host's from the whole row bit for bit on the CPU backend (the same sums in the
// same order): greedy, top-k, drawn with cuts, and with penalties and a bias, 0 to 20 alternatives.
TEST_F(EngineCoreTest, LogprobsOfReducedRowsEqualWholeRows) {
  std::vector<Request> reqs;
  for (int i = 0; i < 6; ++i) {
    Request r = greedy(tokens(12 + i, 30 + i), 16);
    r.logprobs = std::vector<int32_t>{5, 0, 20, 3, 1, 7}[static_cast<size_t>(i)];
    r.sampling.seed = 60 + static_cast<uint64_t>(i);
    if (i >= 1) r.sampling.temperature = 0.9f;
    r.sampling.top_k = i == 1 || i == 2 ? 10 * i : 0;  // top-k 10 / 20, then drawn on the backend
    r.sampling.top_p = i == 3 ? 0.8f : 1.0f;
    r.sampling.min_p = i == 4 ? 0.05f : 0.0f;
    if (i == 5) r.sampling.repetition_penalty = 1.4f, r.sampling.logit_bias = {{4, 1.5f}};
    reqs.push_back(r);
  }
  EngineConfig reducing = config(), copying = config();
  copying.reduce_logits = false;
  Harness a(reducing), b(copying);
  std::vector<RequestId> ia, ib;
  for (const Request& r : reqs) ia.push_back(a.core.add_request(r)), ib.push_back(b.core.add_request(r));
  a.run_to_end();
  b.run_to_end();
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(a.outputs[ia[i]], b.outputs[ib[i]]) << "request " << i;
    const auto &la = a.logprobs[ia[i]], &lb = b.logprobs[ib[i]];
    ASSERT_EQ(la.size(), 16u) << "request " << i;
    ASSERT_EQ(la.size(), lb.size()) << "request " << i;
    for (size_t t = 0; t < la.size(); ++t) {
      EXPECT_EQ(la[t].token, lb[t].token);
      EXPECT_EQ(la[t].logprob, lb[t].logprob) << "request " << i << " token " << t;
      EXPECT_EQ(la[t].top, lb[t].top) << "request " << i << " token " << t;
      EXPECT_EQ(la[t].top.size(), static_cast<size_t>(reqs[i].logprobs)) << "request " << i;
    }
  }
}

// Whole rows are drawn on the sampling threads; each sequence has its own generator, so one thread
// and four give the same tokens (top-k off, penalties, logprobs and an n = 3 request among them).
TEST_F(EngineCoreTest, SamplingThreadsDoNotChangeTokens) {
  std::vector<Request> reqs;
  for (int i = 0; i < 6; ++i) {
    Request r = greedy(tokens(10 + i, 20 + i), 16);
    r.sampling.temperature = 1.2f;
    r.sampling.top_k = 0;
    r.sampling.top_p = i % 2 == 0 ? 1.0f : 0.8f;
    r.sampling.min_p = i % 3 == 0 ? 0.0f : 0.02f;
    r.sampling.presence_penalty = i == 4 ? 0.5f : 0.0f;
    r.logprobs = i == 5 ? 2 : -1;
    r.sampling.seed = 50 + static_cast<uint64_t>(i);
    reqs.push_back(r);
  }
  reqs[3].n = 3;
  EngineConfig single = config(), four_threads = config();
  single.sampling_threads = 1;
  four_threads.sampling_threads = 4;
  const Together one = run_together(single, reqs), four = run_together(four_threads, reqs);
  EXPECT_EQ(one.tokens, four.tokens);
  EXPECT_EQ(one.logprobs[5], 16u);
  EXPECT_EQ(four.logprobs[5], 16u);
}

// Greedy with penalties equals a loop that recomputes logits from scratch and applies the
// llama.cpp/vLLM repetition penalty and OpenAI's presence/frequency penalties by hand.
TEST_F(EngineCoreTest, PenaltiesMatchAHandWrittenReferenceLoop) {
  Request r = greedy(tokens(24, 5), 16);
  r.sampling.repetition_penalty = 1.8f;
  r.sampling.presence_penalty = 0.6f;
  r.sampling.frequency_penalty = 0.4f;
  r.sampling.logit_bias = {{50, 3.0f}};
  Harness h(config());
  const RequestId id = h.core.add_request(r);
  h.run_to_end();
  Harness plain(config());
  const RequestId pid = plain.core.add_request(greedy(tokens(24, 5), 16));
  plain.run_to_end();

  std::vector<int32_t> seq = r.prompt, out;
  for (int i = 0; i < 16; ++i) {
    const auto logits = one_shot_logits(seq);
    std::vector<double> x(logits.begin(), logits.end());
    x[50] += 3.0;
    for (size_t v = 0; v < x.size(); ++v) {
      const auto t = static_cast<int32_t>(v);
      const bool seen = std::find(seq.begin(), seq.end(), t) != seq.end();
      const auto n = std::count(out.begin(), out.end(), t);
      if (seen) x[v] = x[v] > 0 ? x[v] / 1.8 : x[v] * 1.8;
      x[v] -= static_cast<double>(n) * 0.4 + (n > 0 ? 0.6 : 0.0);
    }
    out.push_back(argmax(x));
    seq.push_back(out.back());
  }
  EXPECT_EQ(h.outputs[id], out);
  EXPECT_NE(h.outputs[id], plain.outputs[pid]) << "the penalties were meant to change the output";
}

TEST_F(EngineCoreTest, LogitBiasForcesAndForbidsTokens) {
  Harness h(config());
  Request forced = greedy(tokens(20, 2), 6);
  forced.sampling.temperature = 1.0f;  // +100 dominates any draw
  forced.sampling.seed = 3;
  forced.sampling.logit_bias = {{100, 100.0f}};
  const RequestId f = h.core.add_request(forced);
  const RequestId g = h.core.add_request(greedy(tokens(20, 2), 1));
  h.run_to_end();
  EXPECT_EQ(h.outputs[f], std::vector<int32_t>(6, 100));
  // Forbidding the greedy token leaves the second most likely one.
  const int32_t first = h.outputs[g].at(0);
  Request forbid = greedy(tokens(20, 2), 1);
  forbid.sampling.logit_bias = {{first, -100.0f}};
  const RequestId b = h.core.add_request(forbid);
  h.run_to_end();
  auto logits = one_shot_logits(tokens(20, 2));
  logits[static_cast<size_t>(first)] = -INFINITY;
  EXPECT_EQ(h.outputs[b].at(0), static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin()));
}

// Stop ids (and end-of-generation tokens) cannot end a request before min_tokens.
TEST_F(EngineCoreTest, MinTokensSuppressesStopTokens) {
  Harness h(config());
  const RequestId g = h.core.add_request(greedy(tokens(20, 4), 10));
  h.run_to_end();
  const int32_t stop = h.outputs[g].at(2);
  Request early = greedy(tokens(20, 4), 10);
  early.stop_token_ids = {stop};
  const RequestId e = h.core.add_request(early);
  Request late = early;
  late.min_tokens = 6;
  const RequestId l = h.core.add_request(late);
  h.run_to_end();
  const auto first_stop = std::find(h.outputs[g].begin(), h.outputs[g].end(), stop) - h.outputs[g].begin();
  EXPECT_EQ(h.outputs[e].size(), static_cast<size_t>(first_stop) + 1);
  EXPECT_EQ(h.finished[e].finish, FinishReason::Stop);
  const auto& lo = h.outputs[l];
  ASSERT_GE(lo.size(), 6u);
  EXPECT_EQ(std::count(lo.begin(), lo.begin() + 5, stop), 0) << "a stop id was drawn before min_tokens";
  if (h.finished[l].finish == FinishReason::Stop) {
    EXPECT_EQ(lo.back(), stop);
  }

  // End-of-generation (id 2 in this harness): forbidden before min_tokens unless ignore_eos.
  Request eog = greedy(tokens(20, 4), 8);
  eog.ignore_eos = false;
  eog.sampling.logit_bias = {{2, 100.0f}};  // the model would end at once
  eog.min_tokens = 3;
  const RequestId q = h.core.add_request(eog);
  h.run_to_end();
  ASSERT_EQ(h.outputs[q].size(), 4u);
  EXPECT_EQ(std::count(h.outputs[q].begin(), h.outputs[q].end(), 2), 1);
  EXPECT_EQ(h.outputs[q].back(), 2);
  EXPECT_EQ(h.finished[q].finish, FinishReason::Stop);
}

TEST_F(EngineCoreTest, StatsCountWhatRan) {
  Harness h(config(2048, 16, true));
  const auto P = tokens(40, 9);
  const RequestId a = h.core.add_request(greedy(P, 5));
  h.run_to_end();
  Request two = greedy(P, 3);  // shares P's two full blocks
  two.n = 2;
  two.sampling.temperature = 1.0f;
  h.core.add_request(two);
  h.core.add_request(greedy(tokens(10, 1), 200));
  h.core.add_request(greedy(tokens(12, 2), 4));
  h.core.step();
  EngineStats mid = h.core.stats();
  EXPECT_EQ(mid.running, 3u) << "the n = 2 request counts once";
  EXPECT_EQ(mid.waiting, 0u);
  h.run_to_end();
  const EngineStats s = h.core.stats();
  EXPECT_EQ(s.running, 0u);
  EXPECT_EQ(s.waiting, 0u);
  EXPECT_EQ(s.requests_finished, 4u);
  EXPECT_EQ(s.prompt_tokens, 40u + 40u + 10u + 12u);
  EXPECT_EQ(s.cached_prompt_tokens, 32u);
  EXPECT_EQ(s.generation_tokens, 5u + 2 * 3u + 200u + 4u);
  EXPECT_EQ(s.preemptions, 0u);
  EXPECT_EQ(s.steps, 5u + 200u);  // every step ran a forward pass
  EXPECT_EQ(s.kv.num_sequences, 0u);
  (void)a;
}

void expect_refused(EngineCore& core, const Request& r, const std::string& name) {
  try {
    core.add_request(r);
    ADD_FAILURE() << name << " accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  }
}

TEST_F(EngineCoreTest, NewParametersAreValidated) {
  Harness h(config());
  Request r = greedy(tokens(5, 1));
  r.sampling.logit_bias = {{512, 1.0f}};
  expect_refused(h.core, r, "logit_bias token 512 is outside the vocabulary");
  r = greedy(tokens(5, 1));
  r.logprobs = 21;
  expect_refused(h.core, r, "logprobs 21 must be in [-1, 20]");
  r.logprobs = -2;
  expect_refused(h.core, r, "logprobs -2");
  r = greedy(tokens(5, 1), 4);
  r.min_tokens = 5;
  expect_refused(h.core, r, "min_tokens 5 must be <= max_tokens 4");
  r = greedy(tokens(5, 1));
  r.sampling.repetition_penalty = 3;
  expect_refused(h.core, r, "repetition_penalty 3 must be in (0, 2]");
  EXPECT_FALSE(h.core.has_work());
}

}  // namespace
}  // namespace vellum::engine
