#pragma once
// Log-probabilities for a sampled token and its top alternatives: a log-softmax of the processed
// logits (after bias and penalties, before temperature and truncation), in double.

#include <cstdint>
#include <span>

#include "engine/request.h"

namespace vellum::engine {

// Most alternatives a request may ask for (OpenAI's limit).
inline constexpr int32_t kMaxLogprobs = 20;

// `token`'s log-probability and the `top` most likely tokens, descending (ties: lower id first).
// Tokens at -inf (suppressed) are never listed as alternatives.
TokenLogprob compute_logprobs(std::span<const float> logits, int32_t token, uint32_t top);
// The same from a row reduced on the backend: its log normalizer (Backend::log_normalizers), the
// token's logit, and its best candidates (values and ids in logit_before's order, at least `top`
// unless the row is shorter).
TokenLogprob logprobs_from_candidates(double log_z, int32_t token, float token_logit, std::span<const float> values,
                                      std::span<const int32_t> ids, uint32_t top);

}  // namespace vellum::engine
