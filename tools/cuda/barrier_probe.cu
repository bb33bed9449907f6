// Round 47's probe: what a grid barrier over one 1 024-thread block an SM costs on the machine it
// runs on, against what a kernel edge costs, so that a fused launch's barrier can be weighed
// against the edge it replaces (docs/cuda.md, round 47):
// - two grid barriers (below; round 47's fused down + Q/K/V launch used them:
//   tools/cuda/results/r47-down-qkv.patch),
//   128 blocks (one a llama3-8b down row group) and one block an SM, 500 barriers in a loop, timed
//   by block 0's global timer: µs a barrier;
// - 500 launches of an empty kernel of the same blocks (each waits on the previous one: pdl_wait)
//   back to back on a stream, programmatic (as the product's eager steps) and plain, and replayed
//   from a captured graph: µs a launch.
// It prints as it goes; nothing here is product code.

#include <cuda_runtime.h>

#include <cstdio>

#include "backend/cuda/pdl.cuh"

namespace vellum::cuda_probe {
namespace {

using vellum::cuda::pdl_wait;

__device__ __forceinline__ unsigned load_acquire_gpu(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned long long load_acquire_gpu(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];\n" : "=l"(v) : "l"(p) : "memory");
  return v;
}
// Every block of a grid whose blocks are all resident: bar[0] counts arrivals, the last block
// resets it and advances the generation bar[1], on which the others wait.
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
// The same on one 64-bit count that only grows: read before arriving (the episode's base is the
// multiple of the grid below it), arrive without an answer (red.release), poll to the episode's end.
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

template <bool kCounted>
__global__ void __launch_bounds__(1024, 1) barrier_loop_kernel(unsigned* words, int rounds, unsigned long long* ns) {
  pdl_wait();
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  for (int r = 0; r < rounds; ++r) {
    if (kCounted) {
      grid_barrier_counted(reinterpret_cast<unsigned long long*>(words));
    } else {
      grid_barrier(words);
    }
  }
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  if (blockIdx.x == 0 && threadIdx.x == 0) *ns = t1 - t0;
}

__global__ void __launch_bounds__(1024, 1) empty_kernel() { pdl_wait(); }

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) std::printf("barrier probe: %s: %s\n", what, cudaGetErrorString(e));
}

void launch_empty(unsigned blocks, cudaStream_t st, bool programmatic) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(1024);
  cfg.stream = st;
  cudaLaunchAttribute at{};
  at.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &at;
  cfg.numAttrs = programmatic ? 1 : 0;
  check(cudaLaunchKernelEx(&cfg, empty_kernel), "empty kernel");
}

}  // namespace

void barrier_probe() {
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "SM count");
  unsigned* words = nullptr;
  unsigned long long* ns = nullptr;
  check(cudaMalloc(&words, 16), "alloc");
  check(cudaMalloc(&ns, 8), "alloc");
  cudaStream_t st;
  check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "stream");
  cudaEvent_t e0, e1;
  check(cudaEventCreate(&e0), "event");
  check(cudaEventCreate(&e1), "event");
  constexpr int kRounds = 500;
  for (const unsigned blocks : {128u, unsigned(sms)}) {
    for (const bool counted : {false, true}) {
      check(cudaMemset(words, 0, 16), "zero");
      for (int rep = 0; rep < 3; ++rep) {  // the first is a warm-up
        if (counted) {
          barrier_loop_kernel<true><<<blocks, 1024, 0, st>>>(words, kRounds, ns);
        } else {
          barrier_loop_kernel<false><<<blocks, 1024, 0, st>>>(words, kRounds, ns);
        }
        check(cudaGetLastError(), "barrier loop");
        unsigned long long h = 0;
        check(cudaMemcpyAsync(&h, ns, 8, cudaMemcpyDeviceToHost, st), "d2h");
        check(cudaStreamSynchronize(st), "barrier loop");
        if (rep > 0) std::printf("barrier probe: %s, %u blocks of 1024: %.2f us a barrier\n", counted ? "grid_barrier_counted" : "grid_barrier", blocks,
                                 double(h) / kRounds / 1e3);
      }
    }
    for (int mode = 0; mode < 3; ++mode) {  // 0 plain launches, 1 programmatic, 2 a graph of programmatic launches
      cudaGraphExec_t exec = nullptr;
      if (mode == 2) {
        cudaGraph_t g;
        check(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal), "capture");
        for (int i = 0; i < kRounds; ++i) launch_empty(blocks, st, true);
        check(cudaStreamEndCapture(st, &g), "capture");
        check(cudaGraphInstantiate(&exec, g, 0), "instantiate");
        cudaGraphDestroy(g);
      }
      for (int rep = 0; rep < 3; ++rep) {
        check(cudaEventRecord(e0, st), "record");
        if (mode == 2) {
          check(cudaGraphLaunch(exec, st), "graph");
        } else {
          for (int i = 0; i < kRounds; ++i) launch_empty(blocks, st, mode == 1);
        }
        check(cudaEventRecord(e1, st), "record");
        check(cudaEventSynchronize(e1), "sync");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
        if (rep > 0) {
          std::printf("barrier probe: %u empty launches of %u blocks of 1024, %s: %.2f us a launch\n", kRounds, blocks,
                      mode == 0 ? "plain" : mode == 1 ? "programmatic" : "programmatic, one graph", double(ms) * 1e3 / kRounds);
        }
      }
      if (exec != nullptr) cudaGraphExecDestroy(exec);
    }
  }
  cudaEventDestroy(e0), cudaEventDestroy(e1);
  cudaStreamDestroy(st);
  cudaFree(words), cudaFree(ns);
  std::fflush(stdout);
}

}  // namespace vellum::cuda_probe
