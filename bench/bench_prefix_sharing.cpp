// Issue 5's benchmark: K concurrent requests with a common P-token prefix and short distinct
// suffixes, run through the engine core with prefix sharing on and off. Reports the prefill tokens
// the forward passes computed and the wall time. Model: the synthetic "tiny" llama (dim 256, 2 layers,
// context 2048, F32 weights) with a 512-token vocabulary, generated on first use.
//
//   ./build/bench/vellum_bench --benchmark_filter=PrefixSharing

#include <benchmark/benchmark.h>

#include <filesystem>

#include "backend/cpu/cpu_backend.h"
#include "engine/engine_core.h"
#include "model/synthetic_model.h"

namespace {

namespace fs = std::filesystem;
using namespace vellum;

const std::string& model_path() {
  static const std::string path = [] {
    const std::string p = (fs::temp_directory_path() / "vellum_bench_tiny_f32.gguf").string();
    model::SynthOptions o;
    o.shape = model::synthetic_preset("tiny");
    o.type = "F32";
    o.output_path = p;
    o.verbose = false;
    model::write_synthetic_model(o);
    return p;
  }();
  return path;
}

void PrefixSharing(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  const int prefix = static_cast<int>(state.range(1));
  const bool sharing = state.range(2) != 0;
  const auto file = gguf::GgufFile::open(model_path());
  backend::CpuBackend be(0);
  model::Transformer model(file, be);
  uint64_t computed = 0, prefill = 0;
  for (auto _ : state) {
    engine::EngineConfig c;
    c.scheduler.max_num_batched_tokens = 2048;
    c.scheduler.max_num_seqs = 64;
    c.prefix_caching = sharing;
    c.max_seq_len = 2048;
    c.num_blocks = static_cast<uint32_t>(k * ((prefix + 16) / 16 + 2) + 8);
    engine::EngineCore core(model, be, c, {});
    for (int i = 0; i < k; ++i) {
      engine::Request r;
      for (int t = 0; t < prefix; ++t) r.prompt.push_back(1 + (t * 37) % 500);
      for (int t = 0; t < 8; ++t) r.prompt.push_back(1 + (i * 101 + t * 13) % 500);  // distinct suffix
      r.max_tokens = 1;
      r.sampling.temperature = 0;
      core.add_request(r);
    }
    while (core.has_work()) core.step();
    computed = core.total_computed_tokens();
    prefill = computed;  // max_tokens = 1: every computed token is a prompt token
  }
  state.counters["prefill_tokens"] = static_cast<double>(prefill);
  state.counters["requests"] = k;
  state.SetLabel(sharing ? "sharing on" : "sharing off");
}

BENCHMARK(PrefixSharing)
    ->ArgsProduct({{8, 32}, {1000}, {1, 0}})
    ->ArgNames({"K", "P", "sharing"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

}  // namespace
