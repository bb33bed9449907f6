#pragma once
// The logit adjustments made before sampling, in vLLM V1's order: logit bias, min_tokens
// suppression, repetition penalty, then frequency and presence penalties. They depend only on the
// sequence's own tokens (no randomness, nothing from other requests), so seeded runs stay exact
// whatever the batch. They are sparse edits (backend/logit_edits.h): the engine hands them to the
// backend for rows it reduces there, and applies the same edits itself to rows copied back.

#include <cstdint>
#include <span>
#include <vector>

#include "backend/logit_edits.h"
#include "engine/sampler.h"

namespace vellum::engine {

// True when `params` change logits at all (so the common case skips the copy).
bool adjusts_logits(const SamplingParams& params);

// Appends one row's edits to `out`, one per token touched, tokens increasing (ids outside [0,
// vocab) are skipped):
//  1. logit bias: logit[t] += bias for each (t, bias) (a token listed twice: its biases' sum);
//  2. every id in `suppressed` set to -inf (end-of-generation and stop ids before min_tokens);
//  3. repetition penalty r (llama.cpp / vLLM): for each distinct token of prompt or output,
//     logit > 0 ? logit / r : logit * r;
//  4. OpenAI's penalties over the output: logit[t] -= count(t) × frequency + (count(t) > 0) × presence.
void append_logit_edits(const SamplingParams& params, std::span<const int32_t> prompt, std::span<const int32_t> output,
                        std::span<const int32_t> suppressed, int64_t vocab, std::vector<backend::LogitEdit>& out);

// The OpenAI penalties' subtraction for a token seen `count` times in the output (one expression, so
// every place that computes it gets the same bits).
float penalty_subtract(uint32_t count, float frequency, float presence);

// `logits` after those edits.
std::vector<float> process_logits(std::span<const float> logits, const SamplingParams& params,
                                  std::span<const int32_t> prompt, std::span<const int32_t> output,
                                  std::span<const int32_t> suppressed);

}  // namespace vellum::engine
