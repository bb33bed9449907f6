#include "engine/logprobs.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/error.h"

namespace vellum::engine {

TokenLogprob compute_logprobs(std::span<const float> logits, int32_t token, uint32_t top) {
  if (token < 0 || static_cast<size_t>(token) >= logits.size()) throw_error("logprobs: token {} outside the logits", token);
  // log p_i = x_i - max - log(sum exp(x_j - max)), accumulated in double.
  double max_logit = -INFINITY;
  for (float x : logits) max_logit = std::max<double>(max_logit, x);
  double sum = 0;
  for (float x : logits) sum += std::exp(static_cast<double>(x) - max_logit);
  const double log_z = max_logit + std::log(sum);
  TokenLogprob r;
  r.token = token;
  r.logprob = static_cast<float>(static_cast<double>(logits[static_cast<size_t>(token)]) - log_z);
  if (top == 0) return r;
  std::vector<int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  const size_t k = std::min<size_t>(top, ids.size());
  std::partial_sort(ids.begin(), ids.begin() + static_cast<ptrdiff_t>(k), ids.end(), [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  for (size_t i = 0; i < k; ++i) {
    const float x = logits[static_cast<size_t>(ids[i])];
    if (std::isinf(x) && x < 0) break;
    r.top.emplace_back(ids[i], static_cast<float>(static_cast<double>(x) - log_z));
  }
  return r;
}

}  // namespace vellum::engine
