#pragma once
// The penalty flags shared by run, bench and proof (llama.cpp's names): --repeat-penalty,
// --presence-penalty and --frequency-penalty, into a request's SamplingParams.

#include "engine/sampler.h"

namespace CLI {
class App;
}

namespace vellum::app {

void add_penalty_options(CLI::App& cmd, engine::SamplingParams& sampling);

}  // namespace vellum::app
