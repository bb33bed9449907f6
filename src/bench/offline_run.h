#pragma once
// One measurement of `vellum bench`: `batch` sequences of `prompt` random tokens each, submitted at
// once, each generating exactly `generate` tokens (ignore_eos; greedy unless `sampling` says
// otherwise, each request seeded by its position). Timings are taken at the
// consumer side of the engine's streams.

#include <cstdint>

#include "app/loaded_engine.h"
#include "bench/grid.h"
#include "engine/sampler.h"

namespace vellum::bench {

struct OfflineResult {
  double prefill_tok_s = 0;  // batch·prompt / time until every sequence had its first token
  double decode_tok_s = 0;   // batch·generate / whole run time (output throughput, prefill included)
  double steady_tok_s = 0;   // tokens arriving after the last first token / that span (all sequences decoding)
  double ttft_ms = 0;        // mean over the sequences of submit → first token
  double total_s = 0;
  uint64_t peak_kv_bytes = 0;  // most KV blocks in use at once × bytes per block
};

// `salt` makes the prompts distinct between repetitions so the prefix cache never serves them.
// Throws vellum::Error when prompt + generate exceed the context or a request fails.
// Greedy sampling (temperature 0), run_offline's default.
engine::SamplingParams greedy();
OfflineResult run_offline(app::LoadedEngine& loaded, const GridPoint& point, uint64_t salt, uint64_t kv_bytes_per_block,
                          const engine::SamplingParams& sampling = greedy());

}  // namespace vellum::bench
