#pragma once
// A barrier over every block of a grid whose blocks are all resident at once (the launcher's
// contract: at most one block an SM and no more blocks than SMs). bar[0] counts arrivals and
// bar[1] is a generation the last block advances, so the two words never need resetting between
// launches or graph replays (they start zeroed once). Each block's writes before the barrier are
// visible to every block after it: the block barrier orders them before thread 0's fence and
// arrival, and the waiters' acquire load orders their reads after the generation's change.

namespace vellum::cuda {

__device__ __forceinline__ unsigned load_acquire_gpu(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void grid_barrier(unsigned* bar) {
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned gen = load_acquire_gpu(bar + 1);  // before arriving: it cannot move until this block has
    __threadfence();
    if (atomicAdd(bar, 1u) == gridDim.x - 1) {
      atomicExch(bar, 0u);
      __threadfence();
      atomicAdd(bar + 1, 1u);
    } else {
      while (load_acquire_gpu(bar + 1) == gen) {
      }
    }
  }
  __syncthreads();
}

}  // namespace vellum::cuda
