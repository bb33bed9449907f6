#include "engine/logprobs.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "backend/logit_rows.h"
#include "core/error.h"

namespace vellum::engine {

TokenLogprob compute_logprobs(std::span<const float> logits, int32_t token, uint32_t top) {
  if (token < 0 || static_cast<size_t>(token) >= logits.size()) throw_error("logprobs: token {} outside the logits", token);
  // log p_i = x_i - max - log(sum exp(x_j - max)), accumulated in double (backend/logit_rows.h, which
  // a backend's log_normalizers computes too).
  const double log_z = backend::log_normalizer(logits.data(), static_cast<int64_t>(logits.size()));
  TokenLogprob r;
  r.token = token;
  r.logprob = backend::logprob_of(logits[static_cast<size_t>(token)], log_z);
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
    r.top.emplace_back(ids[i], backend::logprob_of(x, log_z));
  }
  return r;
}

TokenLogprob logprobs_from_candidates(double log_z, int32_t token, float token_logit, std::span<const float> values,
                                      std::span<const int32_t> ids, uint32_t top) {
  TokenLogprob r;
  r.token = token;
  r.logprob = backend::logprob_of(token_logit, log_z);
  const size_t k = std::min<size_t>({top, values.size(), ids.size()});
  for (size_t i = 0; i < k; ++i) {
    if (std::isinf(values[i]) && values[i] < 0) break;
    r.top.emplace_back(ids[i], backend::logprob_of(values[i], log_z));
  }
  return r;
}

}  // namespace vellum::engine
