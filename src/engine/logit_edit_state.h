#pragma once
// A sequence's logit edits (logits_processor.h) kept up to date token by token. Rebuilding them
// every step sorts the whole prompt and output (tens of µs a sequence: ~10 ms a step at 256
// sequences with a repetition penalty); here a new token updates or inserts its one entry, and a
// step copies the list out. The edits are append_logit_edits' bit for bit.

#include <cstdint>
#include <span>
#include <vector>

#include "backend/logit_edits.h"
#include "engine/sampler.h"

namespace vellum::engine {

class LogitEditState {
 public:
  // The edits of `params` over `prompt` and `output` so far (ids outside [0, vocab) skipped).
  void reset(const SamplingParams& params, std::span<const int32_t> prompt, std::span<const int32_t> output, int64_t vocab);
  bool ready() const { return ready_; }
  // One more output token.
  void add_output(int32_t token);
  // Appends the edits, with the ids of `suppressed` set to -inf, to `out` (tokens increasing).
  void append(std::span<const int32_t> suppressed, std::vector<backend::LogitEdit>& out) const;

 private:
  bool ready_ = false;
  float repetition_ = 1, frequency_ = 0, presence_ = 0;
  int64_t vocab_ = 0;
  std::vector<backend::LogitEdit> edits_;  // tokens increasing; no suppression
  std::vector<uint32_t> counts_;           // each entry's token's occurrences in the output
};

}  // namespace vellum::engine
