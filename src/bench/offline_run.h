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
  double steady_tok_s = 0;   // tokens arriving while every sequence decodes (after the last first token, up to
                             // the first finish) / that span; 0 when there is no such span
  double ttft_ms = 0;        // mean over the sequences of submit → first token
  double total_s = 0;
  uint64_t peak_kv_bytes = 0;  // most KV blocks in use at once × bytes per block
  // The engine thread's time over the steady span (stats snapshots taken when the last sequence got
  // its first token and when the first finished): steps and where their time went.
  uint64_t steady_steps = 0;
  engine::StepTimes steady_time;  // elapsed: the span
};

// `salt` makes the prompts distinct between repetitions so the prefix cache never serves them.
// Throws vellum::Error when prompt + generate exceed the context or a request fails.
// Greedy sampling (temperature 0), run_offline's default.
engine::SamplingParams greedy();
OfflineResult run_offline(app::LoadedEngine& loaded, const GridPoint& point, uint64_t salt, uint64_t kv_bytes_per_block,
                          const engine::SamplingParams& sampling = greedy());

}  // namespace vellum::bench
