#pragma once
// vellum public API: settings for opening a model and for one generation request. Plain values,
// no internal headers. Out-of-range values are refused with an error naming the parameter.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace vellum {

// How to load and run a model (the same settings as `vellum run` / `vellum serve` flags).
struct ModelOptions {
  std::string model;                      // GGUF file
  std::string device = "auto";            // cpu | cuda | cuda:N | auto
  unsigned threads = 0;                   // CPU threads (0: all cores)
  uint32_t context = 0;                   // per-sequence context (0: the model's, at most 4096)
  uint32_t block_size = 16;               // KV block size in tokens
  uint32_t kv_cache_mib = 0;              // KV pool in MiB (0: context × min(max_num_seqs, 8) tokens)
  uint32_t max_num_batched_tokens = 512;  // tokens per forward step
  uint32_t max_num_seqs = 64;             // running sequences at most
  uint32_t max_prefill_chunk = 0;         // prompt tokens per sequence per step (0: the budget)
  bool prefix_caching = true;
};

// One request: sampling, limits and what to report.
struct GenerateOptions {
  float temperature = 0.8f;  // 0: greedy
  int32_t top_k = 40;        // 0: off
  float top_p = 0.95f;       // 1: off
  float min_p = 0.05f;       // 0: off
  uint64_t seed = 0;         // same seed, same output (whatever else the engine runs)
  float repetition_penalty = 1.0f;  // (0, 2], 1: off
  float presence_penalty = 0.0f;    // [-2, 2]
  float frequency_penalty = 0.0f;   // [-2, 2]
  std::vector<std::pair<int32_t, float>> logit_bias;  // (token id, bias in [-100, 100])
  uint32_t max_tokens = 16;
  uint32_t min_tokens = 0;           // end-of-generation and stop ids are suppressed before this many
  uint32_t n = 1;                    // completions of the prompt (events carry their index)
  std::vector<std::string> stop;     // stop strings (not included in the text)
  std::vector<int32_t> stop_token_ids;
  bool ignore_eos = false;
  int32_t logprobs = -1;             // -1: none; k in [0, 20]: each token's log-probability and the top k
  bool add_bos = true;               // for text prompts: prepend the model's BOS token when it has one
};

}  // namespace vellum
