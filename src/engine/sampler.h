#pragma once
// Turns one row of logits into a token: greedy at temperature 0, otherwise temperature, top-k,
// top-p and min-p filtering (llama.cpp's order) and a draw from a seeded generator, so a seed
// reproduces a run exactly. Bias, penalties and min_tokens are applied to the logits before
// (engine/logits_processor.h); SamplingParams carries their settings.

#include <cstdint>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "backend/logit_rows.h"

namespace vellum::engine {

struct SamplingParams {
  float temperature = 0.8f;  // 0: greedy
  int32_t top_k = 40;        // 0: off
  float top_p = 0.95f;       // 1: off
  float min_p = 0.05f;       // 0: off
  uint64_t seed = 0;
  // Penalties over the tokens seen so far (llama.cpp / vLLM semantics): repetition divides positive
  // logits (multiplies negative ones) of every token in prompt or output; presence subtracts a constant
  // from, and frequency subtracts count × value from, each token already generated.
  float repetition_penalty = 1.0f;  // 1: off; (0, 2]
  float presence_penalty = 0.0f;    // [-2, 2]
  float frequency_penalty = 0.0f;   // [-2, 2]
  std::vector<std::pair<int32_t, float>> logit_bias;  // (token, added to its logit in [-100, 100])

  // Throws vellum::Error naming the parameter when a value is out of range.
  void validate() const;
};

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);
  int32_t sample(std::span<const float> logits);
  // The same draw from a row's best candidates only (Backend::top_k_rows: values and ids in
  // logit_before's order, at least top_k of them), for top_k > 0 below the vocabulary and a
  // temperature above 0: sample() keeps exactly the first top_k candidates of the whole row, so both
  // give the same token from the same generator state.
  int32_t sample_top(std::span<const float> values, std::span<const int32_t> ids);
  // Whether sample() draws from the whole row (a temperature above 0, no top-k below `vocab`; min-p
  // and top-p are cut on the row): backend::draw_of_row with one uniform() a token, so a backend can
  // draw the row itself (Backend::draw_rows) with row_draw(), its uniform taken here first.
  bool draws_whole_row(size_t vocab) const {
    return params_.temperature > 0.0f && (params_.top_k <= 0 || static_cast<size_t>(params_.top_k) >= vocab);
  }
  backend::RowDraw row_draw() { return {uniform(), params_.temperature, params_.min_p, params_.top_p}; }
  // The next uniform in [0, 1) of this sampler's generator (53 random bits).
  double uniform();

 private:
  // Temperature, min-p, top-p and the draw over candidates already in logit_before's order.
  int32_t draw(std::span<const float> values, std::span<const int32_t> ids);

  SamplingParams params_;
  std::mt19937_64 rng_;
};

}  // namespace vellum::engine
