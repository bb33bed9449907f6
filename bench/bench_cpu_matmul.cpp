// CPU matmul (backend/cpu/cpu_matmul.h) at L0.4B's shapes: decode (1 token row) and prefill (512
// rows), per weight type and ISA level, 1 and 2 threads. Reports weights streamed per second
// ("wbytes", bytes/s) and, for prefill, multiply-adds per second ("mac"). Decode weights rotate among
// copies totalling >= 512 MiB so that no cache level holds them (the L3 here is 300 MB).
//
//   ./build/bench/vellum_bench --benchmark_filter=CpuMatmul --benchmark_format=json

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "backend/cpu/cpu_features.h"
#include "backend/cpu/cpu_matmul.h"
#include "quant/quant.h"

namespace vellum {
namespace {

using backend::Tensor;
using backend::Weight;
using backend::cpu::IsaLevel;

struct Weights {
  std::vector<uint8_t> bytes;  // `copies` copies of a rows × cols matrix
  size_t matrix_bytes = 0;
  int copies = 1;
};

// rows × cols of `type`, filled from 16 quantized random rows (values do not change speed).
Weights make(TensorType type, int64_t rows, int64_t cols, bool rotate) {
  Weights w;
  const size_t rb = row_bytes(type, static_cast<uint64_t>(cols));
  w.matrix_bytes = rb * static_cast<size_t>(rows);
  w.copies = rotate ? static_cast<int>(std::max<size_t>(1, (size_t(512) << 20) / w.matrix_bytes + 1)) : 1;
  std::vector<uint8_t> seed_rows(rb * 16);
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 0.05f);
  std::vector<float> src(static_cast<size_t>(cols));
  for (int i = 0; i < 16; ++i) {
    for (auto& v : src) v = dist(rng);
    quant::quantize_row(type, src.data(), seed_rows.data() + rb * i, cols);
  }
  w.bytes.resize(w.matrix_bytes * static_cast<size_t>(w.copies));
  for (size_t r = 0; r < w.bytes.size() / rb; ++r) std::memcpy(w.bytes.data() + r * rb, seed_rows.data() + rb * (r % 16), rb);
  return w;
}

void BM_CpuMatmul(benchmark::State& state, TensorType type, int64_t rows, int64_t k, int64_t n) {
  const auto level = static_cast<IsaLevel>(state.range(0));
  const auto threads = static_cast<unsigned>(state.range(1));
  if (level > backend::cpu::detected_isa()) {
    state.SkipWithError("ISA level not available");
    return;
  }
  const Weights w = make(type, n, k, rows == 1);
  std::vector<float> x(static_cast<size_t>(rows * k)), out(static_cast<size_t>(rows * n));
  std::mt19937 rng(2);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (auto& v : x) v = dist(rng);
  ThreadPool pool(threads);
  backend::cpu::CpuMatmul mm;
  int copy = 0;
  for (auto _ : state) {
    const Weight wt{"w", type, k, n, w.bytes.data() + w.matrix_bytes * static_cast<size_t>(copy)};
    mm.run(pool, wt, Tensor{x.data(), rows, k}, Tensor{out.data(), rows, n}, nullptr, level);
    benchmark::DoNotOptimize(out.data());
    copy = (copy + 1) % w.copies;
  }
  state.counters["wbytes"] = benchmark::Counter(double(w.matrix_bytes), benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1024);
  state.counters["mac"] = benchmark::Counter(double(rows * k * n), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(std::string(tensor_type_name(type)) + " " + std::string(backend::cpu::isa_name(level)));
}

void args(benchmark::internal::Benchmark* b) {
  for (int level : {2, 1, 0}) {
    for (int threads : {1, 2}) b->Args({level, threads});
  }
  b->ArgNames({"isa", "threads"})->UseRealTime()->Unit(benchmark::kMicrosecond);
}

void args_fast(benchmark::internal::Benchmark* b) {  // prefill: the scalar level is too slow to be worth timing
  for (int level : {2, 1}) {
    for (int threads : {1, 2}) b->Args({level, threads});
  }
  b->ArgNames({"isa", "threads"})->UseRealTime()->Unit(benchmark::kMillisecond);
}

// Decode, gate/up shape: 1 × 896 → 4864.
BENCHMARK_CAPTURE(BM_CpuMatmul, decode_896x4864_F16, TensorType::F16, 1, 896, 4864)->Apply(args);
BENCHMARK_CAPTURE(BM_CpuMatmul, decode_896x4864_Q8_0, TensorType::Q8_0, 1, 896, 4864)->Apply(args);
BENCHMARK_CAPTURE(BM_CpuMatmul, decode_896x4864_Q5_0, TensorType::Q5_0, 1, 896, 4864)->Apply(args);
// Decode, down shape: 1 × 4864 → 896 (K-quants need k % 256 == 0).
BENCHMARK_CAPTURE(BM_CpuMatmul, decode_4864x896_Q4_K, TensorType::Q4_K, 1, 4864, 896)->Apply(args);
BENCHMARK_CAPTURE(BM_CpuMatmul, decode_4864x896_Q6_K, TensorType::Q6_K, 1, 4864, 896)->Apply(args);
BENCHMARK_CAPTURE(BM_CpuMatmul, decode_4864x896_F16, TensorType::F16, 1, 4864, 896)->Apply(args);
// Decode, output matrix: 1 × 896 → 32000.
BENCHMARK_CAPTURE(BM_CpuMatmul, decode_896x32000_Q8_0, TensorType::Q8_0, 1, 896, 32000)->Apply(args);
// Prefill: 512 × 896 → 4864 and 512 × 4864 → 896.
BENCHMARK_CAPTURE(BM_CpuMatmul, prefill512_896x4864_F16, TensorType::F16, 512, 896, 4864)->Apply(args_fast);
BENCHMARK_CAPTURE(BM_CpuMatmul, prefill512_896x4864_Q8_0, TensorType::Q8_0, 512, 896, 4864)->Apply(args_fast);
BENCHMARK_CAPTURE(BM_CpuMatmul, prefill512_896x4864_Q5_0, TensorType::Q5_0, 512, 896, 4864)->Apply(args_fast);
BENCHMARK_CAPTURE(BM_CpuMatmul, prefill512_4864x896_Q4_K, TensorType::Q4_K, 512, 4864, 896)->Apply(args_fast);
BENCHMARK_CAPTURE(BM_CpuMatmul, prefill512_4864x896_Q6_K, TensorType::Q6_K, 512, 4864, 896)->Apply(args_fast);

}  // namespace
}  // namespace vellum
