#include "engine/logits_processor.h"

#include <algorithm>

namespace vellum::engine {

bool adjusts_logits(const SamplingParams& p) {
  return !p.logit_bias.empty() || p.repetition_penalty != 1.0f || p.presence_penalty != 0.0f ||
         p.frequency_penalty != 0.0f;
}

float penalty_subtract(uint32_t count, float frequency, float presence) {
  return static_cast<float>(count) * frequency + presence;
}

void append_logit_edits(const SamplingParams& params, std::span<const int32_t> prompt, std::span<const int32_t> output,
                        std::span<const int32_t> suppressed, int64_t vocab, std::vector<backend::LogitEdit>& out) {
  using backend::LogitEdit;
  // Every touch as a one-op edit, then sorted by token (stably: biases add in list order) and merged.
  thread_local std::vector<LogitEdit> touches;
  touches.clear();
  const auto in_vocab = [&](int32_t t) { return t >= 0 && t < vocab; };
  for (const auto& [token, bias] : params.logit_bias) {
    if (in_vocab(token)) touches.push_back({token, LogitEdit::kBias, bias});
  }
  for (int32_t t : suppressed) {
    if (in_vocab(t)) touches.push_back({t, LogitEdit::kSuppress});
  }
  if (params.repetition_penalty != 1.0f) {
    for (const auto tokens : {prompt, output}) {
      for (int32_t t : tokens) {
        if (in_vocab(t)) touches.push_back({t, LogitEdit::kRepetition, 0.0f, params.repetition_penalty});
      }
    }
  }
  const bool penalties = params.presence_penalty != 0.0f || params.frequency_penalty != 0.0f;
  if (penalties) {
    for (int32_t t : output) {
      if (in_vocab(t)) touches.push_back({t, LogitEdit::kSubtract});
    }
  }
  std::stable_sort(touches.begin(), touches.end(), [](const LogitEdit& a, const LogitEdit& b) { return a.token < b.token; });
  for (size_t i = 0; i < touches.size();) {
    LogitEdit e{touches[i].token};
    uint32_t count = 0;  // the token's occurrences in the output
    for (; i < touches.size() && touches[i].token == e.token; ++i) {
      const LogitEdit& t = touches[i];
      if (t.ops == LogitEdit::kBias) e.bias = (e.ops & LogitEdit::kBias) ? e.bias + t.bias : t.bias;
      if (t.ops == LogitEdit::kRepetition) e.repetition = t.repetition;
      if (t.ops == LogitEdit::kSubtract) ++count;
      e.ops |= t.ops;
    }
    if (count > 0) e.subtract = penalty_subtract(count, params.frequency_penalty, params.presence_penalty);
    out.push_back(e);
  }
}

std::vector<float> process_logits(std::span<const float> logits, const SamplingParams& params,
                                  std::span<const int32_t> prompt, std::span<const int32_t> output,
                                  std::span<const int32_t> suppressed) {
  std::vector<float> out(logits.begin(), logits.end());
  thread_local std::vector<backend::LogitEdit> edits;
  edits.clear();
  append_logit_edits(params, prompt, output, suppressed, static_cast<int64_t>(out.size()), edits);
  for (const backend::LogitEdit& e : edits) out[static_cast<size_t>(e.token)] = backend::apply_logit_edit(out[static_cast<size_t>(e.token)], e);
  return out;
}

}  // namespace vellum::engine
