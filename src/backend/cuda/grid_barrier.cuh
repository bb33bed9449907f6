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

// The same with one 64-bit counter that only grows: each block's thread 0 reads it before arriving
// (it cannot pass a multiple of the grid until this block has arrived, so the episode's base is the
// multiple below it), adds its arrival without waiting for an answer (red.release), and polls until
// the count reaches the episode's end. No reset, no second word, no round trip to arrive. Zeroed
// once; one barrier a launch at most between two launches that finish in order.
__device__ __forceinline__ unsigned long long load_acquire_gpu(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];\n" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void grid_barrier_counted(unsigned long long* count) {
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned long long grid = gridDim.x, seen = load_acquire_gpu(count);
    const unsigned long long end = seen - seen % grid + grid;
    asm volatile("red.release.gpu.global.add.u64 [%0], 1;\n" ::"l"(count) : "memory");
    while (load_acquire_gpu(count) < end) {
    }
  }
  __syncthreads();
}

}  // namespace vellum::cuda
