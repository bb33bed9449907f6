// KvManager micro-benchmarks: the bookkeeping cost per request and per decode step, which the
// scheduler pays on the engine thread between forward passes.
//
//   ./build/bench/vellum_bench --benchmark_filter=Kv
//
// items/s counts requests (allocate + free) or decode steps; bytes/s is not used.

#include "kv/kv_manager.h"

#include <benchmark/benchmark.h>

#include <numeric>
#include <random>
#include <vector>

using namespace vellum::kv;

namespace {

KvConfig bench_config(uint32_t num_blocks, bool caching) {
  KvConfig c;
  c.block_size = 16;
  c.num_blocks = num_blocks;
  c.enable_prefix_caching = caching;
  c.hash_seed = 42;
  return c;
}

std::vector<TokenId> random_tokens(std::mt19937& rng, size_t n) {
  std::vector<TokenId> t(n);
  for (auto& x : t) x = static_cast<TokenId>(rng() % 32000);
  return t;
}

// Marks everything the sequence may compute as computed; returns how many tokens that was (what a
// forward pass would have computed).
uint64_t compute(KvManager& m, SeqId s) {
  uint64_t n = 0;
  SeqProgress p = m.update_progress(s);
  while (p.num_computable_tokens > 0) {
    n += p.num_computable_tokens;
    p = m.mark_computed(s, p.num_computed_tokens + p.num_computable_tokens);
  }
  return n;
}

// A request with a P-token cached prefix and a 32-token distinct suffix: allocate (prefix hit), mark
// its suffix computed, free. Arg: P.
void BM_KvAllocateFreePrefixHit(benchmark::State& state) {
  const auto prefix_len = static_cast<size_t>(state.range(0));
  KvManager m(bench_config(8192, true));
  std::mt19937 rng(1);
  const auto prefix = random_tokens(rng, prefix_len);
  {
    auto warm = prefix;
    warm.push_back(1);
    if (!m.allocate(0, warm)) state.SkipWithError("warm-up allocation failed");
    compute(m, 0);
    m.free(0);
  }
  // The suffix's first token is the request number: every suffix is new, only the prefix hits.
  auto p = prefix;
  const auto suffix = random_tokens(rng, 32);
  p.insert(p.end(), suffix.begin(), suffix.end());
  SeqId id = 1;
  uint64_t hit = 0;
  for (auto _ : state) {
    p[prefix_len] = static_cast<TokenId>(id);
    auto r = m.allocate(id, p);
    hit += r->progress.num_computed_tokens;
    compute(m, id);
    m.free(id);
    ++id;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["hit_tokens/req"] = benchmark::Counter(static_cast<double>(hit) / static_cast<double>(state.iterations()));
  state.counters["prompt_tokens/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * (prefix_len + 32)), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_KvAllocateFreePrefixHit)->Arg(128)->Arg(1024)->Arg(8192);

// The same requests with prefix caching off: the bookkeeping floor (no hashing, no lookups).
void BM_KvAllocateFreeNoCaching(benchmark::State& state) {
  const auto prefix_len = static_cast<size_t>(state.range(0));
  KvManager m(bench_config(8192, false));
  std::mt19937 rng(1);
  auto p = random_tokens(rng, prefix_len + 32);
  SeqId id = 1;
  for (auto _ : state) {
    p[prefix_len] = static_cast<TokenId>(id);
    benchmark::DoNotOptimize(m.allocate(id, p));
    compute(m, id);
    m.free(id);
    ++id;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_KvAllocateFreeNoCaching)->Arg(128)->Arg(1024)->Arg(8192);

// Distinct prompts on a full cache: every request misses and evicts cached blocks.
void BM_KvAllocateFreeMissEvict(benchmark::State& state) {
  const auto len = static_cast<size_t>(state.range(0));
  KvManager m(bench_config(1024, true));
  std::mt19937 rng(2);
  std::vector<std::vector<TokenId>> prompts;
  for (int i = 0; i < 256; ++i) prompts.push_back(random_tokens(rng, len));
  SeqId id = 1;
  for (auto _ : state) {
    const auto& p = prompts[id % prompts.size()];
    benchmark::DoNotOptimize(m.allocate(id, p));
    compute(m, id);
    m.free(id);
    ++id;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["evictions/req"] =
      benchmark::Counter(static_cast<double>(m.stats().evictions) / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_KvAllocateFreeMissEvict)->Arg(1024);

// K concurrent requests sharing a P-token prefix (P = 1000) with distinct 16-token suffixes, admitted
// in the same step: the first computes the prefix, the others share its pending blocks and wait.
// Args: K, prefix caching on/off. computed_tokens/round is the prefill work a forward pass would do
// (the manager-level half of issue 5's benchmark; wall time needs the engine).
void BM_KvConcurrentSharedPrefix(benchmark::State& state) {
  const auto k = static_cast<SeqId>(state.range(0));
  const bool caching = state.range(1) != 0;
  const size_t prefix_len = 1000;
  KvManager m(bench_config(8192, caching));
  std::mt19937 rng(3);
  std::vector<std::vector<TokenId>> prompts;
  uint64_t round = 0, computed = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const auto prefix = random_tokens(rng, prefix_len);  // a fresh prefix each round: no warm cache
    prompts.clear();
    for (SeqId i = 0; i < k; ++i) {
      auto p = prefix;
      const auto suffix = random_tokens(rng, 16);
      p.insert(p.end(), suffix.begin(), suffix.end());
      prompts.push_back(std::move(p));
    }
    state.ResumeTiming();
    const SeqId base = round * k;
    for (SeqId i = 0; i < k; ++i) benchmark::DoNotOptimize(m.allocate(base + i, prompts[i]));
    for (SeqId i = 0; i < k; ++i) computed += compute(m, base + i);  // the first computes the prefix
    for (SeqId i = 0; i < k; ++i) computed += compute(m, base + i);  // the others, once it is done
    for (SeqId i = 0; i < k; ++i) m.free(base + i);
    ++round;
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(k));
  state.counters["computed_tokens/round"] = static_cast<double>(computed) / static_cast<double>(round);
  state.counters["prompt_tokens/round"] = static_cast<double>(k * (prefix_len + 16));
}
BENCHMARK(BM_KvConcurrentSharedPrefix)->Args({8, 1})->Args({8, 0})->Args({32, 1})->Args({32, 0});

// One decode step for each of 64 running sequences: append the sampled token, slot mapping, mark it
// computed. Sequences restart when they reach 2048 tokens.
void BM_KvDecodeStep(benchmark::State& state) {
  constexpr SeqId kSeqs = 64;
  KvManager m(bench_config(kSeqs * 2048 / 16 + 64, true));
  std::mt19937 rng(4);
  for (SeqId s = 0; s < kSeqs; ++s) {
    (void)m.allocate(s, random_tokens(rng, 100 + s));
    compute(m, s);
  }
  std::vector<int64_t> slots;
  SeqId next = kSeqs;
  std::vector<SeqId> ids(kSeqs);
  std::iota(ids.begin(), ids.end(), SeqId{0});
  for (auto _ : state) {
    slots.clear();
    for (auto& s : ids) {
      if (m.num_tokens(s) >= 2048) {
        m.free(s);
        s = next++;
        (void)m.allocate(s, random_tokens(rng, 100));
        compute(m, s);
      }
      const TokenId tok = static_cast<TokenId>(rng() % 32000);
      benchmark::DoNotOptimize(m.append(s, std::span<const TokenId>(&tok, 1)));
      const uint32_t n = m.num_tokens(s);
      m.slot_mapping(s, n - 1, n, slots);
      m.mark_computed(s, n);
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kSeqs));
}
BENCHMARK(BM_KvDecodeStep);

}  // namespace
