#pragma once
// Shared by the engine-core tests: an EngineCore on the real stories260K model (CPU backend) that
// collects each request's tokens, plus small request and config builders.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "engine/engine_core.h"
#include "stories_fixture.h"

namespace vellum::engine::test {

inline const gguf::GgufFile& stories() { return testing::stories_model(); }

struct Harness {
  backend::CpuBackend be{2};
  model::Transformer model{stories(), be};
  EngineCore core;
  std::map<RequestId, std::vector<int32_t>> outputs;
  std::map<RequestId, std::vector<TokenLogprob>> logprobs;
  std::map<RequestId, RequestUpdate> finished;

  explicit Harness(EngineConfig c) : core(model, be, c, {2}) {}

  void collect(const std::vector<RequestUpdate>& updates) {
    for (const auto& u : updates) {
      auto& out = outputs[u.id];
      out.insert(out.end(), u.new_tokens.begin(), u.new_tokens.end());
      auto& lp = logprobs[u.id];
      lp.insert(lp.end(), u.logprobs.begin(), u.logprobs.end());
      if (u.finish != FinishReason::None) finished[u.id] = u;
    }
  }

  void run_to_end() {
    for (int steps = 0; core.has_work(); ++steps) {
      ASSERT_LT(steps, 10000) << "engine does not finish";
      collect(core.step());
    }
  }
};

// The tokens `r` gets when it runs alone in a fresh engine with `c`: the reference every
// batch-invariance test compares against.
inline std::vector<int32_t> run_alone(const EngineConfig& c, const Request& r) {
  Harness h(c);
  const RequestId id = h.core.add_request(r);
  h.run_to_end();
  return h.outputs[id];
}

// A BOS then n - 1 deterministic ids (distinct for n < 500).
inline std::vector<int32_t> tokens(int n, int salt) {
  std::vector<int32_t> t{1};
  for (int i = 1; i < n; ++i) t.push_back(3 + (i * 31 + salt * 17) % 500);
  return t;
}

inline Request greedy(std::vector<int32_t> prompt, uint32_t max_tokens = 8) {
  Request r;
  r.prompt = std::move(prompt);
  r.max_tokens = max_tokens;
  r.sampling.temperature = 0;
  r.ignore_eos = true;
  return r;
}

inline EngineConfig config(uint32_t budget = 2048, uint32_t block_size = 16, bool caching = true, uint32_t blocks = 0) {
  EngineConfig c;
  c.scheduler.max_num_batched_tokens = budget;
  c.scheduler.max_num_seqs = 16;
  c.block_size = block_size;
  c.prefix_caching = caching;
  c.num_blocks = blocks;
  c.max_seq_len = 512;
  return c;
}

class EngineCoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(testing::kStoriesDir / "stories260K.bin")) {
      GTEST_SKIP() << "fixture not found at " << testing::kStoriesDir;
    }
  }
};

}  // namespace vellum::engine::test
