// --gpu-memory-utilization sizing arithmetic (app/kv_sizing.h), host-side: CI has no GPU, so the
// device numbers are given as cudaMemGetInfo would report them.

#include <gtest/gtest.h>

#include <string>

#include "app/engine_options.h"
#include "app/kv_sizing.h"
#include "app/loaded_engine.h"
#include "core/error.h"
#include "kv/kv_config.h"
#include "kv/kv_layout.h"
#include "stories_fixture.h"

#include <filesystem>
#include <unistd.h>

namespace vellum::app {
namespace {

constexpr uint64_t GiB = 1ull << 30;

// Llama-3-8B's published shape (dim 4096, 32 heads, 8 KV heads of 128, FFN 14336, vocab 128256).
model::HParams llama3_8b() {
  model::HParams hp;
  hp.dim = 4096, hp.layers = 32, hp.heads = 32, hp.kv_heads = 8, hp.head_dim = 128, hp.ffn = 14336, hp.vocab = 128256;
  return hp;
}

TEST(KvSizing, BudgetIsFractionOfTotalLessWhatIsInUseAndTheReserve) {
  // 80 GiB device, 6 GiB in use after loading (weights + context), 2 GiB reserve, F = 0.9:
  // 72 − 6 − 2 = 64 GiB.
  EXPECT_EQ(gpu_kv_budget(0.9, 80 * GiB, 74 * GiB, 2 * GiB, 1 * GiB), uint64_t(0.9 * 80 * GiB) - 8 * GiB);
  EXPECT_EQ(gpu_kv_budget(1.0, 80 * GiB, 80 * GiB, 0, 1), 80 * GiB);
  // Memory used by other processes counts too (free is what the device has left).
  EXPECT_EQ(gpu_kv_budget(0.5, 100 * GiB, 60 * GiB, 0, 1), 10 * GiB);
}

TEST(KvSizing, TooLittleMemoryIsAnErrorNamingTheNumbers) {
  try {
    gpu_kv_budget(0.5, 80 * GiB, 45 * GiB, 2 * GiB, 8 * GiB);  // 40 − 35 − 2 = 3 GiB < 8 GiB
    FAIL() << "a pool below one context was accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    for (const char* s : {"--gpu-memory-utilization 0.5", "40.00 GiB", "80.00 GiB", "3.00 GiB", "35.00 GiB",
                          "2.00 GiB", "8.00 GiB"}) {
      EXPECT_NE(m.find(s), std::string::npos) << s << " missing in: " << m;
    }
  }
  // In use already above the fraction: zero left, still a clear error, no wraparound.
  EXPECT_THROW(gpu_kv_budget(0.1, 80 * GiB, 10 * GiB, 0, 1), Error);
  EXPECT_THROW(gpu_kv_budget(0.0, 80 * GiB, 80 * GiB, 0, 1), Error);
  EXPECT_THROW(gpu_kv_budget(1.5, 80 * GiB, 80 * GiB, 0, 1), Error);
}

TEST(KvSizing, PoolNeverExceedsFourContextsPerSequence) {
  // stories260K on an H200 at 0.9 got 13 million blocks before this cap; 64 sequences of 512 tokens
  // in blocks of 16 need 32 blocks each.
  EXPECT_EQ(useful_kv_blocks(13'000'000, 64, 32), 4u * 64u * 32u);
  // An 8B model's budget binds long before the cap.
  EXPECT_EQ(useful_kv_blocks(30'000, 256, 64), 30'000u);
  EXPECT_EQ(useful_kv_blocks(0, 1, 1), 0u);
}

TEST(KvSizing, ActivationReserveFollowsTheModelAndTokenBudget) {
  const model::HParams hp = llama3_8b();
  // Per token (4·4096 + 4096 + 2·1024 + 3·14336 + 128256) f32 = 193 792 floats; 512 tokens; plus the
  // 128256 × 4096 BF16 output matrix and the fixed 512 MiB.
  EXPECT_EQ(activation_reserve_bytes(hp, 512), 512ull * 193792 * 4 + 128256ull * 4096 * 2 + (512ull << 20));
  EXPECT_GT(activation_reserve_bytes(hp, 2048), activation_reserve_bytes(hp, 512));
}

TEST(KvSizing, SixteenBitKvHalvesTheBytesSo256ContextsOf1kFitOnAnH100) {
  const auto f32 = kv::KvLayout::uniform(32, 8, 128, TensorType::F32, 16);
  const auto f16 = kv::KvLayout::uniform(32, 8, 128, TensorType::F16, 16);
  EXPECT_EQ(f16.bytes_per_block() * 2, f32.bytes_per_block());
  EXPECT_EQ(f16.bytes_per_token(), 128u * 1024);  // 32 layers × K,V × 8 × 128 × 2 bytes
  // 80 GB H100 (79.1 GiB reported), a Q4_K_M 8B (~4.6 GiB weights) + ~0.6 GiB context in use.
  const uint64_t total = 85'000'000'000ull, free = total - uint64_t(5.2 * GiB);
  const uint64_t budget = gpu_kv_budget(0.9, total, free, activation_reserve_bytes(llama3_8b(), 512), 1);
  const uint64_t blocks_f16 = kv::blocks_for_budget(budget, f16), blocks_f32 = kv::blocks_for_budget(budget, f32);
  const uint64_t per_seq = kv::blocks_for_tokens(1024 + 16, 16);
  EXPECT_GE(blocks_f16, 256 * per_seq);
  EXPECT_LT(blocks_f32, 256 * per_seq);
  EXPECT_EQ(blocks_f16 / 2, blocks_f32);
}

TEST(KvSizing, FlagsParseAndValidate) {
  EngineOptions base;
  const EngineOptions o = parse_engine_flags("--gpu-memory-utilization 0.5 --kv-cache-dtype bf16", base);
  EXPECT_DOUBLE_EQ(o.gpu_memory_utilization, 0.5);
  EXPECT_EQ(o.kv_cache_dtype, "bf16");
  EXPECT_DOUBLE_EQ(base.gpu_memory_utilization, 0.9);
  EXPECT_EQ(base.kv_cache_dtype, "auto");
  EXPECT_THROW(parse_engine_flags("--gpu-memory-utilization 0", base), Error);
  EXPECT_THROW(parse_engine_flags("--gpu-memory-utilization 1.01", base), Error);
  try {
    parse_engine_flags("--kv-cache-dtype q4", base);
    FAIL() << "an unknown KV type was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--kv-cache-dtype 'q4'"), std::string::npos) << e.what();
  }
}

// The CPU backend keeps its f32 pool sized by tokens; a 16-bit KV type is refused by name.
TEST(KvSizing, CpuEngineKeepsF32AndRefuses16BitKv) {
  EngineOptions o;
  o.model = testing::stories_model_path();  // the real stories260K, converted once per process
  o.device = "cpu";
  o.threads = 1;
  const auto le = LoadedEngine::load(o);
  EXPECT_NE(le->summary().find("F32)"), std::string::npos) << le->summary();
  for (const char* t : {"f16", "bf16"}) {
    o.kv_cache_dtype = t;
    try {
      LoadedEngine::load(o);
      FAIL() << t << " KV was accepted on the CPU";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("--kv-cache-dtype ") + t + ": the cpu backend stores the KV cache in f32 only"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace vellum::app
