#pragma once
// Runs a prompt suite on one loaded engine, every prompt submitted at once (the engine's
// --max-num-seqs decides how many run together), and returns each prompt's generated token ids.
// Shared by `vellum proof` (both sides) and its tests.

#include <string>
#include <vector>

#include "app/loaded_engine.h"
#include "bench/token_compare.h"
#include "engine/sampler.h"

namespace vellum::bench {

struct SuiteOptions {
  uint32_t max_tokens = 64;
  engine::SamplingParams sampling;  // seed is the base; prompt i uses seed + i
  bool ignore_eos = false;
};

// Throws vellum::Error for a prompt that encodes to nothing, one too long for the context, or a
// request the engine ends with an error.
TokenRuns run_suite(app::LoadedEngine& loaded, const std::vector<std::string>& prompts, const SuiteOptions& options);

}  // namespace vellum::bench
