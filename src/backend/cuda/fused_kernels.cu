// Fused element-wise kernels (fused_kernels.h). Each keeps the arithmetic of the unfused kernels it
// replaces (cuda_kernels.cu) expression for expression, so that results stay within their bounds
// (RoPE and the K/V store: the same bits).

#include "backend/cuda/fused_kernels.h"
#include "backend/cuda/launch.h"
#include "backend/cuda/warp_reduce.cuh"

#include <cuda_bf16.h>
#include <algorithm>
#include <cstdlib>
#include <cuda_fp16.h>

#include "backend/cuda/dequant.cuh"
#include "backend/cuda/gemv_mma.h"
#include "backend/cuda/pack16.cuh"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/q8_block.cuh"
#include "backend/cuda/sum_squares.cuh"

namespace vellum::cuda {
namespace {

// Threads of a norm block: 512 since round 16 (256 before). A one-row norm is a step's critical
// path, and 512 threads (2 float4s each at 4 096 columns) shortened it: llama3-8b batch 1 on an
// H200, graphs + PDL, 256 / 1024 / 512 threads: Q4_K_M 471-483 / 489-491 / 493 tok/s, BF16
// 223-227 / 228-229 / 229-230, Q8_0 342-343 / 348-355 / 351 (docs/cuda.md round 16).
// VELLUM_CUDA_NORM_THREADS=256/512/1024 picks another. The sum of squares is reduced per thread,
// per warp, then over the warps in order, so the count is part of the result's bits: one count
// for every launch of a process (batch invariance).
int g_norm_threads = [] {
  const char* e = std::getenv("VELLUM_CUDA_NORM_THREADS");
  const int v = e != nullptr ? std::atoi(e) : 512;
  return v == 256 || v == 1024 ? v : 512;
}();

// One NT-thread block per row; thread t holds float4s t, t + NT, ... in registers (V of them), so
// x is read once and every load is issued before the first use (the old kernel walked the row
// twice with one dependent load at a time: 9.3 us for 4096 floats on an H200).
// xb: the 16-bit copy (T: bf16, or f16 for F16 weights since round 14), when not null.
// Round 52: float4 i of token row `token` (a norm block's row) into gemv_mma's x layout of nt tiles
// (gemv_mma.h), the bits quantize_mma_x_kernel writes; all 8 threads of the 32-element block call it.
__device__ __forceinline__ void quantize_mma_float4(float4 y, int64_t i, bool store, uint8_t* xf, int token, int64_t k, int nt) {
  const Q8Float4 q = q8_float4(y);
  if (!store) return;
  const int64_t e0 = 4 * i, kv = k * nt;
  const int e = int(e0 % 256), s = e / 32, col = token % kMmaTile;
  const int64_t vj = mma_x_vsb(e0 / 256, token, nt);
  *reinterpret_cast<uint32_t*>(xf + mma_x_frag_byte(vj, col, e)) = q.packed;
  if ((threadIdx.x & 7) != 0) return;
  reinterpret_cast<float2*>(xf + kMmaTile * kv)[mma_x_scale_index(vj, col, s)] = q.pair;
  store_mma_min_pair(xf, kv, vj, col, s, q.pair.y);  // as quantize_mma_x_kernel
}

template <int V, typename T, int kNormThreads>
__global__ void __launch_bounds__(kNormThreads) add_rms_norm_kernel(float* x, const float* delta, const float* gain,
                                                                    int64_t cols, float eps, float* out, int8_t* xq,
                                                                    float2* xs, T* xb, NormRowsQ8 rq) {
  __shared__ float partial[kNormThreads / 32];
  const int64_t n4 = cols / 4;
  float4* xr = reinterpret_cast<float4*>(x + int64_t(blockIdx.x) * cols);
  const float4* dr = reinterpret_cast<const float4*>(delta + (delta ? int64_t(blockIdx.x) * cols : 0));
  const float4* g4 = reinterpret_cast<const float4*>(gain);
  // Every load (x, delta, gain) before any store: the compiler cannot prove that the stores do not
  // alias them, so a load after a store would wait for it (measured: 7.2 us instead of ~3). The
  // gain is a weight, loaded before the wait.
  float4 gv[V];
  const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
  for (int j = 0; j < V; ++j) {
    const int64_t i = threadIdx.x + int64_t(kNormThreads) * j;
    gv[j] = i < n4 ? g4[i] : zero;
  }
  pdl_wait();
  float4 v[V], dv[V];
#pragma unroll
  for (int j = 0; j < V; ++j) {
    const int64_t i = threadIdx.x + int64_t(kNormThreads) * j;
    v[j] = i < n4 ? xr[i] : zero;
    dv[j] = i < n4 && delta != nullptr ? dr[i] : zero;
  }
  float ss = 0.0f;
  if (delta != nullptr) {
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const int64_t i = threadIdx.x + int64_t(kNormThreads) * j;
      v[j] = make_float4(v[j].x + dv[j].x, v[j].y + dv[j].y, v[j].z + dv[j].z, v[j].w + dv[j].w);  // as add_kernel
      if (i < n4) xr[i] = v[j];
    }
  }
#pragma unroll
  for (int j = 0; j < V; ++j) ss = __fadd_rn(ss, sum_squares(v[j]));
#pragma unroll
  for (int o = 16; o > 0; o /= 2) ss += __shfl_xor_sync(kFull, ss, o);
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x / 32] = ss;
  __syncthreads();
  float total = 0.0f;
#pragma unroll
  for (int w = 0; w < kNormThreads / 32; ++w) total += partial[w];
  const float scale = 1.0f / sqrtf(total / static_cast<float>(cols) + eps);
  float4* o4 = out != nullptr ? reinterpret_cast<float4*>(out + int64_t(blockIdx.x) * cols) : nullptr;  // null: the copies only
#pragma unroll
  for (int j = 0; j < V; ++j) {
    const int64_t i = threadIdx.x + int64_t(kNormThreads) * j;
    float4 y = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (i < n4) {
      const float4 g = gv[j];
      y = make_float4(mul(mul(v[j].x, scale), g.x), mul(mul(v[j].y, scale), g.y), mul(mul(v[j].z, scale), g.z),
                      mul(mul(v[j].w, scale), g.w));
      if (o4 != nullptr) o4[i] = y;
      if (xb != nullptr) {  // the 16-bit copy a cuBLAS GEMM reads next (launch_f32_to_bf16/f16's rounding)
        reinterpret_cast<uint2*>(xb + int64_t(blockIdx.x) * cols)[i] = make_uint2(pack2(y.x, y.y, T{}), pack2(y.z, y.w, T{}));
      }
    }
    // 8 consecutive threads hold one 32-element block (cols % 32 == 0)
    if (xq != nullptr) quantize_q8_float4(y, i, i < n4, xq, xs);
    if (rq.base != nullptr && rq.stride != 0) {  // q8 rows (the rows GEMV)
      int8_t* r8 = static_cast<int8_t*>(rq.base) + blockIdx.x * rq.stride;
      quantize_q8_float4(y, i, i < n4, r8, reinterpret_cast<float2*>(r8 + (cols + 15) / 16 * 16));
    } else if (rq.base != nullptr) {  // gemv_mma's tiles
      quantize_mma_float4(y, i, i < n4, static_cast<uint8_t*>(rq.base), int(blockIdx.x), cols, rq.nt);
    }
  }
}

// KV elements: f32, or 16-bit storage rounded to nearest (as store_kv_kernel).
__device__ __forceinline__ void kv_put(float* p, float x) { *p = x; }
__device__ __forceinline__ void kv_put(__half* p, float x) { *p = __float2half_rn(x); }
__device__ __forceinline__ void kv_put(__nv_bfloat16* p, float x) { *p = __float2bfloat16_rn(x); }

// Blocks (row, y) (round 7). Thread t owns pair index i = t % hp of head slots t / hp + y·s,
// + s·gridDim.y, ... (s = blockDim / hp): q heads (rotated), k heads (rotated and stored; pairs past a partial
// rotary dimension stored as they are), v heads (stored). blockDim is a multiple of hp, so a
// thread's cos/sin (double, as rope_kernel) are computed once per row, not once per head: round 5's
// thread per pair spent most of its time in double sincos (19.8 us per 512-row layer).
template <typename T>
__global__ void rope_store_kv_kernel(float* q, int64_t q_cols, float* k, const float* v, int head_dim,
                                     const int32_t* positions, RopeParams p, KvPoolView kv, const int64_t* slots) {
  const int64_t r = blockIdx.x;
  const int hp = head_dim / 2;
  const int i = int(threadIdx.x) % hp, step = int(blockDim.x) / hp;
  const int q_heads = int(q_cols / head_dim), slots_n = q_heads + 2 * kv.kv_heads;
  const int64_t row = int64_t(kv.kv_heads) * kv.head_dim;
  // Positions and slots are step inputs, uploaded before the step's first kernel: the angles (double
  // sincos, the longest latency here) are computed before the wait (round 12).
  const int64_t slot = slots[r];
  T* base = static_cast<T*>(kv.pool) + (slot / kv.block_size) * kv.block_elems + (slot % kv.block_size) * row;
  float cf = 0.0f, sf = 0.0f;
  if (i < p.half) {  // as rope_kernel
    double s, c;
    sincos(double(positions[r]) * p.inv_freq[i], &s, &c);
    cf = static_cast<float>(c * p.magnitude);
    sf = static_cast<float>(s * p.magnitude);
  }
  pdl_wait();
  const int a = p.interleaved ? 2 * i : i, b = p.interleaved ? 2 * i + 1 : i + p.half;
  const auto rotate = [&](float* h) {
    const float x0 = h[a], x1 = h[b];
    h[a] = sub(mul(x0, cf), mul(x1, sf));
    h[b] = add(mul(x0, sf), mul(x1, cf));
  };
  for (int hs = int(threadIdx.x) / hp + int(blockIdx.y) * step; hs < slots_n; hs += step * int(gridDim.y)) {
    if (hs < q_heads) {
      if (i < p.half) rotate(q + r * q_cols + int64_t(hs) * head_dim);
    } else if (hs < q_heads + kv.kv_heads) {
      const int64_t off = int64_t(hs - q_heads) * head_dim;
      float* h = k + r * row + off;
      int e0 = a, e1 = b;
      if (i < p.half) {
        rotate(h);
      } else {
        e0 = 2 * p.half + 2 * (i - p.half), e1 = e0 + 1;
      }
      kv_put(base + kv.k_off + off + e0, h[e0]);
      kv_put(base + kv.k_off + off + e1, h[e1]);
    } else {
      const int64_t e = int64_t(hs - q_heads - kv.kv_heads) * head_dim + 2 * i;
      kv_put(base + kv.v_off + e, v[r * row + e]);
      kv_put(base + kv.v_off + e + 1, v[r * row + e + 1]);
    }
  }
}

// Round 34: launch_rope_kv_rows. Block r is row r. The row's cos/sin pairs are computed once into
// shared memory (one double sincos a pair, before the wait, as rope_store_kv_kernel), then each task
// is 4 pairs of one q or k head (halves: float4 loads of x0 = h[i..i+3], x1 = h[half+i..];
// interleaved: 2 pairs, one float4), 4 unrotated dims past 2·half, or 4 dims of one v head.
// rope_store_kv_kernel moved 24 MB a 512-row llama3-8b layer with scalar loads (12.9 us); here q
// is read once and written as 16 bits, and neither q nor k goes back to f32 memory.
template <typename T>
__device__ __forceinline__ void put4(T* p, float a, float b, float c, float d) {
  *reinterpret_cast<uint2*>(p) = make_uint2(pack2(a, b, T{}), pack2(c, d, T{}));
}
template <typename T>
__global__ void __launch_bounds__(256) rope_kv_rows_kernel(const float* q, int64_t q_cols, const float* k, const float* v,
                                                           T* q16, int head_dim, const int32_t* positions, RopeParams p,
                                                           KvPoolView kv, const int64_t* slots) {
  __shared__ float cf_s[kMaxRopePairs], sf_s[kMaxRopePairs];
  const int64_t r = blockIdx.x;
  // Thread tid's pair angle (half <= kMaxRopePairs = the block's threads), as rope_kernel, before the
  // wait; into shared memory after it (nothing is stored before the wait: pdl.cuh).
  const int tid = int(threadIdx.x);
  float cf = 0.0f, sf = 0.0f;
  if (tid < p.half) {
    double s, c;
    sincos(double(positions[r]) * p.inv_freq[tid], &s, &c);
    cf = static_cast<float>(c * p.magnitude);
    sf = static_cast<float>(s * p.magnitude);
  }
  const int64_t slot = slots[r];
  const int64_t row = int64_t(kv.kv_heads) * kv.head_dim;
  T* base = static_cast<T*>(kv.pool) + (slot / kv.block_size) * kv.block_elems + (slot % kv.block_size) * row;
  pdl_wait();
  if (tid < p.half) cf_s[tid] = cf, sf_s[tid] = sf;
  __syncthreads();
  // Per head, halves: half/4 tasks of 4 pairs (i, half + i), then (head_dim - 2·half)/4 tasks of
  // unrotated dims. Interleaved: a float4 is 2 pairs (2i, 2i + 1): half/2 pair tasks, then the rest.
  const int pair_tasks = p.interleaved ? p.half / 2 : p.half / 4, per_head = pair_tasks + (head_dim - 2 * p.half) / 4;
  const int q_heads = int(q_cols / head_dim), rot_tasks = (q_heads + kv.kv_heads) * per_head;
  const int v_tasks = kv.kv_heads * head_dim / 4;
  for (int t = int(threadIdx.x); t < rot_tasks + v_tasks; t += int(blockDim.x)) {
    if (t >= rot_tasks) {  // 4 dims of v
      const int e = (t - rot_tasks) * 4;
      const float4 x = *reinterpret_cast<const float4*>(v + r * row + e);
      put4(base + kv.v_off + e, x.x, x.y, x.z, x.w);
      continue;
    }
    const int hs = t / per_head, j = t % per_head;
    const bool is_q = hs < q_heads;
    const float* h = is_q ? q + r * q_cols + int64_t(hs) * head_dim : k + r * row + int64_t(hs - q_heads) * head_dim;
    T* dst = is_q ? q16 + r * q_cols + int64_t(hs) * head_dim : base + kv.k_off + int64_t(hs - q_heads) * head_dim;
    if (j >= pair_tasks) {  // unrotated dims past the rotary part
      const int e = 2 * p.half + (j - pair_tasks) * 4;
      const float4 x = *reinterpret_cast<const float4*>(h + e);
      put4(dst + e, x.x, x.y, x.z, x.w);
      continue;
    }
    if (p.interleaved) {  // dims 4j..4j+3: pairs 2j and 2j + 1
      const int i = 2 * j;
      const float4 x = *reinterpret_cast<const float4*>(h + 2 * i);
      const float c0 = cf_s[i], s0 = sf_s[i], c1 = cf_s[i + 1], s1 = sf_s[i + 1];
      put4(dst + 2 * i, sub(mul(x.x, c0), mul(x.y, s0)), add(mul(x.x, s0), mul(x.y, c0)), sub(mul(x.z, c1), mul(x.w, s1)),
           add(mul(x.z, s1), mul(x.w, c1)));
      continue;
    }
    const int i = j * 4;
    const float4 a = *reinterpret_cast<const float4*>(h + i), b = *reinterpret_cast<const float4*>(h + p.half + i);
    const float x0[4] = {a.x, a.y, a.z, a.w}, x1[4] = {b.x, b.y, b.z, b.w};
    float ya[4], yb[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {  // rope_store_kv_kernel's rotate
      const float c = cf_s[i + u], s = sf_s[i + u];
      ya[u] = sub(mul(x0[u], c), mul(x1[u], s));
      yb[u] = add(mul(x0[u], s), mul(x1[u], c));
    }
    put4(dst + i, ya[0], ya[1], ya[2], ya[3]);
    put4(dst + p.half + i, yb[0], yb[1], yb[2], yb[3]);
  }
}

template <typename T, int NT>
void launch_norm_nt(float* x, const float* delta, const float* gain, int64_t rows, int64_t cols, float eps, float* out,
                    int8_t* xq, float2* xs, T* xb, const NormRowsQ8& rq, cudaStream_t stream) {
  const int64_t per = (cols / 4 + NT - 1) / NT;  // float4s per thread
  const dim3 grid(static_cast<unsigned>(rows));
  if (per <= 1) launch_kernel(add_rms_norm_kernel<1, T, NT>, grid, NT, 0, stream, x, delta, gain, cols, eps, out, xq, xs, xb, rq);
  else if (per <= 2) launch_kernel(add_rms_norm_kernel<2, T, NT>, grid, NT, 0, stream, x, delta, gain, cols, eps, out, xq, xs, xb, rq);
  else if (per <= 4) launch_kernel(add_rms_norm_kernel<4, T, NT>, grid, NT, 0, stream, x, delta, gain, cols, eps, out, xq, xs, xb, rq);
  else launch_kernel(add_rms_norm_kernel<8, T, NT>, grid, NT, 0, stream, x, delta, gain, cols, eps, out, xq, xs, xb, rq);
}
template <typename T>
void launch_norm(float* x, const float* delta, const float* gain, int64_t rows, int64_t cols, float eps, float* out,
                 int8_t* xq, float2* xs, T* xb, const NormRowsQ8& rq, cudaStream_t stream) {
  if (g_norm_threads == 1024) launch_norm_nt<T, 1024>(x, delta, gain, rows, cols, eps, out, xq, xs, xb, rq, stream);
  else if (g_norm_threads == 512) launch_norm_nt<T, 512>(x, delta, gain, rows, cols, eps, out, xq, xs, xb, rq, stream);
  else launch_norm_nt<T, 256>(x, delta, gain, rows, cols, eps, out, xq, xs, xb, rq, stream);
}

}  // namespace

int norm_threads() { return g_norm_threads; }

cudaError_t launch_add_rms_norm(float* x, const float* delta, const float* gain, int64_t rows, int64_t cols, float eps,
                                float* out, void* q8, cudaStream_t stream, void* copy16, bool f16, const NormRowsQ8& rq) {
  if (!fast_norm_supports(cols) || (q8 != nullptr && (rows != 1 || cols % 32 != 0)) || (out == nullptr && copy16 == nullptr) ||
      (rq.base != nullptr && (rows < 2 || rows > kMmaRowsMax || cols % 256 != 0 || (rq.stride == 0 && rq.nt != mma_tiles(int(rows)))))) {
    return cudaErrorInvalidValue;
  }
  if (rows == 0) return cudaSuccess;
  auto* xq = static_cast<int8_t*>(q8);
  auto* xs = q8 ? reinterpret_cast<float2*>(static_cast<uint8_t*>(q8) + (cols + 15) / 16 * 16) : nullptr;
  if (f16) {
    launch_norm(x, delta, gain, rows, cols, eps, out, xq, xs, static_cast<__half*>(copy16), rq, stream);
  } else {
    launch_norm(x, delta, gain, rows, cols, eps, out, xq, xs, static_cast<__nv_bfloat16*>(copy16), rq, stream);
  }
  return cudaGetLastError();
}

cudaError_t launch_rope_store_kv(float* q, int64_t q_cols, float* k, const float* v, int64_t rows, int head_dim,
                                 const int32_t* positions, const RopeParams& p, const KvPoolView& kv,
                                 const int64_t* slots, cudaStream_t stream) {
  if (head_dim <= 0 || head_dim % 2 != 0 || kv.head_dim != head_dim || q_cols % head_dim != 0) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  const int hp = head_dim / 2;
  if (hp > 1024) return cudaErrorInvalidValue;
  const unsigned threads = unsigned(hp * std::max(1, 256 / hp));  // a multiple of hp
  // Few rows (decode): the head slots spread over up to ~132 blocks, so that a batch-1 step does not
  // wait on one block; many rows: one block a row.
  const int step = int(threads) / hp, rounds = int((q_cols / head_dim + 2 * kv.kv_heads + step - 1) / step);
  const int split = int(std::clamp<int64_t>(132 / rows, 1, rounds));
  const dim3 grid(static_cast<unsigned>(rows), static_cast<unsigned>(split)), block(threads);
  switch (kv.type) {
    case TensorType::F32: launch_kernel(rope_store_kv_kernel<float>, grid, block, 0, stream, q, q_cols, k, v, head_dim, positions, p, kv, slots); break;
    case TensorType::F16: launch_kernel(rope_store_kv_kernel<__half>, grid, block, 0, stream, q, q_cols, k, v, head_dim, positions, p, kv, slots); break;
    case TensorType::BF16:
      launch_kernel(rope_store_kv_kernel<__nv_bfloat16>, grid, block, 0, stream, q, q_cols, k, v, head_dim, positions, p, kv, slots);
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

namespace {
__global__ void __launch_bounds__(256) rope_table_kernel(const int32_t* positions, int64_t rows, RopeParams p, float2* cs) {
  pdl_wait();
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * p.half) return;
  const int j = int(i % p.half);
  double s, c;
  sincos(double(positions[i / p.half]) * p.inv_freq[j], &s, &c);  // rope_kv_rows_kernel's angle and rounding
  cs[i] = make_float2(static_cast<float>(c * p.magnitude), static_cast<float>(s * p.magnitude));
}
}  // namespace

cudaError_t launch_rope_table(const int32_t* positions, int64_t rows, const RopeParams& p, float2* cs, cudaStream_t stream) {
  if (p.half <= 0 || p.half > kMaxRopePairs || rows < 0) return cudaErrorInvalidValue;
  const int64_t n = rows * p.half;
  if (n == 0) return cudaSuccess;
  launch_kernel(rope_table_kernel, unsigned((n + 255) / 256), 256, 0, stream, positions, rows, p, cs);
  return cudaGetLastError();
}

bool rope_kv_rows_takes(const RopeParams& p, int head_dim, const KvPoolView& kv) {
  return p.half > 0 && p.half % (p.interleaved ? 2 : 4) == 0 && head_dim % 4 == 0 && 2 * p.half <= head_dim &&
         p.half <= kMaxRopePairs && kv.head_dim == head_dim && (kv.type == TensorType::F16 || kv.type == TensorType::BF16) &&
         kv.block_elems % 4 == 0 && kv.k_off % 4 == 0 && kv.v_off % 4 == 0;
}

cudaError_t launch_rope_kv_rows(const float* q, int64_t q_cols, const float* k, const float* v, void* q16, int64_t rows,
                                int head_dim, const int32_t* positions, const RopeParams& p, const KvPoolView& kv,
                                const int64_t* slots, cudaStream_t stream) {
  if (!rope_kv_rows_takes(p, head_dim, kv) || q_cols % head_dim != 0 || q16 == nullptr) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  const dim3 grid(static_cast<unsigned>(rows));
  static_assert(kMaxRopePairs <= 256, "a thread per pair angle (rope_kv_rows_kernel)");
  if (kv.type == TensorType::F16) {
    launch_kernel(rope_kv_rows_kernel<__half>, grid, 256, 0, stream, q, q_cols, k, v, static_cast<__half*>(q16), head_dim, positions, p, kv, slots);
  } else {
    launch_kernel(rope_kv_rows_kernel<__nv_bfloat16>, grid, 256, 0, stream, q, q_cols, k, v, static_cast<__nv_bfloat16*>(q16), head_dim, positions, p, kv, slots);
  }
  return cudaGetLastError();
}

}  // namespace vellum::cuda
