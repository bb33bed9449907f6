#pragma once
// Turns one row of logits into a token: greedy at temperature 0, otherwise temperature, top-k,
// top-p and min-p filtering (llama.cpp's order) and a draw from a seeded generator, so a seed
// reproduces a run exactly.

#include <cstdint>
#include <random>
#include <span>

namespace vellum::engine {

struct SamplingParams {
  float temperature = 0.8f;  // 0: greedy
  int32_t top_k = 40;        // 0: off
  float top_p = 0.95f;       // 1: off
  float min_p = 0.05f;       // 0: off
  uint64_t seed = 0;

  // Throws vellum::Error naming the parameter when a value is out of range.
  void validate() const;
};

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);
  int32_t sample(std::span<const float> logits);

 private:
  SamplingParams params_;
  std::mt19937_64 rng_;
};

}  // namespace vellum::engine
