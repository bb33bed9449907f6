#pragma once
// The CPU matmul driver: out = x · Wᵀ (+ bias) for weights of any type with a kernel
// (matmul_kernels.h). Work units (a chunk of token rows whose activations stay in L2, a block of 16
// weight rows) are handed out dynamically; a unit applies its weight block to tiles of token rows
// (with many rows, decoding the block once first). Quantized weights take their activations
// quantized once per matmul (activation_q8.h), not once per weight row.
//
// Each output element is one kernel call on one thread, whose float operations depend only on the
// shapes (matmul_kernels.h): results are bitwise identical for any number of token rows, tiling or
// thread count.

#include <span>

#include "backend/backend.h"
#include "backend/cpu/activation_q8.h"
#include "backend/cpu/cpu_features.h"
#include "core/thread_pool.h"

namespace vellum::backend::cpu {

// One product of a multi-matmul: out = x · wᵀ (+ bias).
struct MatmulJob {
  const Weight* w = nullptr;
  Tensor out;
  const float* bias = nullptr;
};

class CpuMatmul {
 public:
  // Whether weights of `type` with `cols` columns have a kernel (otherwise the caller falls back).
  static bool supported(TensorType type, int64_t cols);
  // Whether `run_many` can take these weights together: every one supported, and the same
  // activation format (f32 rows, or Q8 rows with or without records) at `level`.
  static bool can_share(std::span<const Weight* const> ws, IsaLevel level);
  // out[r][o] = dot(x[r], W[o]) (+ bias[o]) at the given ISA level.
  void run(ThreadPool& pool, const Weight& w, const Tensor& x, Tensor out, const float* bias, IsaLevel level);
  // Several products of the same x in one dispatch (one activation quantization, one fork/join):
  // each output computed exactly as run() computes it. With `swiglu`, jobs are {gate, up} of equal
  // shapes and each unit then sets gate.out = swiglu(gate.out, up.out) on the outputs it computed.
  void run_many(ThreadPool& pool, const Tensor& x, std::span<const MatmulJob> jobs, IsaLevel level, bool swiglu = false);

 private:
  ActQ8Rows act_;
};

}  // namespace vellum::backend::cpu
