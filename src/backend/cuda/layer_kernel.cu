// The layer kernel (layer_kernel.h, round 19).
//
// Block layout: warps 0..15 consume (512 threads, the norm kernel's thread count, so the norm's sum
// of squares is reduced in its order), warp 16 produces. Phase p's rows are split over the blocks by
// bytes; a block walks its rows in slots of at most kSlotBytes (whole rows; SwiGLU: n gate rows then
// the same n up rows), the producer copying slot j into ring entry j % kSlots once every consumer
// warp has released use j - kSlots, the consumers taking a slot's rows round robin (row i of the
// phase to warp i % 16). Between phases: a grid barrier (the outputs of every block are complete),
// then each block builds the next x in shared memory itself (the norm of x + o, or g quantized):
// a few KB from L2, against the thousands of blocks of round 16's per-block norms.
//
// The residual x is read by every block's norm, so no block may write it before all have read it:
// block 0 keeps the new x in registers and writes it after the next grid barrier (phase 1's) or,
// after the last phase, once every block has counted itself past its last norm (phase 3's).

#include "backend/cuda/layer_kernel.h"

#include <algorithm>
#include <cstdlib>

#include "backend/cuda/dequant.cuh"
#include "backend/cuda/fused_kernels.h"
#include "backend/cuda/gemv_kernels.h"
#include "backend/cuda/gemv_kq.cuh"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/q8_block.cuh"
#include "backend/cuda/warp_reduce.cuh"

namespace vellum::cuda {
namespace {

constexpr int kConsumerWarps = 16;
constexpr int kConsumers = kConsumerWarps * 32;  // = the norm kernel's threads (checked at launch)
constexpr int kThreads = kConsumers + 32;
constexpr int kSlots = 8;
constexpr int kSlotBytes = 24 * 1024;
constexpr int kPhases = 4;  // wo, gate/up, down, qkv

struct Seg {
  const uint8_t* w;
  float* out;
  int64_t rows;
  uint32_t rb;   // bytes a row (device layout)
  uint32_t cap;  // rows (SwiGLU: gate/up pairs) a slot holds
  int q6;        // Q6_K (else Q4_K)
};
struct Phase {
  Seg seg[kLayerMaxSegs];
  int count;   // logical segments walked (SwiGLU: 1, its rows the gate/up pairs)
  int swiglu;
  int64_t k;
  uint64_t bytes;  // of the whole phase
};
struct Params {
  Phase ph[kPhases];
  const uint8_t* attn_q8;
  int64_t q_dim, dim, ffn;
  float *x, *o, *g, *h;
  const float *ffn_gain, *next_gain;
  float eps;
  unsigned* sync;  // [0] barrier arrivals, [1] barrier generation, [2] blocks past their last norm
  unsigned* gcnt;  // = sync + 4: rows of each 32-row group of g written so far (phase 1)
  uint8_t* g_q8;   // g's int8 copy (q8_bytes(ffn))
  uint32_t xq_off;  // shared-memory offset of x's int8 copy; its scales at + (k + 15) / 16 * 16
  uint32_t bar_off;
  // Experiment only (VELLUM_CUDA_LAYER_ABLATE, a bit mask; the results are wrong, only the time
  // means something): 1 no grid barriers, 2 no row arithmetic, 4 no norms or quantization,
  // 8 no weight copies.
  int ablate;
  int prefetch;  // slots past the ring prefetched into L2 (VELLUM_CUDA_LAYER_PREFETCH, default 8)
  unsigned long long* trace;  // set_layer_trace: clock64 at kTraceEvents points a block, or null
};

// Measurement only (set_layer_trace): thread 0 (and the producer, event 15) stamp SM cycles.
__device__ __forceinline__ void mark(const Params& p, int ev) {
  if (p.trace != nullptr) p.trace[size_t(blockIdx.x) * kLayerTraceEvents + ev] = clock64();
}

// ---- shared-memory barriers and bulk copies (sm_90) ----
__device__ __forceinline__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void mbar_init(uint32_t b, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(b), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t b, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t b) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(b) : "memory");
}
// The consumers wait with try_wait (the warp may be suspended: it takes no issue slots from the
// producer's warp); the producer spins on test_wait.
__device__ __forceinline__ void mbar_wait(uint32_t b, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(b), "r"(parity)
        : "memory");
  } while (done == 0);
}
__device__ __forceinline__ void mbar_spin(uint32_t b, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(b), "r"(parity)
        : "memory");
  } while (done == 0);
}
__device__ __forceinline__ void bulk_copy(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
__device__ __forceinline__ void consumers_sync() { asm volatile("bar.sync 1, %0;" ::"n"(kConsumers) : "memory"); }
__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// ---- the slot schedule: the producer and the consumers walk the same one ----
struct Slot {
  int seg;
  int64_t row;    // first row, within the segment
  int n;          // rows (SwiGLU: gate/up pairs)
};
__device__ __forceinline__ uint64_t unit_bytes(const Phase& P, int s) { return uint64_t(P.seg[s].rb) * (P.swiglu ? 2 : 1); }
// The first row (over the phase's segments in order) that starts at or after byte b.
__device__ int64_t row_at(const Phase& P, uint64_t b) {
  uint64_t before = 0;
  int64_t rows = 0;
  for (int s = 0; s < P.count; ++s) {
    const uint64_t u = unit_bytes(P, s), seg_bytes = u * uint64_t(P.seg[s].rows);
    if (b <= before + seg_bytes) return rows + int64_t((b - before + u - 1) / u);
    before += seg_bytes;
    rows += P.seg[s].rows;
  }
  return rows;
}
struct SlotWalk {
  const Phase* P;
  int64_t r, r1;
  __device__ SlotWalk(const Phase& p, unsigned b, unsigned blocks)
      : P(&p), r(row_at(p, p.bytes * b / blocks)), r1(row_at(p, p.bytes * (b + 1) / blocks)) {}
  __device__ bool next(Slot& s) {
    if (r >= r1) return false;
    int64_t lr = r;
    int sg = 0;
    while (sg + 1 < P->count && lr >= P->seg[sg].rows) lr -= P->seg[sg++].rows;
    const int64_t n = min(min(r1 - r, P->seg[sg].rows - lr), int64_t(P->seg[sg].cap));  // no division on the producer's path
    s = Slot{sg, lr, int(n)};
    r += n;
    return true;
  }
};
// The producer's view: every phase's slots in order; `phase` is the last slot's.
struct Schedule {
  const Phase* ph;
  int phase = 0;
  SlotWalk w;
  unsigned b, blocks;
  __device__ Schedule(const Phase* first, unsigned b_, unsigned blocks_) : ph(first), w(first[0], b_, blocks_), b(b_), blocks(blocks_) {}
  __device__ bool next(Slot& s) {
    while (!w.next(s)) {
      if (++phase == kPhases) return false;
      w = SlotWalk(ph[phase], b, blocks);
    }
    return true;
  }
};
__device__ __forceinline__ void prefetch_l2(const void* src, uint32_t bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(src), "r"(bytes) : "memory");
}

// ---- two rows a warp: gemv_kq_kernel's order for each (a lane's groups in order, then warp_sum) ----
// The rows share each x load, and two passes are in flight: 16 warps an SM must hide the latency
// that gemv_kq's 32-64 hide with warps (round 19, call 2: one row a pass left the kernel bound by
// its arithmetic, not by the copies).
template <class F>
__device__ __forceinline__ void pass2(const uint8_t* ra, const uint8_t* rb, int p, int64_t nb, const int8_t* xq,
                                      const float2* xs, int lane, const typename F::Lane& L, float& a, float& b) {
  if (int64_t(p) * 4 + lane / 8 >= nb) return;  // a short last group
  typename F::Raw wa, wb;
  F::load_shared(ra + size_t(p) * F::kGroupBytes, lane, L, wa);
  F::load_shared(rb + size_t(p) * F::kGroupBytes, lane, L, wb);
  const int64_t e = int64_t(p) * 1024 + 32 * lane;
  const uint4* xp = reinterpret_cast<const uint4*>(xq + e);
  const uint4 x0 = xp[0], x1 = xp[1];
  const float2 xsv = xs[e / 32];
  a += F::dot(wa, x0, x1, xsv, L);
  b += F::dot(wb, x0, x1, xsv, L);
}
template <class F>
__device__ void dot2(const uint8_t* ra, const uint8_t* rb, int64_t k, const int8_t* xq, const float2* xs, int lane, float& oa,
                     float& ob) {
  const typename F::Lane L(lane);
  const int64_t nb = k / 256;
  const int passes = int((nb + 3) / 4);
  float a = 0.0f, b = 0.0f;
#pragma unroll 2
  for (int p = 0; p < passes; ++p) pass2<F>(ra, rb, p, nb, xq, xs, lane, L, a, b);
  oa = warp_sum(a);
  ob = warp_sum(b);
}
__device__ __forceinline__ void seg_dot2(const Seg& s, const uint8_t* ra, const uint8_t* rb, int64_t k, const int8_t* xq,
                                         const float2* xs, int lane, float& a, float& b) {
  if (s.q6) dot2<GemvQ6K>(ra, rb, k, xq, xs, lane, a, b);
  else dot2<GemvQ4K>(ra, rb, k, xq, xs, lane, a, b);
}

// ---- x for the next phase ----
// x + delta (kept in v), then the norm with `gain` into the int8 copy at xq/xs (shared memory): the
// expressions of add_rms_norm_kernel<V, T, 512> (fused_kernels.cu), so the same bits. With y, also
// the normed row itself (block 0 writes it out at the end).
template <int V>
__device__ void norm_to_q8(const float* x, const float* delta, const float* gain, int64_t cols, float eps, int8_t* xq,
                           float2* xs, float* partial, float4 (&v)[V], float4 (&y)[V]) {
  const int t = threadIdx.x;
  const int64_t n4 = cols / 4;
  const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float4 dv[V], gv[V];
#pragma unroll
  for (int j = 0; j < V; ++j) {
    const int64_t i = t + int64_t(kConsumers) * j;
    v[j] = i < n4 ? __ldcg(reinterpret_cast<const float4*>(x) + i) : zero;
    dv[j] = i < n4 ? __ldcg(reinterpret_cast<const float4*>(delta) + i) : zero;
    gv[j] = i < n4 ? reinterpret_cast<const float4*>(gain)[i] : zero;
  }
  float ss = 0.0f;
#pragma unroll
  for (int j = 0; j < V; ++j) {
    v[j] = make_float4(v[j].x + dv[j].x, v[j].y + dv[j].y, v[j].z + dv[j].z, v[j].w + dv[j].w);  // as add_kernel
  }
#pragma unroll
  for (int j = 0; j < V; ++j) ss += v[j].x * v[j].x + v[j].y * v[j].y + v[j].z * v[j].z + v[j].w * v[j].w;
#pragma unroll
  for (int o = 16; o > 0; o /= 2) ss += __shfl_xor_sync(kFull, ss, o);
  if ((t & 31) == 0) partial[t / 32] = ss;
  consumers_sync();
  float total = 0.0f;
#pragma unroll
  for (int w = 0; w < kConsumerWarps; ++w) total += partial[w];
  const float scale = 1.0f / sqrtf(total / static_cast<float>(cols) + eps);
#pragma unroll
  for (int j = 0; j < V; ++j) {
    const int64_t i = t + int64_t(kConsumers) * j;
    y[j] = zero;
    if (i < n4) {
      const float4 g = gv[j];
      y[j] = make_float4(mul(mul(v[j].x, scale), g.x), mul(mul(v[j].y, scale), g.y), mul(mul(v[j].z, scale), g.z),
                         mul(mul(v[j].w, scale), g.w));
    }
    float amax = fmaxf(fmaxf(fabsf(y[j].x), fabsf(y[j].y)), fmaxf(fabsf(y[j].z), fabsf(y[j].w)));
#pragma unroll
    for (int o = 4; o > 0; o /= 2) amax = fmaxf(amax, __shfl_xor_sync(kFull, amax, o));
    const float d = amax / 127.0f;  // as quantize_q8_warp (q8_block.cuh)
    const int q0 = amax == 0.0f ? 0 : __float2int_rn(y[j].x / d), q1 = amax == 0.0f ? 0 : __float2int_rn(y[j].y / d);
    const int q2 = amax == 0.0f ? 0 : __float2int_rn(y[j].z / d), q3 = amax == 0.0f ? 0 : __float2int_rn(y[j].w / d);
    int sum = q0 + q1 + q2 + q3;
#pragma unroll
    for (int o = 4; o > 0; o /= 2) sum += __shfl_xor_sync(kFull, sum, o);
    if (i < n4) {
      reinterpret_cast<uint32_t*>(xq)[i] =
          (uint32_t(q0) & 0xFFu) | ((uint32_t(q1) & 0xFFu) << 8) | ((uint32_t(q2) & 0xFFu) << 16) | (uint32_t(q3) << 24);
      if ((t & 7) == 0) xs[i / 8] = make_float2(d, d * float(sum));
    }
  }
}

template <int V>
__device__ void store_row(float* dst, const float4 (&v)[V], int64_t cols) {
#pragma unroll
  for (int j = 0; j < V; ++j) {
    const int64_t i = threadIdx.x + int64_t(kConsumers) * j;
    if (i < cols / 4) reinterpret_cast<float4*>(dst)[i] = v[j];
  }
}

// Every block's consumers: the outputs written so far are visible to all blocks after this.
__device__ void grid_barrier(unsigned* sync, unsigned start_gen, unsigned index, bool skip) {
  consumers_sync();
  if (skip) return;
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(&sync[0], 1u) == gridDim.x - 1) {
      sync[0] = 0;
      __threadfence();
      atomicAdd(&sync[1], 1u);
    } else {
      while (ld_acquire(&sync[1]) - start_gen <= index) {
      }
    }
  }
  consumers_sync();
}

template <int V>
__global__ void __launch_bounds__(kThreads, 1) layer_tail_kernel(const __grid_constant__ Params p) {
  pdl_wait();
  extern __shared__ __align__(128) uint8_t sm[];
  uint8_t* ring = sm;
  int8_t* xq = reinterpret_cast<int8_t*>(sm + p.xq_off);
  uint64_t* bars = reinterpret_cast<uint64_t*>(sm + p.bar_off);  // full[kSlots], empty[kSlots]
  float* partial = reinterpret_cast<float*>(bars + 2 * kSlots);
  __shared__ unsigned start_gen;
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kSlots; ++s) {
      mbar_init(smem(bars + s), 1);
      mbar_init(smem(bars + kSlots + s), kConsumerWarps);
    }
    start_gen = ld_acquire(&p.sync[1]);
  }
  if (threadIdx.x == 0) mark(p, 0);
  __syncthreads();
  if (threadIdx.x == 0) mark(p, 1);

  if (warp == kConsumerWarps) {  // the producer
    if (lane != 0) return;
    // Slots past the ring's are prefetched into L2 (p.prefetch of them ahead), so that DRAM keeps
    // streaming while the consumers wait at a grid barrier with the ring full.
    Schedule sched(p.ph, blockIdx.x, gridDim.x), ahead(p.ph, blockIdx.x, gridDim.x);
    Slot s, a;
    bool more_ahead = true;
    for (int i = 0; i < kSlots && more_ahead; ++i) more_ahead = ahead.next(a);
    uint32_t j = 0;
    while (sched.next(s)) {
      const Phase& P = p.ph[sched.phase];
      for (int i = 0; more_ahead && i < (j == 0 ? p.prefetch : 1); ++i) {
        more_ahead = ahead.next(a);
        if (more_ahead && !(p.ablate & 8)) {
          const Phase& A = p.ph[ahead.phase];
          const Seg& ag = A.seg[a.seg];
          prefetch_l2(ag.w + size_t(a.row) * ag.rb, uint32_t(a.n) * ag.rb);
          if (A.swiglu) prefetch_l2(A.seg[1].w + size_t(a.row) * ag.rb, uint32_t(a.n) * ag.rb);
        }
      }
      const int e = int(j % kSlots);
      if (j >= kSlots) mbar_spin(smem(bars + kSlots + e), ((j / kSlots) - 1) & 1);
      const Seg& sg = P.seg[s.seg];
      const uint32_t bytes = uint32_t(s.n) * sg.rb;
      const uint32_t full = smem(bars + e), dst = smem(ring + size_t(e) * kSlotBytes);
      if (p.ablate & 8) {
        mbar_arrive(full);
      } else {
        mbar_expect_tx(full, P.swiglu ? 2 * bytes : bytes);
        bulk_copy(dst, sg.w + size_t(s.row) * sg.rb, bytes, full);
        if (P.swiglu) bulk_copy(dst + bytes, P.seg[1].w + size_t(s.row) * sg.rb, bytes, full);
      }
      ++j;
    }
    mark(p, 15);
    return;
  }

  // The consumers.
  const int t = threadIdx.x;
  float4 xnew[V], y[V];  // block 0: the residual (and normed row) it writes later
  uint32_t j = 0;
  for (int ph = 0; ph < kPhases; ++ph) {
    const Phase& P = p.ph[ph];
    const int64_t k = P.k;
    float2* xs = reinterpret_cast<float2*>(reinterpret_cast<uint8_t*>(xq) + (k + 15) / 16 * 16);
    if (p.ablate & 4) {
      if (ph > 0) grid_barrier(p.sync, start_gen, unsigned(ph - 1), p.ablate & 1);
      if (t == 0) mark(p, 2 + 3 * ph);
    } else if (ph == 0) {
      if (t == 0) mark(p, 2);  // the attention's int8 copy, as it is
      const int64_t chunks = ((k + 15) / 16 * 16 + k / 32 * int64_t(sizeof(float2))) / 16;  // q8_bytes(k)
      for (int64_t c = t; c < chunks; c += kConsumers) {
        reinterpret_cast<uint4*>(xq)[c] = __ldcg(reinterpret_cast<const uint4*>(p.attn_q8) + c);
      }
    } else {
      grid_barrier(p.sync, start_gen, unsigned(ph - 1), p.ablate & 1);
      if (t == 0) mark(p, 2 + 3 * ph);
      if (ph == 2) {
        if (blockIdx.x == 0) store_row(p.x, xnew, p.dim);  // every block has read x (phase 1's norm)
        // g's int8 copy, quantized in phase 1 by the warp that wrote each 32-row group's last row.
        const int64_t chunks = ((k + 15) / 16 * 16 + k / 32 * int64_t(sizeof(float2))) / 16;  // q8_bytes(k)
        for (int64_t c = t; c < chunks; c += kConsumers) {
          reinterpret_cast<uint4*>(xq)[c] = __ldcg(reinterpret_cast<const uint4*>(p.g_q8) + c);
        }
      } else {
        norm_to_q8<V>(p.x, p.o, ph == 1 ? p.ffn_gain : p.next_gain, p.dim, p.eps, xq, xs, partial, xnew, y);
      }
    }
    consumers_sync();
    if (t == 0) mark(p, 3 + 3 * ph);
    if (ph == 3 && t == 0 && !(p.ablate & 4)) {
      __threadfence();
      atomicAdd(&p.sync[2], 1u);  // this block has read x for the last time
    }
    SlotWalk walk(P, blockIdx.x, gridDim.x);
    Slot s;
    int64_t items_before = 0;  // items (row pairs; SwiGLU: outputs) of the phase in earlier slots
    while (walk.next(s)) {
      const int e = int(j % kSlots);
      // Every warp waits for the slot, rows or not: a warp may not release use j + kSlots of an
      // entry before the others have released use j.
      mbar_wait(smem(bars + e), (j / kSlots) & 1);
      const Seg& sg = P.seg[s.seg];
      const uint8_t* slot = ring + size_t(e) * kSlotBytes;
      const int items = P.swiglu ? s.n : (s.n + 1) / 2;
      const int m0 = (p.ablate & 2) ? items : int((warp - items_before % kConsumerWarps + kConsumerWarps) % kConsumerWarps);
      for (int m = m0; m < items; m += kConsumerWarps) {
        float a = 0.0f, b = 0.0f;
        if (P.swiglu) {  // gate row m, up row m
          seg_dot2(sg, slot + size_t(m) * sg.rb, slot + size_t(s.n + m) * sg.rb, k, xq, xs, lane, a, b);
          const int64_t o = s.row + m;
          unsigned last = 0;
          if (lane == 0) {
            sg.out[o] = mul(a / (1.0f + expf(-a)), b);  // as swiglu_kernel
            __threadfence();
            last = atomicAdd(&p.gcnt[o / 32], 1u) == 31u;
          }
          if (__shfl_sync(kFull, last, 0)) {  // the group's 32 rows are written: its int8 copy for phase 2
            __threadfence();
            const int64_t g0 = o / 32 * 32;
            quantize_q8_warp(__ldcg(sg.out + g0 + lane), reinterpret_cast<int8_t*>(p.g_q8) + g0 + lane,
                             reinterpret_cast<float2*>(p.g_q8 + (p.ffn + 15) / 16 * 16) + o / 32);
            if (lane == 0) p.gcnt[o / 32] = 0;
          }
        } else {  // rows 2m, 2m + 1 (the last one twice in a slot of odd rows)
          const int r0 = 2 * m, r1 = min(2 * m + 1, s.n - 1);
          seg_dot2(sg, slot + size_t(r0) * sg.rb, slot + size_t(r1) * sg.rb, k, xq, xs, lane, a, b);
          if (lane == 0) {
            sg.out[s.row + r0] = a;
            if (r1 != r0) sg.out[s.row + r1] = b;
          }
        }
      }
      items_before += items;
      __syncwarp();
      if (lane == 0) mbar_arrive(smem(bars + kSlots + e));
      ++j;
    }
    if (t == 0) mark(p, 4 + 3 * ph);
  }
  if (blockIdx.x == 0) {  // the residual and the normed row, once every block has read x
    if (t == 0 && !(p.ablate & 4)) {
      while (ld_acquire(&p.sync[2]) < gridDim.x) {
      }
      p.sync[2] = 0;
    }
    consumers_sync();
    store_row(p.x, xnew, p.dim);
    store_row(p.h, y, p.dim);
  }
  if (t == 0) mark(p, 14);
}

unsigned long long* g_trace = nullptr;

size_t row_bytes(TensorType type, int64_t k) {
  return type == TensorType::Q6_K ? DecQ6_KR::repacked_row_bytes(k) : DecQ4_KR::repacked_row_bytes(k);
}

int vec_per_thread(int64_t dim) { return int((dim / 4 + kConsumers - 1) / kConsumers); }

size_t smem_bytes(const LayerTailArgs& a, uint32_t& xq_off, uint32_t& bar_off) {
  const int64_t kmax = std::max({a.q_dim, a.dim, a.ffn});
  xq_off = uint32_t(kSlots) * kSlotBytes;
  bar_off = uint32_t(xq_off + (q8_bytes(kmax) + 127) / 128 * 128);
  return bar_off + 2 * kSlots * sizeof(uint64_t) + kConsumerWarps * sizeof(float);
}

bool phase_ok(const LayerPhase& ph, int64_t k, int64_t out_rows) {
  if (ph.count < 1 || ph.count > kLayerMaxSegs || (ph.swiglu && ph.count != 2) || k % 256 != 0) return false;
  int64_t rows = 0;
  for (int s = 0; s < ph.count; ++s) {
    const LayerWeight& w = ph.seg[s];
    if (w.w == nullptr || w.rows <= 0 || (w.type != TensorType::Q4_K && w.type != TensorType::Q6_K)) return false;
    if (reinterpret_cast<uintptr_t>(w.w) % 16 != 0 || w.out == nullptr) return false;
    if (row_bytes(w.type, k) * (ph.swiglu ? 2 : 1) > size_t(kSlotBytes)) return false;
    rows += w.rows;
  }
  if (ph.swiglu) return ph.seg[0].type == ph.seg[1].type && ph.seg[0].rows == ph.seg[1].rows && ph.seg[0].rows == out_rows;
  return out_rows < 0 || rows == out_rows;
}

Phase to_phase(const LayerPhase& ph, int64_t k) {
  Phase P{};
  P.swiglu = ph.swiglu ? 1 : 0;
  P.count = ph.swiglu ? 1 : ph.count;
  P.k = k;
  for (int s = 0; s < ph.count; ++s) {
    const LayerWeight& w = ph.seg[s];
    const uint32_t rb = uint32_t(row_bytes(w.type, k));
    P.seg[s] = Seg{static_cast<const uint8_t*>(w.w), w.out, w.rows, rb, std::max(1u, uint32_t(kSlotBytes) / (rb * (ph.swiglu ? 2 : 1))),
                   w.type == TensorType::Q6_K};
  }
  for (int s = 0; s < P.count; ++s) P.bytes += uint64_t(P.seg[s].rb) * (P.swiglu ? 2 : 1) * uint64_t(P.seg[s].rows);
  return P;
}

template <int V>
cudaError_t launch_v(const Params& p, size_t smem, cudaStream_t stream) {
  int dev = 0, sms = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  static size_t smem_set = 0;  // the attribute only grows (and is not a stream operation: capture is fine)
  static int per_sm = 0;
  if (smem > smem_set) {
    const cudaError_t rc = cudaFuncSetAttribute(layer_tail_kernel<V>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    if (rc != cudaSuccess) return rc;
    smem_set = smem;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, layer_tail_kernel<V>, kThreads, smem);
  }
  if (per_sm < 1) return cudaErrorInvalidConfiguration;  // the grid barrier needs every block resident
  layer_tail_kernel<V><<<unsigned(sms), kThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace

void set_layer_trace(unsigned long long* trace) { g_trace = trace; }

bool layer_tail_supported(const LayerTailArgs& a) {
  int dev = 0, major = 0, optin = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess) {
    return false;
  }
  uint32_t xq_off = 0, bar_off = 0;
  const bool dims = a.dim > 0 && a.dim % 32 == 0 && vec_per_thread(a.dim) <= 4 && a.q_dim % 32 == 0 && a.ffn % 32 == 0 &&
                                      fast_norm_supports(a.dim) && norm_threads() == kConsumers;
  return major >= 9 && dims && smem_bytes(a, xq_off, bar_off) <= size_t(optin) && a.attn_q8 != nullptr && a.g_q8 && a.x && a.o &&
         a.g && a.h && a.ffn_gain && a.next_gain && phase_ok(a.wo, a.q_dim, a.dim) && phase_ok(a.gate_up, a.dim, a.ffn) &&
         a.gate_up.seg[0].out == a.g && phase_ok(a.down, a.ffn, a.dim) && a.wo.seg[0].out == a.o && a.down.seg[0].out == a.o &&
         a.wo.count == 1 && a.down.count == 1 && phase_ok(a.qkv, a.dim, -1);
}

cudaError_t launch_layer_tail(const LayerTailArgs& a, unsigned* sync, cudaStream_t stream) {
  if (!layer_tail_supported(a) || sync == nullptr) return cudaErrorInvalidValue;
  Params p{};
  p.ph[0] = to_phase(a.wo, a.q_dim);
  p.ph[1] = to_phase(a.gate_up, a.dim);
  p.ph[2] = to_phase(a.down, a.ffn);
  p.ph[3] = to_phase(a.qkv, a.dim);
  p.attn_q8 = static_cast<const uint8_t*>(a.attn_q8);
  p.q_dim = a.q_dim, p.dim = a.dim, p.ffn = a.ffn;
  p.x = a.x, p.o = a.o, p.g = a.g, p.h = a.h;
  p.ffn_gain = a.ffn_gain, p.next_gain = a.next_gain, p.eps = a.eps;
  p.sync = sync;
  p.gcnt = sync + 4;
  p.g_q8 = static_cast<uint8_t*>(a.g_q8);
  static const int ablate = [] {
    const char* e = std::getenv("VELLUM_CUDA_LAYER_ABLATE");
    return e != nullptr ? std::atoi(e) : 0;
  }();
  p.ablate = ablate;
  static const int prefetch = [] {
    const char* e = std::getenv("VELLUM_CUDA_LAYER_PREFETCH");
    return e != nullptr ? std::max(0, std::atoi(e)) : 8;
  }();
  p.prefetch = prefetch;
  p.trace = g_trace;
  const size_t smem = smem_bytes(a, p.xq_off, p.bar_off);
  switch (vec_per_thread(a.dim)) {
    case 1: return launch_v<1>(p, smem, stream);
    case 2: return launch_v<2>(p, smem, stream);
    default: return launch_v<4>(p, smem, stream);
  }
}

}  // namespace vellum::cuda
