// The layer kernel (layer_kernel.h, round 19).
//
// One block of 16 warps per SM (512 threads: the norm kernel's count, so a norm's sum of squares is
// reduced in its order). Phase p's rows are split over the blocks by bytes (on the host: a table in
// the parameters); in its share a block takes items (four rows of a segment, or two SwiGLU outputs'
// gate and up rows) round robin over its warps. A warp streams its items' weights, pass by pass
// (one 1 024-element group of the four rows), through a ring of kStages stages of its own in
// shared memory with cp.async, kStages - 1 passes in flight across item boundaries, and multiplies
// each pass as gemv_kq does (so each row gets gemv_kq's bits), one load of x for the four rows.
// At the end of a phase a warp issues its first passes of the next phase before the grid barrier:
// weights do not depend on activations, so DRAM keeps streaming while the blocks wait for each
// other and build the next x in shared memory (the norm of x + o, or the attention's or g's int8
// copy: a few KB from L2). The first phase's first passes are issued before the programmatic wait,
// while the attention still runs.
//
// Earlier versions (docs/cuda.md round 19): a ring of block-wide slots filled by a producer warp
// with bulk copies (branch r19-ring; ~0.5 us a slot handoff, and 16 warps reading every row from
// shared memory could not keep up), then weights loaded to registers one pass ahead, then a ring
// of two rows an item (both issue-bound: 16 warps an SM spent more instructions on the stream's
// bookkeeping than on the dot products).
//
// The residual x is read by every block's norm, so no block may write it before all have read it:
// block 0 keeps the new x in registers and writes it after the next grid barrier (phase 1's) or,
// after the last phase, once every block has counted itself past its last norm (phase 3's).
// g's int8 copy is written in phase 1 by the warp that completes each 32-row group of g (a count a
// group), so phase 2 copies 18 KB instead of every block quantizing all of g.

#include "backend/cuda/layer_kernel.h"

#include <algorithm>
#include <cstdlib>

#include "backend/cuda/cp_async.cuh"
#include "backend/cuda/dequant.cuh"
#include "backend/cuda/fused_kernels.h"
#include "backend/cuda/gemv_kernels.h"
#include "backend/cuda/gemv_kq.cuh"
#include "backend/cuda/launch.h"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/q8_block.cuh"
#include "backend/cuda/sum_squares.cuh"
#include "backend/cuda/warp_reduce.cuh"

namespace vellum::cuda {
namespace {

constexpr int kConsumerWarps = 16;
constexpr int kConsumers = kConsumerWarps * 32;  // = the norm kernel's threads (checked at launch)
constexpr int kPhases = 4;                        // wo, gate/up, down, qkv
constexpr int kMaxBlocks = 144;                   // one a multiprocessor (H100/H200: 132)
constexpr int kItemRows = 4;                      // weight rows an item (SwiGLU: 2 outputs, their gate and up rows)
constexpr int kStages = 3;                        // a warp's ring: kStages - 1 passes in flight
constexpr int kStageBytes = kItemRows * 848;      // four rows' group (Q6_K's 848 bytes the larger)

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
  int swiglu;  // seg[0] gate, seg[1] up: an item is 2 outputs, their gate and up rows
  int64_t k;
  int32_t start[kMaxBlocks + 1];  // block b's rows [start[b], start[b + 1]) over the segments in order
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
  // means something): 1 no grid barriers, 2 no rows, 4 no norms or copies of x, 8 no passes of the
  // next phase issued before the barrier.
  int ablate;
  unsigned long long* trace;  // set_layer_trace: clock64 at kLayerTraceEvents points a block, or null
  uint32_t ring_off;          // shared memory: x's int8 copy, then the warps' rings
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

// ---- a block's share of a phase ----
__device__ __forceinline__ int walk_count(const Phase& P) { return P.swiglu ? 1 : P.count; }
// Items of the block's rows [r0, r1): per segment piece, runs of 4 rows or of 2 SwiGLU outputs (the
// last run shorter). item(i) gives item i's segment, first row and row (output) count.
__device__ __forceinline__ int item_step(const Phase& P) { return P.swiglu ? kItemRows / 2 : kItemRows; }
struct Share {
  const Phase* P;
  int64_t r0, r1;
  int64_t items = 0;
  __device__ explicit Share(const Phase& p) : P(&p), r0(p.start[blockIdx.x]), r1(p.start[blockIdx.x + 1]) {
    int64_t start = 0;
    for (int s = 0; s < walk_count(p); ++s) {
      const int64_t a = max(r0, start), e = min(r1, start + p.seg[s].rows);
      if (a < e) items += (e - a + item_step(p) - 1) / item_step(p);
      start += p.seg[s].rows;
    }
  }
  __device__ void item(int64_t i, int& seg, int64_t& row, int& n) const {
    int64_t start = 0;
    for (int s = 0; s < walk_count(*P); ++s) {
      const int64_t a = max(r0, start), e = min(r1, start + P->seg[s].rows);
      if (a < e) {
        const int step = item_step(*P);
        const int64_t here = (e - a + step - 1) / step;
        if (i < here) {
          seg = s;
          row = a - start + step * i;
          n = int(min(int64_t(step), e - (a + step * i)));
          return;
        }
        i -= here;
      }
      start += P->seg[s].rows;
    }
  }
};

// ---- a warp's stream of passes: stage s is pass s % passes of the warp's item s / passes ----
// The issue side walks it with a cursor (an item lookup an item, no division a pass).
struct Stream {
  const Phase* P;
  Share sh;
  int passes;
  int stages;  // all of the warp's passes in the phase
  int next = 0, pass = 0, seg = 0, n = 1;
  int64_t item, row = 0;
  __device__ Stream(const Phase& p, int warp) : P(&p), sh(p), passes(int((p.k / 256 + 3) / 4)), item(warp) {
    const int64_t mine = sh.items > warp ? (sh.items - warp + kConsumerWarps - 1) / kConsumerWarps : 0;
    stages = int(mine) * passes;
    if (stages > 0) sh.item(item, seg, row, n);
  }
  // The next stage's four rows (SwiGLU: two gate rows, then their up rows; a short item repeats
  // its last) into ring entry next % kStages; one commit group a call (empty past the end), so
  // that waits count stages.
  __device__ void issue_next(int lane, uint8_t* ring) {
    if (next < stages) {
      const Seg& sg = P->seg[seg];
      const int gb = sg.q6 ? DecQ6_KR::kGroupBytes : DecQ4_KR::kGroupBytes, chunks = gb / 16;
      const size_t off = size_t(pass) * gb;
      const uint8_t *r0, *r1, *r2, *r3;  // not an array: indexed by a run-time j it would live in local memory
      if (P->swiglu) {
        const int64_t second = row + min(1, n - 1);
        r0 = sg.w + size_t(row) * sg.rb + off, r1 = sg.w + size_t(second) * sg.rb + off;
        r2 = P->seg[1].w + size_t(row) * sg.rb + off, r3 = P->seg[1].w + size_t(second) * sg.rb + off;
      } else {
        r0 = sg.w + size_t(row) * sg.rb + off;
        r1 = sg.w + size_t(row + min(1, n - 1)) * sg.rb + off;
        r2 = sg.w + size_t(row + min(2, n - 1)) * sg.rb + off;
        r3 = sg.w + size_t(row + min(3, n - 1)) * sg.rb + off;
      }
      uint8_t* dst = ring + (next % kStages) * kStageBytes;
      for (int c = lane; c < kItemRows * chunks; c += 32) {
        const int j = (c >= chunks) + (c >= 2 * chunks) + (c >= 3 * chunks);
        const uint8_t* src = j == 0 ? r0 : j == 1 ? r1 : j == 2 ? r2 : r3;
        cp_async16(dst + j * gb + 16 * (c - j * chunks), src + 16 * (c - j * chunks));
      }
      if (++pass == passes) {
        pass = 0;
        item += kConsumerWarps;
        if (next + 1 < stages) sh.item(item, seg, row, n);
      }
    }
    ++next;
    cp_async_commit();
  }
  __device__ void issue_head(int lane, uint8_t* ring) {
#pragma unroll 1
    for (int i = 0; i < kStages - 1; ++i) issue_next(lane, ring);
  }
};

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
  for (int j = 0; j < V; ++j) ss = __fadd_rn(ss, sum_squares(v[j]));
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
    quantize_q8_float4(y[j], i, i < n4, xq, xs);
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

// One pass of an item's four rows from ring entry `st` (gemv_kq's dot, a lane's sub-block of the
// group; one load of x for the four).
template <class F>
__device__ __forceinline__ void use_pass(const uint8_t* st, int pass, int64_t nb, const int8_t* xq, const float2* xs, int lane,
                                         float (&acc)[kItemRows]) {
  kq_pass_shared<F, kItemRows>(st, F::kGroupBytes, pass, nb, xq, xs, lane, typename F::Lane(lane), acc);
}

template <int V>
__global__ void __launch_bounds__(kConsumers, 1) layer_tail_kernel(const __grid_constant__ Params p) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31, t = threadIdx.x;
  extern __shared__ __align__(128) uint8_t sm[];
  int8_t* xq = reinterpret_cast<int8_t*>(sm);
  uint8_t* ring = sm + p.ring_off + size_t(warp) * kStages * kStageBytes;  // this warp's
  // The first phase's first passes while the previous kernel finishes: weights, which no kernel
  // writes, into this warp's own ring.
  Stream st(p.ph[0], warp);
  st.issue_head(lane, ring);
  pdl_wait();
  __shared__ float partial[kConsumerWarps];
  __shared__ unsigned start_gen;
  mark(p, 0);
  if (t == 0) start_gen = ld_acquire(&p.sync[1]);
  float4 xnew[V], y[V];  // block 0: the residual (and normed row) it writes later
  for (int ph = 0; ph < kPhases; ++ph) {
    const Phase& P = p.ph[ph];
    const int64_t k = P.k, nb = k / 256;
    float2* xs = reinterpret_cast<float2*>(reinterpret_cast<uint8_t*>(xq) + (k + 15) / 16 * 16);
    if (ph > 0) grid_barrier(p.sync, start_gen, unsigned(ph - 1), p.ablate & 1);
    mark(p, 1 + 3 * ph);
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
    mark(p, 2 + 3 * ph);
    if (ph == 3 && t == 0 && !(p.ablate & 4)) {
      __threadfence();
      atomicAdd(&p.sync[2], 1u);  // this block has read x for the last time
    }
    if (ph > 0 && (p.ablate & 8)) {
      st = Stream(P, warp);
      st.issue_head(lane, ring);
    }
    float acc[kItemRows] = {};
    int64_t item = warp;
    int pass = 0, seg = 0, n = 1;
    int64_t row = 0;
    const int stages = (p.ablate & 2) ? 0 : st.stages;
    for (int s = 0; s < stages; ++s) {
      cp_async_wait<kStages - 2>();  // stage s has landed (this lane's copies)
      __syncwarp();                  // and every lane's
      if (pass == 0) st.sh.item(item, seg, row, n);
      const Seg& sg = P.seg[seg];
      const uint8_t* stage = ring + (s % kStages) * kStageBytes;
      if (sg.q6) use_pass<GemvQ6K>(stage, pass, nb, xq, xs, lane, acc);
      else use_pass<GemvQ4K>(stage, pass, nb, xq, xs, lane, acc);
      __syncwarp();  // every lane is done with the entry before it is refilled
      st.issue_next(lane, ring);
      if (++pass < st.passes) continue;
#pragma unroll
      for (int j = 0; j < kItemRows; ++j) acc[j] = warp_sum(acc[j]);
      if (P.swiglu) {
#pragma unroll
        for (int j = 0; j < kItemRows / 2; ++j) {  // outputs row, row + 1: gate acc[j], up acc[2 + j]
          if (j >= n) break;
          const int64_t o = row + j;
          unsigned last = 0;
          if (lane == 0) {
            sg.out[o] = mul(acc[j] / (1.0f + expf(-acc[j])), acc[2 + j]);  // as swiglu_kernel
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
        }
      } else if (lane == 0) {
#pragma unroll
        for (int j = 0; j < kItemRows; ++j) {
          if (j < n) sg.out[row + j] = acc[j];
        }
      }
#pragma unroll
      for (int j = 0; j < kItemRows; ++j) acc[j] = 0.0f;
      pass = 0;
      item += kConsumerWarps;
    }
    cp_async_wait<0>();  // the empty groups past the stream's end (the ring is free)
    __syncwarp();
    // This warp's first passes of the next phase, before the barrier: DRAM keeps streaming while
    // the blocks wait for each other.
    if (ph + 1 < kPhases && !(p.ablate & 8)) {
      st = Stream(p.ph[ph + 1], warp);
      st.issue_head(lane, ring);
    }
    if (warp == 0) mark(p, 3 + 3 * ph);
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
  mark(p, 13);
}

unsigned long long* g_trace = nullptr;

size_t row_bytes(TensorType type, int64_t k) {
  return type == TensorType::Q6_K ? DecQ6_KR::repacked_row_bytes(k) : DecQ4_KR::repacked_row_bytes(k);
}

int vec_per_thread(int64_t dim) { return int((dim / 4 + kConsumers - 1) / kConsumers); }

size_t ring_offset(const LayerTailArgs& a) { return (q8_bytes(std::max({a.q_dim, a.dim, a.ffn})) + 127) / 128 * 128; }
size_t smem_bytes(const LayerTailArgs& a) { return ring_offset(a) + size_t(kConsumerWarps) * kStages * kStageBytes; }

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

// Block b of `blocks` takes the rows (SwiGLU: gate/up pairs) that start in bytes [T·b/blocks,
// T·(b+1)/blocks) of the phase's T bytes: the first row at or after each bound.
Phase to_phase(const LayerPhase& ph, int64_t k, int blocks) {
  Phase P{};
  P.swiglu = ph.swiglu ? 1 : 0;
  P.count = ph.swiglu ? 1 : ph.count;
  P.k = k;
  for (int s = 0; s < ph.count; ++s) {
    const LayerWeight& w = ph.seg[s];
    P.seg[s] = Seg{static_cast<const uint8_t*>(w.w), w.out, w.rows, uint32_t(row_bytes(w.type, k)), w.type == TensorType::Q6_K};
  }
  uint64_t total = 0;
  for (int s = 0; s < P.count; ++s) total += uint64_t(P.seg[s].rb) * (P.swiglu ? 2 : 1) * uint64_t(P.seg[s].rows);
  for (int b = 0; b <= blocks; ++b) {
    const uint64_t bound = total * uint64_t(b) / uint64_t(blocks);
    uint64_t before = 0;
    int64_t rows = 0;
    int s = 0;
    for (; s < P.count; ++s) {
      const uint64_t u = uint64_t(P.seg[s].rb) * (P.swiglu ? 2 : 1), seg_bytes = u * uint64_t(P.seg[s].rows);
      if (bound <= before + seg_bytes) {
        rows += int64_t((bound - before + u - 1) / u);
        break;
      }
      before += seg_bytes;
      rows += P.seg[s].rows;
    }
    P.start[b] = int32_t(rows);
  }
  return P;
}

int sm_count() {
  int dev = 0, sms = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  return sms;
}

template <int V>
cudaError_t launch_v(const Params& p, size_t smem, cudaStream_t stream) {
  const int sms = sm_count();
  static size_t smem_set = 0;  // the attribute only grows (and is not a stream operation: capture is fine)
  static int per_sm = 0;
  if (smem > smem_set) {
    const cudaError_t rc = cudaFuncSetAttribute(layer_tail_kernel<V>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    if (rc != cudaSuccess) return rc;
    smem_set = smem;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, layer_tail_kernel<V>, kConsumers, smem);
  }
  if (per_sm < 1) return cudaErrorInvalidConfiguration;  // the grid barrier needs every block resident
  launch_kernel(layer_tail_kernel<V>, unsigned(sms), kConsumers, smem, stream, p);
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
                    fast_norm_supports(a.dim) && norm_threads() == kConsumers && std::max({a.q_dim, a.dim, a.ffn}) < (int64_t(1) << 30);
  return major >= 9 && dims && sm_count() <= kMaxBlocks && smem_bytes(a) <= size_t(optin) && a.x && a.o &&
         a.g && a.h && a.ffn_gain && a.next_gain && phase_ok(a.wo, a.q_dim, a.dim) && phase_ok(a.gate_up, a.dim, a.ffn) &&
         a.gate_up.seg[0].out == a.g && phase_ok(a.down, a.ffn, a.dim) && a.wo.seg[0].out == a.o && a.down.seg[0].out == a.o &&
         a.wo.count == 1 && a.down.count == 1 && phase_ok(a.qkv, a.dim, -1);
}

cudaError_t launch_layer_tail(const LayerTailArgs& a, unsigned* sync, cudaStream_t stream) {
  if (!layer_tail_supported(a) || a.attn_q8 == nullptr || a.g_q8 == nullptr || sync == nullptr) return cudaErrorInvalidValue;
  Params p{};
  const int blocks = sm_count();
  p.ph[0] = to_phase(a.wo, a.q_dim, blocks);
  p.ph[1] = to_phase(a.gate_up, a.dim, blocks);
  p.ph[2] = to_phase(a.down, a.ffn, blocks);
  p.ph[3] = to_phase(a.qkv, a.dim, blocks);
  p.ring_off = uint32_t(ring_offset(a));
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
  p.trace = g_trace;
  const size_t smem = smem_bytes(a);
  switch (vec_per_thread(a.dim)) {
    case 1: return launch_v<1>(p, smem, stream);
    case 2: return launch_v<2>(p, smem, stream);
    default: return launch_v<4>(p, smem, stream);
  }
}

}  // namespace vellum::cuda
