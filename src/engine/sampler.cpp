#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "backend/logit_rows.h"
#include "core/logit_order.h"

namespace vellum::engine {

void SamplingParams::validate() const {
  if (!(temperature >= 0.0f) || !std::isfinite(temperature)) throw_error("temperature {} must be >= 0", temperature);
  if (top_k < 0) throw_error("top_k {} must be >= 0", top_k);
  if (!(top_p > 0.0f && top_p <= 1.0f)) throw_error("top_p {} must be in (0, 1]", top_p);
  if (!(min_p >= 0.0f && min_p <= 1.0f)) throw_error("min_p {} must be in [0, 1]", min_p);
  if (!(repetition_penalty > 0.0f && repetition_penalty <= 2.0f)) {
    throw_error("repetition_penalty {} must be in (0, 2]", repetition_penalty);
  }
  if (!(presence_penalty >= -2.0f && presence_penalty <= 2.0f)) {
    throw_error("presence_penalty {} must be in [-2, 2]", presence_penalty);
  }
  if (!(frequency_penalty >= -2.0f && frequency_penalty <= 2.0f)) {
    throw_error("frequency_penalty {} must be in [-2, 2]", frequency_penalty);
  }
  for (const auto& [token, bias] : logit_bias) {
    if (token < 0) throw_error("logit_bias token {} must be >= 0", token);
    if (!(bias >= -100.0f && bias <= 100.0f)) throw_error("logit_bias {} for token {} must be in [-100, 100]", bias, token);
  }
}

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) { params.validate(); }

int32_t Sampler::sample(std::span<const float> logits) {
  if (logits.empty()) throw_error("sampler: empty logits");
  // Greedy: the first maximum, so ties break the same way everywhere.
  if (params_.temperature == 0.0f) {
    return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  }
  if (draws_whole_row(logits.size())) {
    // No top-k cut: min-p and top-p cut the whole row without sorting it (a 128k vocabulary sorted
    // is ~12 ms a token on one core), the same draw a backend's draw_rows makes. The scratch stays
    // with the thread (the engine's): no fresh megabytes of pages a token.
    thread_local backend::DrawScratch scratch;
    return backend::draw_of_row(logits.data(), static_cast<int64_t>(logits.size()), row_draw(), scratch);
  }
  const size_t keep = static_cast<size_t>(params_.top_k);
  std::vector<int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::partial_sort(ids.begin(), ids.begin() + static_cast<ptrdiff_t>(keep), ids.end(),
                    [&](int32_t a, int32_t b) { return logit_before(logits[a], a, logits[b], b); });
  ids.resize(keep);
  std::vector<float> values(keep);
  for (size_t i = 0; i < keep; ++i) values[i] = logits[ids[i]];
  return draw(values, ids);
}

double Sampler::uniform() { return std::generate_canonical<double, std::numeric_limits<double>::digits>(rng_); }

int32_t Sampler::sample_top(std::span<const float> values, std::span<const int32_t> ids) {
  const size_t k = params_.top_k > 0 ? static_cast<size_t>(params_.top_k) : 0;
  if (params_.temperature == 0.0f || k == 0 || values.size() < k || ids.size() != values.size()) {
    throw_error("sampler: {} candidates for top_k {} at temperature {}", values.size(), params_.top_k, params_.temperature);
  }
  return draw(values.first(k), ids.first(k));
}

int32_t Sampler::draw(std::span<const float> values, std::span<const int32_t> ids) {
  const size_t keep = values.size();
  // Softmax at the temperature, in double so that long vocabularies sum exactly enough.
  std::vector<double> p(keep);
  const double max_logit = values[0];
  double sum = 0;
  for (size_t i = 0; i < keep; ++i) {
    p[i] = std::exp((values[i] - max_logit) / params_.temperature);
    sum += p[i];
  }
  for (auto& x : p) x /= sum;
  // min-p: drop tokens below min_p × the top probability; top-p: the smallest prefix reaching top_p.
  size_t n = keep;
  if (params_.min_p > 0.0f) {
    while (n > 1 && p[n - 1] < params_.min_p * p[0]) --n;
  }
  if (params_.top_p < 1.0f) {
    double cumulative = 0;
    for (size_t i = 0; i < n; ++i) {
      cumulative += p[i];
      if (cumulative >= params_.top_p) {
        while (i + 1 < n && values[i + 1] == values[i]) ++i;  // ties at the cut are all kept (draw_of_row)
        n = i + 1;
        break;
      }
    }
  }
  double total = 0;
  for (size_t i = 0; i < n; ++i) total += p[i];
  const double r = std::uniform_real_distribution<double>(0.0, total)(rng_);
  double acc = 0;
  for (size_t i = 0; i < n; ++i) {
    acc += p[i];
    if (r < acc) return ids[i];
  }
  return ids[n - 1];
}

}  // namespace vellum::engine
