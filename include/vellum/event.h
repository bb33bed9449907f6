#pragma once
// vellum public API: what a generation stream yields.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace vellum {

enum class FinishReason { None, Stop, Length, Aborted, Error };

// "stop", "length", "aborted", "error" ("" for None).
const char* to_string(FinishReason reason);

struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0.0f;                         // natural log, after bias and penalties
  std::vector<std::pair<int32_t, float>> top;   // most likely alternatives, descending
};

// New output of one completion (index < n). The last event of a completion has finish != None and
// the usage counts.
struct Event {
  uint32_t index = 0;
  std::vector<int32_t> tokens;   // new token ids
  std::string text;              // new text: whole UTF-8 characters, stop strings removed
  FinishReason finish = FinishReason::None;
  std::string error;             // with FinishReason::Error
  uint32_t prompt_tokens = 0, cached_tokens = 0, completion_tokens = 0;
  std::vector<TokenLogprob> logprobs;  // parallel to tokens when asked for
};

}  // namespace vellum
