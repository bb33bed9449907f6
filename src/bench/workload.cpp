#include "bench/workload.h"

#include <random>

#include "core/error.h"

namespace vellum::bench {

void WorkloadSpec::validate() const {
  if (kind != "fixed" && kind != "shared-prefix" && kind != "long-prompt")
    throw_error("--workload '{}': expected fixed, shared-prefix or long-prompt", kind);
  if (arrivals != "poisson" && arrivals != "staggered")
    throw_error("--arrivals '{}': expected poisson or staggered", arrivals);
  if (!(rate >= 0)) throw_error("--rate {} must be >= 0 (0: all at once)", rate);
  if (num_requests == 0) throw_error("--num-requests must be positive");
  if (input_len == 0 || output_len == 0) throw_error("--input-len and --output-len must be positive");
  if (clients == 0) throw_error("--clients must be positive");
  if (kind == "shared-prefix" && prefix_len == 0) throw_error("--prefix-len must be positive");
  if (kind == "long-prompt" && long_len == 0) throw_error("--long-len must be positive");
  if (!(inject_at_s >= 0)) throw_error("--inject-at must be >= 0");
}

std::vector<double> arrival_times(uint32_t n, double rate, const std::string& arrivals, uint64_t seed) {
  std::vector<double> at(n, 0.0);
  if (rate <= 0) return at;
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(rate);
  double t = 0;
  for (uint32_t i = 0; i < n; ++i) {
    at[i] = t;
    t += arrivals == "poisson" ? gap(rng) : 1.0 / rate;
  }
  return at;
}

std::vector<PlannedRequest> plan_workload(const WorkloadSpec& s, PromptBuilder& prompts) {
  s.validate();
  std::vector<PlannedRequest> plan;
  if (s.kind == "long-prompt") {
    // Steady decoders start together and decode for a while; the long prompt lands among them.
    for (uint32_t i = 0; i < s.clients; ++i) plan.push_back({0.0, prompts.make(s.input_len, s.seed + i + 1), s.output_len, "steady"});
    plan.push_back({s.inject_at_s, prompts.make(s.long_len, s.seed + 1000), 16, "long"});
    return plan;
  }
  const auto at = arrival_times(s.num_requests, s.rate, s.arrivals, s.seed);
  const std::string prefix = s.kind == "shared-prefix" ? prompts.make(s.prefix_len, s.seed) + " " : "";
  for (uint32_t i = 0; i < s.num_requests; ++i)
    plan.push_back({at[i], prefix + prompts.make(s.input_len, s.seed + 17 + i), s.output_len, "main"});
  return plan;
}

}  // namespace vellum::bench
