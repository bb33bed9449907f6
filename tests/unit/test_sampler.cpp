// Sampling pieces against values computed independently with numpy (tools/sampling_reference.py):
// logit bias, repetition / presence / frequency penalties, min_tokens suppression, log-softmax
// logprobs with top-k, the empirical distribution of seeded draws, and parameter validation.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <tuple>

#include "core/error.h"
#include "engine/logit_edit_state.h"
#include "engine/logits_processor.h"
#include "engine/logprobs.h"
#include "engine/sampler.h"

namespace vellum::engine {
namespace {

const std::vector<float> kLogits{2.0f, -1.0f, 0.5f, 3.0f, -0.5f, 1.0f};
const std::vector<int32_t> kPrompt{0, 4}, kOutput{3, 3, 2};

SamplingParams penalised() {
  SamplingParams p;
  p.repetition_penalty = 1.5f;
  p.presence_penalty = 0.5f;
  p.frequency_penalty = 0.25f;
  p.logit_bias = {{1, 2.0f}, {5, -1.0f}};
  return p;
}

TEST(LogitsProcessor, MatchesNumpyReference) {
  // tools/sampling_reference.py: processed logits
  const std::vector<double> expected{1.33333333, 1, -0.416666667, 1, -0.75, 0};
  const auto out = process_logits(kLogits, penalised(), kPrompt, kOutput, {});
  ASSERT_EQ(out.size(), expected.size());
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], expected[i], 1e-6) << "token " << i;
  EXPECT_TRUE(adjusts_logits(penalised()));
  EXPECT_FALSE(adjusts_logits(SamplingParams{}));
}

TEST(LogitsProcessor, EachAdjustmentAlone) {
  SamplingParams rep;
  rep.repetition_penalty = 2.0f;  // prompt {0, 4} and output {3, 2}: 2/2, -0.5*2, 3/2, 0.5/2
  EXPECT_EQ(process_logits(kLogits, rep, kPrompt, kOutput, {}), (std::vector<float>{1.0f, -1.0f, 0.25f, 1.5f, -1.0f, 1.0f}));
  SamplingParams presence;
  presence.presence_penalty = -1.0f;  // negative values encourage repeats: +1 for 3 and 2 once each
  EXPECT_EQ(process_logits(kLogits, presence, kPrompt, kOutput, {}), (std::vector<float>{2.0f, -1.0f, 1.5f, 4.0f, -0.5f, 1.0f}));
  SamplingParams frequency;
  frequency.frequency_penalty = 1.0f;  // 3 appears twice, 2 once; the prompt does not count
  EXPECT_EQ(process_logits(kLogits, frequency, kPrompt, kOutput, {}), (std::vector<float>{2.0f, -1.0f, -0.5f, 1.0f, -0.5f, 1.0f}));
  const auto suppressed = process_logits(kLogits, SamplingParams{}, kPrompt, kOutput, std::vector<int32_t>{3, 5});
  EXPECT_EQ(suppressed[3], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(suppressed[5], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(suppressed[0], 2.0f);
}

// The edits behind process_logits: one per token touched, tokens increasing, each with its ops;
// a token listed twice in logit_bias gets the sum of its biases; ids outside the vocabulary are
// skipped; and check_logit_edits refuses edits that do not fit the rows.
TEST(LogitsProcessor, EditsArePerTokenAndChecked) {
  SamplingParams p = penalised();
  p.logit_bias = {{5, 1.0f}, {1, 2.0f}, {5, 0.5f}, {99, 3.0f}};
  std::vector<backend::LogitEdit> edits;
  append_logit_edits(p, kPrompt, kOutput, std::vector<int32_t>{2}, 6, edits);
  std::vector<int32_t> tokens;
  for (const auto& e : edits) tokens.push_back(e.token);
  EXPECT_EQ(tokens, (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));  // prompt {0, 4}, output {3, 2, 3}, biased 1 and 5
  using E = backend::LogitEdit;
  EXPECT_EQ(edits[5].ops, uint32_t{E::kBias});
  EXPECT_EQ(edits[5].bias, 1.5f);
  EXPECT_EQ(edits[2].ops, uint32_t{E::kSuppress | E::kRepetition | E::kSubtract});
  EXPECT_EQ(edits[3].ops, uint32_t{E::kRepetition | E::kSubtract});
  EXPECT_EQ(edits[3].subtract, 2.0f * p.frequency_penalty + p.presence_penalty);
  EXPECT_EQ(edits[0].ops, uint32_t{E::kRepetition});  // the prompt: repetition only
  const std::vector<uint32_t> rows = {0, 2, static_cast<uint32_t>(edits.size())};
  EXPECT_NO_THROW(backend::check_logit_edits(edits, rows, 2, 6));
  EXPECT_THROW(backend::check_logit_edits(edits, rows, 2, 5), Error);                 // token 5 outside 5 columns
  EXPECT_THROW(backend::check_logit_edits(edits, rows, 3, 6), Error);                 // 3 rows, 2 listed
  EXPECT_THROW(backend::check_logit_edits(edits, std::vector<uint32_t>{0, 1}, 1, 6), Error);  // ends short of the edits
  EXPECT_THROW(backend::check_logit_edits(edits, std::vector<uint32_t>{0, 4, 2, 6}, 3, 6), Error);  // backwards
  std::vector<backend::LogitEdit> twice = {edits[0], edits[0]};
  EXPECT_THROW(backend::check_logit_edits(twice, std::vector<uint32_t>{0, 2}, 1, 6), Error);  // a token twice in a row
  EXPECT_NO_THROW(backend::check_logit_edits(twice, std::vector<uint32_t>{0, 1, 2}, 2, 6));  // once in each of two
}

// The incremental state gives append_logit_edits' edits bit for bit after every token, whatever
// the parameters (each penalty alone and together, biases listed twice, ids outside the vocabulary,
// suppressed ids that are or are not among the other edits).
TEST(LogitsProcessor, IncrementalEditsEqualRebuiltOnes) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int32_t> tok(-2, 60);
  const auto same = [](const std::vector<backend::LogitEdit>& a, const std::vector<backend::LogitEdit>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].token != b[i].token || a[i].ops != b[i].ops || std::memcmp(&a[i].bias, &b[i].bias, 4) != 0 ||
          std::memcmp(&a[i].repetition, &b[i].repetition, 4) != 0 || std::memcmp(&a[i].subtract, &b[i].subtract, 4) != 0) {
        return false;
      }
    }
    return true;
  };
  for (int variant = 0; variant < 6; ++variant) {
    SamplingParams p;
    p.repetition_penalty = variant % 2 == 0 ? 1.3f : 1.0f;
    p.presence_penalty = variant % 3 == 0 ? 0.0f : 0.4f;
    p.frequency_penalty = variant < 3 ? -0.7f : 0.0f;
    if (variant == 5) p.logit_bias = {{7, 1.0f}, {3, -2.0f}, {7, 0.25f}, {70, 5.0f}};
    std::vector<int32_t> prompt(20);
    for (auto& t : prompt) t = tok(rng);
    std::vector<int32_t> output;
    LogitEditState state;
    state.reset(p, prompt, output, 50);
    for (int step = 0; step < 80; ++step) {
      const std::vector<int32_t> suppressed = step % 3 == 0 ? std::vector<int32_t>{} : std::vector<int32_t>{2, 7, 2, 49, 55};
      std::vector<backend::LogitEdit> incremental, rebuilt;
      state.append(suppressed, incremental);
      append_logit_edits(p, prompt, output, suppressed, 50, rebuilt);
      ASSERT_TRUE(same(incremental, rebuilt)) << "variant " << variant << " step " << step;
      const int32_t t = tok(rng);
      output.push_back(t);
      state.add_output(t);
    }
    LogitEditState late;  // built after the output: the same again
    late.reset(p, prompt, output, 50);
    std::vector<backend::LogitEdit> a, b;
    late.append({}, a);
    append_logit_edits(p, prompt, output, {}, 50, b);
    EXPECT_TRUE(same(a, b)) << "variant " << variant;
  }
}

TEST(Logprobs, MatchNumpyLogSoftmaxWithTiesByLowerId) {
  const auto x = process_logits(kLogits, penalised(), kPrompt, kOutput, {});
  // tools/sampling_reference.py: log-softmax; tokens 1 and 3 tie, the lower id first
  const std::vector<double> expected{-1.09692693, -1.43026026, -2.84692693, -1.43026026, -3.18026026, -2.43026026};
  const TokenLogprob lp = compute_logprobs(x, 2, 3);
  EXPECT_EQ(lp.token, 2);
  EXPECT_NEAR(lp.logprob, expected[2], 1e-6);
  ASSERT_EQ(lp.top.size(), 3u);
  EXPECT_EQ(lp.top[0].first, 0);
  EXPECT_EQ(lp.top[1].first, 1);
  EXPECT_EQ(lp.top[2].first, 3);
  for (const auto& [id, v] : lp.top) EXPECT_NEAR(v, expected[static_cast<size_t>(id)], 1e-6);
  EXPECT_TRUE(compute_logprobs(x, 0, 0).top.empty());
  // More alternatives than finite tokens: suppressed (-inf) ones are not listed.
  const auto s = process_logits(kLogits, SamplingParams{}, {}, {}, std::vector<int32_t>{1, 2});
  EXPECT_EQ(compute_logprobs(s, 0, 20).top.size(), 4u);
  EXPECT_THROW(compute_logprobs(x, 6, 1), Error);
}

TEST(Sampler, GreedyTakesTheFirstMaximumOfProcessedLogits) {
  SamplingParams p;
  p.temperature = 0;
  Sampler s(p);
  EXPECT_EQ(s.sample(kLogits), 3);
  EXPECT_EQ(s.sample(process_logits(kLogits, penalised(), kPrompt, kOutput, {})), 0);
  EXPECT_EQ(s.sample(std::vector<float>{1.0f, 5.0f, 5.0f}), 1);
}

// Seeded draws at temperature 1 with no truncation follow numpy's softmax of the processed logits.
TEST(Sampler, DrawsFollowTheProcessedDistribution) {
  const std::vector<double> expected{0.333895594, 0.239246648, 0.0580223541, 0.239246648, 0.0415748334, 0.088013923};
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.seed = 42;
  const auto x = process_logits(kLogits, penalised(), kPrompt, kOutput, {});
  Sampler s(p);
  const int draws = 200000;
  std::map<int32_t, int> counts;
  std::vector<int32_t> first;
  for (int i = 0; i < draws; ++i) {
    const int32_t t = s.sample(x);
    ++counts[t];
    if (i < 50) first.push_back(t);
  }
  for (size_t t = 0; t < expected.size(); ++t) {
    const double f = counts[static_cast<int32_t>(t)] / double(draws);
    // 5 standard deviations of a binomial proportion
    const double tol = 5 * std::sqrt(expected[t] * (1 - expected[t]) / draws);
    EXPECT_NEAR(f, expected[t], tol) << "token " << t;
  }
  Sampler again(p);  // same seed, same draws
  for (int32_t t : first) EXPECT_EQ(again.sample(x), t);
}

// Without top-k the sampler keeps the tokens in id order and orders only the head top-p needs
// (Sampler::sample_all). Its draws against a plain reference written here: sort the whole vocabulary
// (logit descending, id ascending), softmax at the temperature, min-p cut, top-p prefix. Every kept
// token's frequency within 5 standard deviations, and no token outside the kept set ever drawn; a
// peaked row with top-p and min-p, the same row with min-p alone (the cut that binds there), and a
// flat row (a nucleus of hundreds: the sampler's partial sorts must grow past their first 64).
std::map<int32_t, double> reference_distribution(const std::vector<float>& logits, const SamplingParams& p) {
  std::vector<int32_t> ids(logits.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i);
  std::sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
  std::vector<double> prob(ids.size());
  double sum = 0;
  for (size_t i = 0; i < ids.size(); ++i) sum += prob[i] = std::exp((logits[ids[i]] - double(logits[ids[0]])) / p.temperature);
  size_t n = ids.size();
  while (n > 1 && prob[n - 1] / sum < p.min_p * prob[0] / sum) --n;
  double cumulative = 0;
  for (size_t i = 0; i < n; ++i) {
    cumulative += prob[i] / sum;
    if (cumulative >= p.top_p) {
      n = i + 1;
      break;
    }
  }
  double kept = 0;
  for (size_t i = 0; i < n; ++i) kept += prob[i];
  std::map<int32_t, double> out;
  for (size_t i = 0; i < n; ++i) out[ids[i]] = prob[i] / kept;
  return out;
}

TEST(Sampler, WithoutTopKDrawsFollowTheMinPAndTopPReference) {
  std::mt19937 gen(5);
  for (const auto& [spread, top_p, min_p] :
       {std::tuple<float, float, float>{3.0f, 0.8f, 0.02f}, {3.0f, 1.0f, 0.05f}, {0.5f, 0.9f, 0.0f}}) {
    std::normal_distribution<float> normal(0.0f, spread);
    std::vector<float> logits(600);
    for (float& x : logits) x = normal(gen);
    SamplingParams p;
    p.temperature = 0.7f, p.top_k = 0, p.top_p = top_p, p.min_p = min_p, p.seed = 9;
    const std::map<int32_t, double> want = reference_distribution(logits, p);
    Sampler s(p);
    const int draws = 30000;
    std::map<int32_t, int> counts;
    for (int i = 0; i < draws; ++i) ++counts[s.sample(logits)];
    int outside = 0;
    for (const auto& [t, c] : counts) outside += want.count(t) == 0 ? c : 0;
    EXPECT_EQ(outside, 0) << "spread " << spread;
    for (const auto& [t, q] : want) {
      const double f = counts[t] / double(draws), tol = 5 * std::sqrt(q * (1 - q) / draws) + 1e-9;
      EXPECT_NEAR(f, q, tol) << "spread " << spread << " token " << t;
    }
    EXPECT_GT(want.size(), spread < 1.0f ? 64u : 1u) << "the flat row's nucleus must outgrow the first partial sort";
  }
}

void expect_refused(SamplingParams p, const std::string& name) {
  try {
    p.validate();
    ADD_FAILURE() << name << " accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  }
}

TEST(Sampler, OutOfRangeParametersAreErrorsNamingThem) {
  SamplingParams ok = penalised();
  EXPECT_NO_THROW(ok.validate());
  auto with = [](auto f) {
    SamplingParams p;
    f(p);
    return p;
  };
  expect_refused(with([](auto& p) { p.repetition_penalty = 0.0f; }), "repetition_penalty");
  expect_refused(with([](auto& p) { p.repetition_penalty = 2.5f; }), "repetition_penalty");
  expect_refused(with([](auto& p) { p.repetition_penalty = NAN; }), "repetition_penalty");
  expect_refused(with([](auto& p) { p.presence_penalty = 2.01f; }), "presence_penalty");
  expect_refused(with([](auto& p) { p.presence_penalty = -3.0f; }), "presence_penalty");
  expect_refused(with([](auto& p) { p.frequency_penalty = -2.5f; }), "frequency_penalty");
  expect_refused(with([](auto& p) { p.frequency_penalty = NAN; }), "frequency_penalty");
  expect_refused(with([](auto& p) { p.logit_bias = {{3, 100.5f}}; }), "logit_bias");
  expect_refused(with([](auto& p) { p.logit_bias = {{3, -101.0f}}; }), "logit_bias");
  expect_refused(with([](auto& p) { p.logit_bias = {{-1, 1.0f}}; }), "logit_bias");
  expect_refused(with([](auto& p) { p.logit_bias = {{1, NAN}}; }), "logit_bias");
  expect_refused(with([](auto& p) { p.top_p = 0.0f; }), "top_p");
  expect_refused(with([](auto& p) { p.min_p = 1.5f; }), "min_p");
  expect_refused(with([](auto& p) { p.top_k = -1; }), "top_k");
  EXPECT_NO_THROW(with([](auto& p) { p.logit_bias = {{3, -100.0f}, {4, 100.0f}}; }).validate());
}

}  // namespace
}  // namespace vellum::engine
