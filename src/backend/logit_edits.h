#pragma once
// Sparse edits of logit rows before sampling: a request's logit bias, its suppressed tokens (before
// min_tokens) and its penalties touch only the tokens it lists or has seen, so a backend applies
// them to the rows in place (Backend::edit_logits) and the rows can still be reduced there (argmax,
// top-k, draws) instead of being copied back whole. The host's logits processor applies the same
// edits, so both give the same bits.

#include <cstdint>
#include <span>

namespace vellum::backend {

// One token's edits, applied in this order (vLLM V1's): bias, suppression, repetition penalty, the
// OpenAI penalties. Laid out for a device backend to copy as it is.
struct LogitEdit {
  enum : uint32_t { kBias = 1, kSuppress = 2, kRepetition = 4, kSubtract = 8 };
  int32_t token = 0;
  uint32_t ops = 0;
  float bias = 0;        // kBias: x += bias
  float repetition = 1;  // kRepetition: x > 0 ? x / r : x * r
  float subtract = 0;    // kSubtract: x -= subtract (count × frequency + presence, computed once)
};

inline float apply_logit_edit(float x, const LogitEdit& e) {
  if (e.ops & LogitEdit::kBias) x += e.bias;
  if (e.ops & LogitEdit::kSuppress) x = -__builtin_huge_valf();
  if (e.ops & LogitEdit::kRepetition) x = x > 0.0f ? x / e.repetition : x * e.repetition;
  if (e.ops & LogitEdit::kSubtract) x -= e.subtract;
  return x;
}

// A step's edits: logit row r's are edits[rows[r], rows[r + 1]) (rows: one entry more than the
// logit rows, or empty for none), with tokens strictly increasing within a row (so a device can
// apply a row's edits in parallel). Throws vellum::Error naming the problem otherwise, or for a
// token outside [0, vocab).
void check_logit_edits(std::span<const LogitEdit> edits, std::span<const uint32_t> rows, size_t logit_rows, int64_t vocab);

}  // namespace vellum::backend
