#pragma once
// Dequantization ahead of use for the many-row GEMM path (round 8). Every quantized weight of a
// prefill or large decode step is dequantized to BF16 before its cuBLAS GEMM; done in line, that
// memory-bound pass and the compute-bound GEMM take turns. Steps repeat the same sequence of
// matmuls, so the weight that followed a weight last time is a good guess for the next one: while
// a GEMM runs on the main stream, the guessed successor is dequantized on a side stream into the
// other of two tile buffers. A right guess makes the next GEMM wait only for that side work (an
// event); a wrong one costs one wasted dequantization and the caller dequantizes in line, as before.
// Eager steps only (never under stream capture): the guesses are host state.

#include <cstdint>
#include <unordered_map>

#include <cuda_runtime.h>

#include "backend/cuda/cuda_util.h"
#include "core/tensor_type.h"

namespace vellum::cuda {

class DequantAhead {
 public:
  DequantAhead() = default;
  ~DequantAhead();
  DequantAhead(const DequantAhead&) = delete;
  DequantAhead& operator=(const DequantAhead&) = delete;

  // The BF16 copy of weight w (type, n x k, one tile) for a GEMM on `stream`: the side stream's, if
  // it guessed w (the stream then waits for it), else dequantized now on `stream` into the buffer no
  // side work writes. Then learns that w followed the previous weight and starts the dequantization
  // of w's own successor on the side stream. The returned buffer stays valid until the next call.
  const void* get(TensorType type, const void* w, int64_t n, int64_t k, cudaStream_t stream);

  // Waits for side work (before the buffers are freed or the device is reset).
  void drain();

  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

 private:
  struct Weight {
    TensorType type;
    const void* w;
    int64_t n, k;
  };
  void* buffer(int i, const Weight& wt);

  std::unordered_map<const void*, Weight> next_;  // weight -> the one that followed it last time
  const void* prev_ = nullptr;
  DeviceBuffer buf_[2];
  int pending_ = -1;  // buffer the side stream fills with pending_w_, or -1
  Weight pending_w_{};
  cudaStream_t side_ = nullptr;
  cudaEvent_t ready_ = nullptr, free_ = nullptr;
  uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace vellum::cuda
