// The layer kernel (layer_kernel.h, round 19).
//
// One block of 16 warps per SM (512 threads: the norm kernel's count, so a norm's sum of squares is
// reduced in its order). Phase p's rows are split over the blocks by bytes; in its share a block
// takes items (two rows of a segment, or a SwiGLU gate/up pair) round robin over its warps, and a
// warp reads their weights straight from global memory with two passes in flight, as gemv_kq does.
// Between phases: a grid barrier (the outputs of every block are complete), then each block builds
// the next x in shared memory itself (the norm of x + o; the attention's or g's int8 copy): a few KB
// from L2. Before the barrier each warp prefetches its first items of the next phase into L2, so
// that DRAM keeps streaming while the blocks wait; the first phase's are prefetched before the
// programmatic wait, while the attention still runs.
//
// A first version (branch r19-ring) staged every weight through a ring of shared-memory slots
// filled by a producer warp with bulk copies: each slot handoff cost ~0.5 us and 16 warps reading
// rows from shared memory could not keep up (docs/cuda.md round 19).
//
// The residual x is read by every block's norm, so no block may write it before all have read it:
// block 0 keeps the new x in registers and writes it after the next grid barrier (phase 1's) or,
// after the last phase, once every block has counted itself past its last norm (phase 3's).
// g's int8 copy is written in phase 1 by the warp that completes each 32-row group of g (a count a
// group), so phase 2 copies 18 KB instead of every block quantizing all of g.

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
constexpr int kPhases = 4;                        // wo, gate/up, down, qkv

struct Seg {
  const uint8_t* w;
  float* out;
  int64_t rows;
  uint32_t rb;  // bytes a row (device layout)
  int q6;       // Q6_K (else Q4_K)
};
struct Phase {
  Seg seg[kLayerMaxSegs];
  int count;
  int swiglu;      // seg[0] gate, seg[1] up: one item a row pair
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
  // Experiment only (VELLUM_CUDA_LAYER_ABLATE, a bit mask; the results are wrong, only the time
  // means something): 1 no grid barriers, 2 no rows, 4 no norms or copies of x, 8 no prefetch.
  int ablate;
  int prefetch;  // items a warp prefetches of the next phase (VELLUM_CUDA_LAYER_PREFETCH, default 2)
  unsigned long long* trace;  // set_layer_trace: clock64 at kLayerTraceEvents points a block, or null
};

// Measurement only (set_layer_trace): thread 0 stamps SM cycles.
__device__ __forceinline__ void mark(const Params& p, int ev) {
  if (p.trace != nullptr && threadIdx.x == 0) p.trace[size_t(blockIdx.x) * kLayerTraceEvents + ev] = clock64();
}
__device__ __forceinline__ void consumers_sync() { __syncthreads(); }
__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void prefetch_l2(const void* src, uint32_t bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(src), "r"(bytes) : "memory");
}

// ---- a block's share of a phase ----
__device__ __forceinline__ uint64_t unit_bytes(const Phase& P, int s) { return uint64_t(P.seg[s].rb) * (P.swiglu ? 2 : 1); }
__device__ __forceinline__ int walk_count(const Phase& P) { return P.swiglu ? 1 : P.count; }
// The first row (over the phase's segments in order; SwiGLU: gate/up pairs) at or after byte b.
__device__ int64_t row_at(const Phase& P, uint64_t b) {
  uint64_t before = 0;
  int64_t rows = 0;
  for (int s = 0; s < walk_count(P); ++s) {
    const uint64_t u = unit_bytes(P, s), seg_bytes = u * uint64_t(P.seg[s].rows);
    if (b <= before + seg_bytes) return rows + int64_t((b - before + u - 1) / u);
    before += seg_bytes;
    rows += P.seg[s].rows;
  }
  return rows;
}
// Items of the block's rows [r0, r1): per segment piece, pairs of rows (the last alone) or SwiGLU
// outputs. item(i) gives item i's segment, first row and row count (1 or 2).
struct Share {
  const Phase* P;
  int64_t r0, r1;
  int64_t items = 0;
  __device__ Share(const Phase& p, unsigned b, unsigned blocks)
      : P(&p), r0(row_at(p, p.bytes * b / blocks)), r1(row_at(p, p.bytes * (b + 1) / blocks)) {
    int64_t start = 0;
    for (int s = 0; s < walk_count(p); ++s) {
      const int64_t a = max(r0, start), e = min(r1, start + p.seg[s].rows);
      if (a < e) items += p.swiglu ? e - a : (e - a + 1) / 2;
      start += p.seg[s].rows;
    }
  }
  __device__ void item(int64_t i, int& seg, int64_t& row, int& n) const {
    int64_t start = 0;
    for (int s = 0; s < walk_count(*P); ++s) {
      const int64_t a = max(r0, start), e = min(r1, start + P->seg[s].rows);
      if (a < e) {
        const int64_t here = P->swiglu ? e - a : (e - a + 1) / 2;
        if (i < here) {
          seg = s;
          row = a - start + (P->swiglu ? i : 2 * i);
          n = P->swiglu ? 1 : int(min(int64_t(2), e - (a + 2 * i)));
          return;
        }
        i -= here;
      }
      start += P->seg[s].rows;
    }
  }
};
// Item i of a share into L2: its rows (SwiGLU: the gate and up rows).
__device__ void prefetch_item(const Share& sh, int64_t i) {
  int seg = 0, n = 1;
  int64_t row = 0;
  sh.item(i, seg, row, n);
  const Seg& s = sh.P->seg[seg];
  prefetch_l2(s.w + size_t(row) * s.rb, uint32_t(n) * s.rb);
  if (sh.P->swiglu) prefetch_l2(sh.P->seg[1].w + size_t(row) * s.rb, s.rb);
}

// ---- two rows a warp from global memory: gemv_kq_kernel's order for each (a lane's groups in
// order, then warp_sum); pass p + 1's loads in flight while pass p is used ----
template <class F>
__device__ __forceinline__ void use2(const typename F::Raw& wa, const typename F::Raw& wb, int p, int64_t nb, const int8_t* xq,
                                     const float2* xs, int lane, const typename F::Lane& L, float& a, float& b) {
  if (int64_t(p) * 4 + lane / 8 >= nb) return;  // a short last group
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
  typename F::Raw a0, b0, a1, b1;
  F::load(ra, lane, L, a0);
  F::load(rb, lane, L, b0);
  float a = 0.0f, b = 0.0f;
  for (int p = 0; p < passes; p += 2) {
    if (p + 1 < passes) {
      F::load(ra + size_t(p + 1) * F::kGroupBytes, lane, L, a1);
      F::load(rb + size_t(p + 1) * F::kGroupBytes, lane, L, b1);
    }
    use2<F>(a0, b0, p, nb, xq, xs, lane, L, a, b);
    if (p + 1 >= passes) break;
    if (p + 2 < passes) {
      F::load(ra + size_t(p + 2) * F::kGroupBytes, lane, L, a0);
      F::load(rb + size_t(p + 2) * F::kGroupBytes, lane, L, b0);
    }
    use2<F>(a1, b1, p + 1, nb, xq, xs, lane, L, a, b);
  }
  oa = warp_sum(a);
  ob = warp_sum(b);
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

// Every block: the outputs written so far are visible to all blocks after this.
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

// An int8 copy (q8_bytes(k) bytes, global) into shared memory.
__device__ __forceinline__ void copy_q8(const uint8_t* src, int8_t* xq, int64_t k) {
  const int64_t chunks = ((k + 15) / 16 * 16 + k / 32 * int64_t(sizeof(float2))) / 16;  // q8_bytes(k)
  for (int64_t c = threadIdx.x; c < chunks; c += kConsumers) {
    reinterpret_cast<uint4*>(xq)[c] = __ldcg(reinterpret_cast<const uint4*>(src) + c);
  }
}

template <int V>
__global__ void __launch_bounds__(kConsumers, 1) layer_tail_kernel(const __grid_constant__ Params p) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31, t = threadIdx.x;
  {  // the first phase's first items into L2 while the previous kernel finishes (weights only)
    const Share first(p.ph[0], blockIdx.x, gridDim.x);
    if (!(p.ablate & 8)) {
      for (int64_t i = warp; i < first.items && i < int64_t(p.prefetch) * kConsumerWarps; i += kConsumerWarps) {
        if (lane == 0) prefetch_item(first, i);
      }
    }
  }
  pdl_wait();
  extern __shared__ __align__(128) uint8_t sm[];
  int8_t* xq = reinterpret_cast<int8_t*>(sm);
  __shared__ float partial[kConsumerWarps];
  __shared__ unsigned start_gen;
  mark(p, 0);
  if (t == 0) start_gen = ld_acquire(&p.sync[1]);
  float4 xnew[V], y[V];  // block 0: the residual (and normed row) it writes later
  for (int ph = 0; ph < kPhases; ++ph) {
    const Phase& P = p.ph[ph];
    const int64_t k = P.k;
    float2* xs = reinterpret_cast<float2*>(reinterpret_cast<uint8_t*>(xq) + (k + 15) / 16 * 16);
    if (ph > 0) grid_barrier(p.sync, start_gen, unsigned(ph - 1), p.ablate & 1);
    mark(p, 2 + 3 * ph);
    if (!(p.ablate & 4)) {
      if (ph == 0) {
        copy_q8(p.attn_q8, xq, k);  // the attention's int8 copy, as it is
      } else if (ph == 2) {
        if (blockIdx.x == 0) store_row(p.x, xnew, p.dim);  // every block has read x (phase 1's norm)
        copy_q8(p.g_q8, xq, k);
      } else {
        norm_to_q8<V>(p.x, p.o, ph == 1 ? p.ffn_gain : p.next_gain, p.dim, p.eps, xq, xs, partial, xnew, y);
      }
    }
    consumers_sync();
    mark(p, 3 + 3 * ph);
    if (ph == 3 && t == 0 && !(p.ablate & 4)) {
      __threadfence();
      atomicAdd(&p.sync[2], 1u);  // this block has read x for the last time
    }
    const Share sh(P, blockIdx.x, gridDim.x);
    for (int64_t i = (p.ablate & 2) ? sh.items : warp; i < sh.items; i += kConsumerWarps) {
      int seg = 0, n = 1;
      int64_t row = 0;
      sh.item(i, seg, row, n);
      const Seg& sg = P.seg[seg];
      const uint8_t* ra = sg.w + size_t(row) * sg.rb;
      const uint8_t* rb = P.swiglu ? P.seg[1].w + size_t(row) * sg.rb : ra + (n == 2 ? sg.rb : 0);
      float a = 0.0f, b = 0.0f;
      if (sg.q6) dot2<GemvQ6K>(ra, rb, k, xq, xs, lane, a, b);
      else dot2<GemvQ4K>(ra, rb, k, xq, xs, lane, a, b);
      if (P.swiglu) {
        unsigned last = 0;
        if (lane == 0) {
          sg.out[row] = mul(a / (1.0f + expf(-a)), b);  // as swiglu_kernel
          __threadfence();
          last = atomicAdd(&p.gcnt[row / 32], 1u) == 31u;
        }
        if (__shfl_sync(kFull, last, 0)) {  // the group's 32 rows are written: its int8 copy for phase 2
          __threadfence();
          const int64_t g0 = row / 32 * 32;
          quantize_q8_warp(__ldcg(sg.out + g0 + lane), reinterpret_cast<int8_t*>(p.g_q8) + g0 + lane,
                           reinterpret_cast<float2*>(p.g_q8 + (p.ffn + 15) / 16 * 16) + row / 32);
          if (lane == 0) p.gcnt[row / 32] = 0;
        }
      } else if (lane == 0) {
        sg.out[row] = a;
        if (n == 2) sg.out[row + 1] = b;
      }
    }
    if (ph + 1 < kPhases && !(p.ablate & 8)) {  // this warp's first items of the next phase into L2
      const Share next(p.ph[ph + 1], blockIdx.x, gridDim.x);
      for (int64_t i = warp; i < next.items && i < int64_t(p.prefetch) * kConsumerWarps; i += kConsumerWarps) {
        if (lane == 0) prefetch_item(next, i);
      }
    }
    if (warp == 0) mark(p, 4 + 3 * ph);
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
  mark(p, 14);
}

unsigned long long* g_trace = nullptr;

size_t row_bytes(TensorType type, int64_t k) {
  return type == TensorType::Q6_K ? DecQ6_KR::repacked_row_bytes(k) : DecQ4_KR::repacked_row_bytes(k);
}

int vec_per_thread(int64_t dim) { return int((dim / 4 + kConsumers - 1) / kConsumers); }

size_t smem_bytes(const LayerTailArgs& a) { return (q8_bytes(std::max({a.q_dim, a.dim, a.ffn})) + 127) / 128 * 128; }

bool phase_ok(const LayerPhase& ph, int64_t k, int64_t out_rows) {
  if (ph.count < 1 || ph.count > kLayerMaxSegs || (ph.swiglu && ph.count != 2) || k % 256 != 0) return false;
  int64_t rows = 0;
  for (int s = 0; s < ph.count; ++s) {
    const LayerWeight& w = ph.seg[s];
    if (w.w == nullptr || w.rows <= 0 || (w.type != TensorType::Q4_K && w.type != TensorType::Q6_K)) return false;
    if (reinterpret_cast<uintptr_t>(w.w) % 16 != 0 || w.out == nullptr) return false;
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
    P.seg[s] = Seg{static_cast<const uint8_t*>(w.w), w.out, w.rows, rb, w.type == TensorType::Q6_K};
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
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, layer_tail_kernel<V>, kConsumers, smem);
  }
  if (per_sm < 1) return cudaErrorInvalidConfiguration;  // the grid barrier needs every block resident
  layer_tail_kernel<V><<<unsigned(sms), kConsumers, smem, stream>>>(p);
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
  const bool dims = a.dim > 0 && a.dim % 32 == 0 && vec_per_thread(a.dim) <= 4 && a.q_dim % 32 == 0 && a.ffn % 32 == 0 &&
                                      fast_norm_supports(a.dim) && norm_threads() == kConsumers;
  return major >= 9 && dims && smem_bytes(a) <= size_t(optin) && a.attn_q8 != nullptr && a.g_q8 && a.x && a.o &&
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
    return e != nullptr ? std::max(0, std::atoi(e)) : 2;
  }();
  p.prefetch = prefetch;
  p.trace = g_trace;
  const size_t smem = smem_bytes(a);
  switch (vec_per_thread(a.dim)) {
    case 1: return launch_v<1>(p, smem, stream);
    case 2: return launch_v<2>(p, smem, stream);
    default: return launch_v<4>(p, smem, stream);
  }
}

}  // namespace vellum::cuda
