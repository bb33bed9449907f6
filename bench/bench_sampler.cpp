// Host sampler micro-benchmarks: one token drawn from a 128 256-token row of random logits (llama3's
// vocabulary size), as the engine does for every sampled row that is copied back whole (top-k off:
// the OpenAI API's default; or any row with penalties, bias or logprobs). Round 18: without top-k
// the sampler no longer sorts the whole vocabulary (Sampler::sample_all).
//
//   ./build/bench/vellum_bench --benchmark_filter=Sampler

#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "engine/sampler.h"

namespace {

void BM_Sampler(benchmark::State& state) {
  std::mt19937 gen(3);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> logits(128256);
  for (float& x : logits) x = normal(gen);
  vellum::engine::SamplingParams p;
  p.temperature = 1.0f;
  p.top_k = static_cast<int32_t>(state.range(0));
  p.top_p = static_cast<float>(state.range(1)) / 100.0f;
  p.min_p = static_cast<float>(state.range(2)) / 100.0f;
  vellum::engine::Sampler s(p);
  for (auto _ : state) benchmark::DoNotOptimize(s.sample(logits));
}
// (top_k, top_p %, min_p %): OpenAI's default (no cuts), vellum run's (40, 95, 5), top-p alone, min-p alone.
BENCHMARK(BM_Sampler)->Args({0, 100, 0})->Args({40, 95, 5})->Args({0, 90, 0})->Args({0, 100, 5})->Unit(benchmark::kMicrosecond);

}  // namespace
