#pragma once
// Hopper's bulk tensor copy engine (TMA, sm_90) and the shared-memory barriers (mbarrier) it
// completes on. A tensor map (cuda.h's CUtensorMap, made on the host by encode_tensor_map_2d in
// dq_tma.cu) describes a 2-D global array and a box; one thread issues the copy of a box into
// shared memory, and the copy engine counts its bytes into the mbarrier's transaction count, so the
// waiting threads need no other signal. A barrier completes a phase once its arrivals and its
// expected bytes are all in; waiters name the phase by its parity.

#include <cuda.h>

#include <cstdint>

namespace vellum::cuda {

__device__ __forceinline__ uint32_t smem_addr(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(arrivals) : "memory");
}
// Makes the initialized barriers visible to the copy engine (then a block barrier for the threads).
__device__ __forceinline__ void mbar_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }

// One arrival that also announces `bytes` more of copies to come in this phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
// Blocks until the phase of the given parity has completed.
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  const uint32_t a = smem_addr(bar);
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(a), "r"(parity)
        : "memory");
  } while (!done);
}

// Box (c0, c1) (innermost coordinate first, in elements) of the tensor map into shared memory at
// dst (128-byte aligned; 1 024 for the 128-byte swizzle), counted on bar.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int c0, int c1, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(bar))
      : "memory");
}

// Round 35: a bulk reduction from shared memory into global memory, done by the copy engine. The
// threads that wrote the source with ordinary stores make them visible to it with
// fence_proxy_async_smem() before the block barrier that precedes the reduction. A thread's bulk
// operations form a group once committed; bulk_wait_read() returns once the group has read its
// shared memory (the global writes finish before the grid completes). Addresses 16-byte aligned,
// sizes multiples of 16.
__device__ __forceinline__ void fence_proxy_async_smem() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// dst[i] += src[i] in f32, done in L2: one rounding to nearest even, as the f32 atomics (which
// flush subnormals; only the f16/bf16 forms take .noftz).
__device__ __forceinline__ void bulk_add_f32(float* dst, const float* src, uint32_t bytes) {
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n" ::"l"(reinterpret_cast<uint64_t>(dst)),
               "r"(smem_addr(src)), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }

// Round 36: `bytes` of global memory into shared memory by the copy engine, counted on bar (after
// the caller's mbar_arrive_expect_tx). Data that other blocks wrote with ordinary stores and
// published by a release: fence_proxy_async_global() after the acquire, before the copy. Addresses
// 16-byte aligned, bytes a multiple of 16 (and within an mbarrier's transaction count, < 1 MiB).
__device__ __forceinline__ void fence_proxy_async_global() { asm volatile("fence.proxy.async.global;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_load(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(smem_addr(dst)),
               "l"(reinterpret_cast<uint64_t>(src)), "r"(bytes), "r"(smem_addr(bar))
               : "memory");
}

}  // namespace vellum::cuda
