#include "app/penalty_options.h"

#include <CLI/CLI.hpp>

namespace vellum::app {

void add_penalty_options(CLI::App& cmd, engine::SamplingParams& sampling) {
  // Ranges are SamplingParams::validate's: a bad value is named before the model loads.
  cmd.add_option("--repeat-penalty", sampling.repetition_penalty,
                 "Repetition penalty over prompt and output tokens (1: off; llama.cpp / vLLM semantics)")
      ->capture_default_str();
  cmd.add_option("--presence-penalty", sampling.presence_penalty, "OpenAI presence penalty (0: off)")->capture_default_str();
  cmd.add_option("--frequency-penalty", sampling.frequency_penalty, "OpenAI frequency penalty (0: off)")->capture_default_str();
}

}  // namespace vellum::app
