// Issue 6's head-of-line benchmark: 8 steady greedy decoders, then one 4096-token prompt injected
// mid-stream, through the engine core with a per-step token budget of 256, 512 or unbounded.
// Reports the decoders' worst inter-token gap after the injection (and their median gap before it)
// and the long prompt's time to first token. Model: a synthetic llama (dim 256, 4 layers, 4 heads,
// FFN 768, vocab 512, context 8192, F32 weights), generated on first use, so prefill costs seconds.
//
//   ./build/bench/vellum_bench --benchmark_filter=HeadOfLine [--benchmark_out=hol.json]

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>

#include "backend/cpu/cpu_backend.h"
#include "engine/engine_core.h"
#include "model/synthetic_model.h"

namespace {

namespace fs = std::filesystem;
using namespace vellum;
using Clock = std::chrono::steady_clock;

constexpr int kDecoders = 8;
constexpr int kLongPrompt = 4096;
constexpr int kWarmupSteps = 8;  // decode steps before the injection
constexpr int kAfterSteps = 8;   // decode steps after the long prompt's first token

const std::string& model_path() {
  static const std::string path = [] {
    const std::string p = (fs::temp_directory_path() / "vellum_bench_hol_d256_f32.gguf").string();
    model::SynthOptions o;
    o.shape = {"llama", 256, 4, 4, 4, 64, 768, 512, 8192, 10000.0f, 1e-5f, false};
    o.type = "F32";
    o.output_path = p;
    o.verbose = false;
    model::write_synthetic_model(o);
    return p;
  }();
  return path;
}

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

void HeadOfLine(benchmark::State& state) {
  const auto budget = static_cast<uint32_t>(state.range(0));  // 0: unbounded
  const auto file = gguf::GgufFile::open(model_path());
  backend::CpuBackend be(0);
  model::Transformer model(file, be);
  double worst_gap = 0, median_before = 0, ttft = 0;
  uint32_t prompt_steps = 0;
  for (auto _ : state) {
    engine::EngineConfig c;
    c.scheduler.max_num_batched_tokens = budget == 0 ? 1u << 20 : budget;
    c.scheduler.max_num_seqs = 64;
    c.max_seq_len = 8192;
    c.num_blocks = 8192 / 16 + kDecoders * 16 + 16;  // the pool must hold one full-context sequence
    engine::EngineCore core(model, be, c, {});
    for (int i = 0; i < kDecoders; ++i) {
      engine::Request r;
      for (int t = 0; t < 32; ++t) r.prompt.push_back(1 + (i * 53 + t * 7) % 500);
      r.max_tokens = 100000;
      r.sampling.temperature = 0;
      r.ignore_eos = true;
      core.add_request(r);
    }
    std::map<engine::RequestId, Clock::time_point> last_token;
    std::vector<double> gaps_before;
    engine::RequestId long_id = 0;
    Clock::time_point injected{};
    int after = -1;  // steps since the long prompt's first token
    worst_gap = 0;
    for (int step = 0; after < kAfterSteps; ++step) {
      if (step == kWarmupSteps) {
        engine::Request r;
        for (int t = 0; t < kLongPrompt; ++t) r.prompt.push_back(1 + (t * 37) % 500);
        r.max_tokens = 100000;
        r.sampling.temperature = 0;
        r.ignore_eos = true;
        injected = Clock::now();
        long_id = core.add_request(r);
      }
      const auto updates = core.step();
      const auto now = Clock::now();
      if (long_id != 0 && after < 0) ++prompt_steps;
      for (const auto& u : updates) {
        if (u.new_tokens.empty()) continue;
        if (u.id == long_id) {
          if (after < 0) {
            ttft = ms(now - injected);
            after = 0;
          }
          continue;
        }
        auto it = last_token.find(u.id);
        if (it != last_token.end()) {
          const double gap = ms(now - it->second);
          if (long_id == 0) gaps_before.push_back(gap);
          else worst_gap = std::max(worst_gap, gap);
        }
        last_token[u.id] = now;
      }
      if (after >= 0) ++after;
    }
    std::sort(gaps_before.begin(), gaps_before.end());
    median_before = gaps_before.empty() ? 0 : gaps_before[gaps_before.size() / 2];
  }
  state.counters["worst_gap_ms"] = worst_gap;
  state.counters["median_gap_before_ms"] = median_before;
  state.counters["long_prompt_ttft_ms"] = ttft;
  state.counters["prompt_steps"] = prompt_steps;
  state.SetLabel(budget == 0 ? "budget unbounded" : "budget " + std::to_string(budget));
}

BENCHMARK(HeadOfLine)->Arg(0)->Arg(512)->Arg(256)->ArgNames({"budget"})->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

}  // namespace
