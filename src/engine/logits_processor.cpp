#include "engine/logits_processor.h"

#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace vellum::engine {

bool adjusts_logits(const SamplingParams& p) {
  return !p.logit_bias.empty() || p.repetition_penalty != 1.0f || p.presence_penalty != 0.0f ||
         p.frequency_penalty != 0.0f;
}

std::vector<float> process_logits(std::span<const float> logits, const SamplingParams& params,
                                  std::span<const int32_t> prompt, std::span<const int32_t> output,
                                  std::span<const int32_t> suppressed) {
  std::vector<float> out(logits.begin(), logits.end());
  const auto in_vocab = [&](int32_t t) { return t >= 0 && static_cast<size_t>(t) < out.size(); };
  for (const auto& [token, bias] : params.logit_bias) {
    if (in_vocab(token)) out[static_cast<size_t>(token)] += bias;  // ids were validated against the vocabulary
  }
  for (int32_t t : suppressed) {
    if (in_vocab(t)) out[static_cast<size_t>(t)] = -std::numeric_limits<float>::infinity();
  }
  if (params.repetition_penalty != 1.0f) {
    std::unordered_set<int32_t> seen(prompt.begin(), prompt.end());
    seen.insert(output.begin(), output.end());
    for (int32_t t : seen) {
      if (!in_vocab(t)) continue;
      float& x = out[static_cast<size_t>(t)];
      x = x > 0.0f ? x / params.repetition_penalty : x * params.repetition_penalty;
    }
  }
  if (params.presence_penalty != 0.0f || params.frequency_penalty != 0.0f) {
    std::unordered_map<int32_t, uint32_t> counts;
    for (int32_t t : output) ++counts[t];
    for (const auto& [t, n] : counts) {
      if (!in_vocab(t)) continue;
      out[static_cast<size_t>(t)] -= static_cast<float>(n) * params.frequency_penalty + params.presence_penalty;
    }
  }
  return out;
}

}  // namespace vellum::engine
