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

}  // namespace vellum::engine
