#pragma once
// bench-serve workloads: what to send and when. A plan is a list of requests with their start offsets;
// the runner (cmd_bench_serve) also bounds concurrency, request count and time.

#include <cstdint>
#include <string>
#include <vector>

#include "bench/prompt_builder.h"

namespace vellum::bench {

struct PlannedRequest {
  double at_s = 0;          // offset from the run's start (the long prompt: from when all steady decoders stream)
  std::string prompt;
  uint32_t max_tokens = 0;
  std::string group;        // "main", or "steady"/"long" in the long-prompt workload
};

struct WorkloadSpec {
  std::string kind = "fixed";       // fixed | shared-prefix | long-prompt
  uint32_t num_requests = 32;       // fixed, shared-prefix
  uint32_t input_len = 128;         // prompt tokens (shared-prefix: the distinct suffix)
  uint32_t output_len = 64;
  uint32_t prefix_len = 256;        // shared-prefix: common prefix tokens
  uint32_t clients = 8;             // shared-prefix: concurrency; long-prompt: steady decoders
  uint32_t long_len = 1024;         // long-prompt: the injected prompt's tokens
  double inject_at_s = 0.2;         // long-prompt: seconds after every steady decoder streams its first token
  double rate = 0;                  // requests/s; 0: all at once (bounded by concurrency)
  std::string arrivals = "poisson"; // poisson | staggered
  uint64_t seed = 0;

  // Throws vellum::Error naming the flag of an invalid value.
  void validate() const;
};

// Arrival offsets for n requests at `rate` (0: all zero): Poisson (exponential gaps) or staggered (1/rate apart).
std::vector<double> arrival_times(uint32_t n, double rate, const std::string& arrivals, uint64_t seed);

std::vector<PlannedRequest> plan_workload(const WorkloadSpec& spec, PromptBuilder& prompts);

}  // namespace vellum::bench
