#pragma once
// What a caller asks the engine for, and what it gets back per step.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/sampler.h"

namespace vellum::engine {

using RequestId = uint64_t;

struct Request {
  std::vector<int32_t> prompt;          // token ids (BOS included when wanted)
  SamplingParams sampling;
  uint32_t max_tokens = 16;             // generated tokens at most
  uint32_t n = 1;                       // independent completions of the prompt (sharing its KV)
  std::vector<int32_t> stop_token_ids;  // besides the model's end-of-generation tokens
  bool ignore_eos = false;
  uint32_t min_tokens = 0;              // end-of-generation and stop ids are suppressed before this many
  int32_t logprobs = -1;                // -1: none; k >= 0: each token's log-probability plus the top k
  uint64_t cache_salt = 0;              // extra prefix-cache key (adapters, isolation)
};

// The log-probability (natural log, of the distribution after logit bias, min_tokens suppression and
// penalties, before temperature and truncation, as OpenAI and vLLM report it; engine/logprobs.h) of a generated token and the top
// alternatives in descending order.
struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0.0f;
  std::vector<std::pair<int32_t, float>> top;
};

enum class FinishReason { None, Stop, Length, Aborted, Error };

// One request's progress in one step: the tokens it gained and, once, why it finished.
struct RequestUpdate {
  RequestId id = 0;
  uint32_t index = 0;           // branch (choice) of an n > 1 request
  std::vector<int32_t> new_tokens;
  FinishReason finish = FinishReason::None;
  std::string error;            // set with FinishReason::Error
  uint32_t prompt_tokens = 0;
  uint32_t cached_tokens = 0;   // prompt tokens whose KV came from the prefix cache
  uint32_t completion_tokens = 0;
  std::vector<TokenLogprob> logprobs;  // one per new token when the request asked for logprobs
};

}  // namespace vellum::engine
