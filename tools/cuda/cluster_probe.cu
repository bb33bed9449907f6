// Round 45's probe for a one-row layer whose Q/K/V and attention share a launch (docs/cuda.md,
// round 45, section 6): one thread block cluster a KV group, whose blocks would hand q, k and v over
// in distributed shared memory instead of through a kernel edge. It measures what that design
// rests on, on the machine it runs on:
// - how many clusters of 8, 12 and 16 blocks of 768 or 1 024 threads can be resident at once
//   (llama3's 8 KV groups need 8);
// - a cluster's hand-off: each block writes 48 floats into every block's shared memory, then
//   cluster.sync(), averaged over 200 rounds;
// - how fast 14.2 MB (a llama3-8b Q4_K_M layer's Q/K/V) streams through 128 blocks of 1 024 threads
//   in clusters of 16, against 1 536 blocks of 128 threads (today's Q/K/V launch shape), each timed
//   as 100 launches replayed from one CUDA graph: from L2 (one buffer, re-read), then from DRAM
//   (launch i reads buffer i % 8, 114 MB in all, more than the L2 holds).
// It prints as it goes; nothing here is product code.

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "backend/cuda/pdl.cuh"

namespace vellum::cuda_probe {
namespace {

namespace cg = cooperative_groups;
using vellum::cuda::pdl_wait;

constexpr int kShare = 48;  // floats a block hands each block of its cluster (768 rows / 16 blocks)

__global__ void handoff_kernel(unsigned long long* ns, int rounds) {
  __shared__ float buf[16 * kShare];
  pdl_wait();
  cg::cluster_group cl = cg::this_cluster();
  const int blocks = int(cl.num_blocks()), me = int(cl.block_rank());
  cl.sync();
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  for (int r = 0; r < rounds; ++r) {
    for (int j = int(threadIdx.x); j < kShare * blocks; j += int(blockDim.x)) {
      cl.map_shared_rank(buf, j / kShare)[me * kShare + j % kShare] = float(r + j);
    }
    cl.sync();
  }
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  if (threadIdx.x == 0) ns[blockIdx.x] = (t1 - t0) / unsigned(rounds);
}

// Block b streams 16-byte words [b·per, (b + 1)·per) of src with kDepth loads a thread in flight.
template <int kDepth>
__global__ void stream_kernel(const uint4* src, int64_t per, unsigned* out) {
  pdl_wait();
  const uint4* p = src + int64_t(blockIdx.x) * per;
  unsigned acc = 0;
  for (int64_t i = threadIdx.x; i < per; i += int64_t(blockDim.x) * kDepth) {
    uint4 v[kDepth];
#pragma unroll
    for (int d = 0; d < kDepth; ++d) {
      const int64_t j = i + int64_t(d) * blockDim.x;
      v[d] = j < per ? p[j] : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int d = 0; d < kDepth; ++d) acc ^= v[d].x ^ v[d].y ^ v[d].z ^ v[d].w;
  }
  if (acc == 0x12345678u) out[blockIdx.x] = acc;  // keeps the loads; practically never stores
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) std::printf("cluster probe: %s: %s\n", what, cudaGetErrorString(e));
}

// A launch of `blocks` blocks in clusters of `cluster` (1: no cluster attribute); `at` holds the attribute.
cudaLaunchConfig_t cluster_config(unsigned blocks, unsigned threads, unsigned cluster, cudaStream_t st, cudaLaunchAttribute& at) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(threads);
  cfg.stream = st;
  at.id = cudaLaunchAttributeClusterDimension;
  at.val.clusterDim.x = cluster;
  at.val.clusterDim.y = 1;
  at.val.clusterDim.z = 1;
  cfg.attrs = &at;
  cfg.numAttrs = cluster > 1 ? 1 : 0;
  return cfg;
}

template <class Kernel, class... Args>
cudaError_t launch_cluster(Kernel kernel, unsigned blocks, unsigned threads, unsigned cluster, cudaStream_t st, Args... args) {
  cudaLaunchAttribute at;
  const cudaLaunchConfig_t cfg = cluster_config(blocks, threads, cluster, st, at);
  return cudaLaunchKernelEx(&cfg, kernel, args...);
}

// Microseconds a launch: `reps` launches (launch(stream, i)) captured into one graph, replayed 3 times.
template <class Launch>
double graph_us(Launch&& launch, int reps) {
  cudaStream_t st;
  check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "stream");
  cudaGraph_t g;
  cudaGraphExec_t exec;
  check(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal), "capture");
  for (int i = 0; i < reps; ++i) check(launch(st, i), "launch");
  check(cudaStreamEndCapture(st, &g), "end capture");
  check(cudaGraphInstantiate(&exec, g, 0), "instantiate");
  check(cudaGraphLaunch(exec, st), "warm-up");
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a, st);
  for (int i = 0; i < 3; ++i) check(cudaGraphLaunch(exec, st), "replay");
  cudaEventRecord(b, st);
  check(cudaEventSynchronize(b), "sync");
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);
  cudaStreamDestroy(st);
  return double(ms) * 1e3 / (3.0 * reps);
}

}  // namespace

void cluster_probe() {
  for (const unsigned threads : {768u, 1024u}) {
    for (const unsigned cl : {8u, 12u, 16u}) {
      check(cudaFuncSetAttribute(handoff_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1), "non-portable");
      cudaLaunchAttribute at;
      const cudaLaunchConfig_t cfg = cluster_config(cl * 8, threads, cl, nullptr, at);
      int n = -1;
      check(cudaOccupancyMaxActiveClusters(&n, handoff_kernel, &cfg), "max active clusters");
      std::printf("cluster probe: %u blocks of %u threads a cluster: at most %d clusters resident\n", cl, threads, n);
    }
  }
  unsigned long long* ns = nullptr;
  check(cudaMalloc(&ns, 128 * sizeof(unsigned long long)), "alloc");
  for (const unsigned cl : {2u, 8u, 16u}) {
    check(launch_cluster(handoff_kernel, cl * 8, 768, cl, nullptr, ns, 200), "handoff");
    check(cudaDeviceSynchronize(), "handoff sync");
    std::vector<unsigned long long> h(cl * 8);
    check(cudaMemcpy(h.data(), ns, h.size() * sizeof(h[0]), cudaMemcpyDeviceToHost), "d2h");
    unsigned long long lo = ~0ull, hi = 0;
    for (const auto v : h) lo = v < lo ? v : lo, hi = v > hi ? v : hi;
    std::printf("cluster probe: hand-off in clusters of %u (48 floats to every block, cluster.sync): %llu-%llu ns a round\n", cl, lo, hi);
  }
  cudaFree(ns);
  // 14.2 MB: 6 144 Q4_K rows of 4 096 (2 304 bytes each); per block a whole number of 16-byte words.
  const int64_t words = int64_t(6144) * 2304 / 16, stride = words + 4096;
  constexpr int kBuffers = 8;
  uint4* src = nullptr;
  unsigned* out = nullptr;
  check(cudaMalloc(&src, size_t(stride * kBuffers) * 16), "alloc");
  check(cudaMemset(src, 1, size_t(stride * kBuffers) * 16), "fill");
  check(cudaMalloc(&out, 4096 * sizeof(unsigned)), "alloc");
  check(cudaFuncSetAttribute(stream_kernel<4>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1), "non-portable");
  check(cudaFuncSetAttribute(stream_kernel<8>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1), "non-portable");
  struct Shape {
    unsigned blocks, threads, cluster;
    int depth;
  };
  for (const int buffers : {1, kBuffers}) {
    for (const Shape s : {Shape{1536, 128, 1, 4}, Shape{1536, 128, 1, 8}, Shape{128, 1024, 1, 4}, Shape{128, 1024, 16, 4},
                          Shape{128, 1024, 16, 8}, Shape{128, 768, 16, 8}, Shape{64, 1024, 1, 8}, Shape{64, 1024, 8, 8}}) {
      const int64_t per = (words + s.blocks - 1) / s.blocks;
      const double us = graph_us(
          [&](cudaStream_t st, int i) {
            const uint4* from = src + (i % buffers) * stride;
            return s.depth == 4 ? launch_cluster(stream_kernel<4>, s.blocks, s.threads, s.cluster, st, from, per, out)
                                : launch_cluster(stream_kernel<8>, s.blocks, s.threads, s.cluster, st, from, per, out);
          },
          96);
      std::printf("cluster probe: 14.2 MB from %s through %u blocks of %u threads, clusters of %u, %d loads in flight a thread: "
                  "%.2f us (%.0f GB/s)\n",
                  buffers == 1 ? "L2" : "DRAM", s.blocks, s.threads, s.cluster, s.depth, us, double(per * s.blocks * 16) / (us * 1e3));
    }
  }
  cudaFree(src);
  cudaFree(out);
}

}  // namespace vellum::cuda_probe
