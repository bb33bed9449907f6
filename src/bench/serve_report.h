#pragma once
// Aggregates bench-serve timings: TTFT, inter-token latency and end-to-end latency percentiles,
// output tok/s, requests/s and the worst decode gap (the longest pause between two chunks of one stream).

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "bench/sse_client.h"

namespace vellum::bench {

struct Percentiles {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
  size_t count = 0;
};
Percentiles percentiles_of(const std::vector<double>& values);  // zeros when empty

struct ServeReport {
  size_t completed = 0, failed = 0;
  double wall_s = 0, output_tok_s = 0, req_s = 0, worst_gap_ms = 0;
  uint64_t output_tokens = 0;
  Percentiles ttft_ms, itl_ms, e2e_ms;
  std::vector<std::string> errors;  // the first few
};

// `wall_s`: from the first send to the last completion.
ServeReport make_report(const std::vector<CompletionTiming>& timings, double wall_s);
nlohmann::json to_json(const ServeReport& r);
std::string to_text(const ServeReport& r);

}  // namespace vellum::bench
