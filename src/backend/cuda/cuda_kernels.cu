// The CUDA backend's kernels. Element-wise ops mirror the CPU backend's expressions (no FMA
// contraction where the CPU rounds twice) so that f32 paths agree to ~1e-6.

#include "backend/cuda/cuda_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>

#include "backend/cuda/dequant.cuh"
#include "backend/cuda/gemv_kernels.h"

namespace vellum::cuda {
namespace {

constexpr unsigned kFull = 0xFFFFFFFFu;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(kFull, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(kFull, v, o));
  return v;
}

unsigned blocks_for(int64_t n, int threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

template <class D>
size_t row_bytes_of(int64_t k) {
  return row_stride<D>(k);
}

// Original Q8_0 rows (34-byte blocks) -> DecQ8_0R's layout; one thread per block.
__global__ void repack_q8_0_kernel(const uint8_t* src, int64_t rows, int64_t k, uint8_t* dst) {
  const int64_t blocks = k / 32;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * blocks) return;
  const int64_t r = i / blocks, c = i % blocks;
  const uint8_t* b = src + r * blocks * 34 + c * 34;
  uint8_t* g = dst + r * DecQ8_0R::repacked_row_bytes(k) + (c / 8) * DecQ8_0R::kGroupBytes;
  const int j = int(c % 8);
  g[2 * j] = b[0];
  g[2 * j + 1] = b[1];
  for (int l = 0; l < 32; ++l) g[16 + 32 * j + l] = b[2 + l];
}

// ---- matmul -------------------------------------------------------------------------------------

template <class D>
__global__ void __launch_bounds__(256) gemv_kernel(const uint8_t* w, size_t row_bytes, int64_t n, int64_t k,
                                                   const float* x, int64_t ldx, int nb, float* out, int64_t ldo,
                                                   const float* bias) {
  const int lane = threadIdx.x & 31;
  const int64_t o = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  if (o >= n) return;
  const uint8_t* row = w + o * row_bytes;
  float acc[kMaxGemvRows];
#pragma unroll
  for (int b = 0; b < kMaxGemvRows; ++b) acc[b] = 0.0f;
  const int64_t chunks = k / D::kChunk;
  // U chunks per lane in flight: decode is latency bound unless each warp keeps several loads out.
  constexpr int U = D::kChunk == 8 ? 4 : (D::kChunk == 32 ? 2 : 1);
  const auto accumulate = [&](const float* wv, int64_t c) {
#pragma unroll
    for (int b = 0; b < kMaxGemvRows; ++b) {
      if (b >= nb) break;
      const float* xp = x + b * ldx + c * D::kChunk;
      float s = 0.0f;
      if constexpr (D::kChunk % 4 == 0) {
#pragma unroll
        for (int j = 0; j < D::kChunk; j += 4) {
          const float4 v = *reinterpret_cast<const float4*>(xp + j);
          s += wv[j] * v.x + wv[j + 1] * v.y + wv[j + 2] * v.z + wv[j + 3] * v.w;
        }
      } else {
#pragma unroll
        for (int j = 0; j < D::kChunk; ++j) s += wv[j] * xp[j];
      }
      acc[b] += s;
    }
  };
  int64_t c = lane;
  for (; c + 32 * (U - 1) < chunks; c += 32 * U) {
    float wv[U][D::kChunk];
#pragma unroll
    for (int u = 0; u < U; ++u) D::load(row, c + 32 * u, wv[u]);
#pragma unroll
    for (int u = 0; u < U; ++u) accumulate(wv[u], c + 32 * u);
  }
  for (; c < chunks; c += 32) {
    float wv[D::kChunk];
    D::load(row, c, wv);
    accumulate(wv, c);
  }
#pragma unroll
  for (int b = 0; b < kMaxGemvRows; ++b) {
    if (b >= nb) break;
    const float v = warp_sum(acc[b]);
    if (lane == 0) out[b * ldo + o] = bias != nullptr ? v + bias[o] : v;
  }
}

template <class D>
__global__ void dequant_bf16_kernel(const uint8_t* w, size_t row_bytes, int64_t row0, int64_t rows, int64_t k,
                                    __nv_bfloat16* dst) {
  const int64_t chunks = k / D::kChunk;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * chunks) return;
  const int64_t r = i / chunks, c = i % chunks;
  float y[D::kChunk];
  D::load(w + (row0 + r) * row_bytes, c, y);
  __nv_bfloat16* d = dst + r * k + c * D::kChunk;
  if constexpr (D::kChunk % 8 == 0) {  // 16-byte stores: 8 bf16 at a time (k is a multiple of 8)
#pragma unroll
    for (int j = 0; j < D::kChunk; j += 8) {
      uint4 v;
      uint32_t* u = reinterpret_cast<uint32_t*>(&v);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const __nv_bfloat162 pair = __floats2bfloat162_rn(y[j + 2 * i], y[j + 2 * i + 1]);
        u[i] = *reinterpret_cast<const uint32_t*>(&pair);
      }
      *reinterpret_cast<uint4*>(d + j) = v;
    }
  } else {
#pragma unroll
    for (int j = 0; j < D::kChunk; ++j) d[j] = __float2bfloat16_rn(y[j]);
  }
}

__global__ void f32_to_bf16_kernel(const float* src, __nv_bfloat16* dst, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = __float2bfloat16_rn(src[i]);
}

__global__ void add_bias_kernel(float* out, int64_t rows, int64_t cols, int64_t ldo, const float* bias) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < rows * cols) out[(i / cols) * ldo + i % cols] += bias[i % cols];
}

// ---- embedding, norms, rope ---------------------------------------------------------------------

template <class D>
__global__ void embed_kernel(const uint8_t* table, size_t row_bytes, int64_t cols, const int32_t* tokens, int64_t n,
                             float* out, int64_t ldo) {
  const int64_t chunks = cols / D::kChunk;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n * chunks) return;
  const int64_t t = i / chunks, c = i % chunks;
  float y[D::kChunk];
  D::load(table + int64_t(tokens[t]) * row_bytes, c, y);
#pragma unroll
  for (int j = 0; j < D::kChunk; ++j) out[t * ldo + c * D::kChunk + j] = y[j];
}

// One warp per (row, group).
__global__ void rms_norm_kernel(const float* x, const float* gain, int64_t rows, int64_t cols, int64_t group, float eps,
                                float* out) {
  const int64_t groups = cols / group;
  const int64_t gi = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  if (gi >= rows * groups) return;
  const int lane = threadIdx.x & 31;
  const int64_t base = (gi / groups) * cols + (gi % groups) * group;
  float ss = 0.0f;
  for (int64_t i = lane; i < group; i += 32) ss += x[base + i] * x[base + i];
  ss = warp_sum(ss);
  const float scale = 1.0f / sqrtf(ss / static_cast<float>(group) + eps);
  for (int64_t i = lane; i < group; i += 32) out[base + i] = mul(mul(x[base + i], scale), gain[i]);
}

// One 256-thread block per (row, group), for whole-row norms: a single warp walking 4096 floats is
// latency bound (tens of microseconds per call at batch 1).
__global__ void __launch_bounds__(256) rms_norm_block_kernel(const float* x, const float* gain, int64_t cols,
                                                             int64_t group, float eps, float* out) {
  __shared__ float partial[8];
  const int64_t groups = cols / group;
  const int64_t base = (int64_t(blockIdx.x) / groups) * cols + (int64_t(blockIdx.x) % groups) * group;
  float ss = 0.0f;
  for (int64_t i = threadIdx.x; i < group; i += 256) ss += x[base + i] * x[base + i];
  ss = warp_sum(ss);
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x / 32] = ss;
  __syncthreads();
  float total = 0.0f;
#pragma unroll
  for (int w = 0; w < 8; ++w) total += partial[w];
  const float scale = 1.0f / sqrtf(total / static_cast<float>(group) + eps);
  for (int64_t i = threadIdx.x; i < group; i += 256) out[base + i] = mul(mul(x[base + i], scale), gain[i]);
}

__global__ void rope_kernel(float* x, int64_t cols, int head_dim, const int32_t* positions, RopeParams p) {
  const int64_t r = blockIdx.y;
  const int heads = static_cast<int>(cols / head_dim);
  const int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= int64_t(heads) * p.half) return;
  const int h = static_cast<int>(idx / p.half), i = static_cast<int>(idx % p.half);
  double s, c;
  sincos(double(positions[r]) * p.inv_freq[i], &s, &c);
  const float cf = static_cast<float>(c * p.magnitude), sf = static_cast<float>(s * p.magnitude);
  float* v = x + r * cols + int64_t(h) * head_dim;
  const int a = p.interleaved ? 2 * i : i, b = p.interleaved ? 2 * i + 1 : i + p.half;
  const float x0 = v[a], x1 = v[b];
  v[a] = sub(mul(x0, cf), mul(x1, sf));
  v[b] = add(mul(x0, sf), mul(x1, cf));
}

// ---- KV and attention ---------------------------------------------------------------------------

// KV elements: f32, or 16-bit storage converted on store (round to nearest) and widened on read.
__device__ __forceinline__ void kv_put(float* p, float x) { *p = x; }
__device__ __forceinline__ void kv_put(__half* p, float x) { *p = __float2half_rn(x); }
__device__ __forceinline__ void kv_put(__nv_bfloat16* p, float x) { *p = __float2bfloat16_rn(x); }
__device__ __forceinline__ float kv_get(const float* p) { return *p; }
__device__ __forceinline__ float kv_get(const __half* p) { return __half2float(*p); }
__device__ __forceinline__ float kv_get(const __nv_bfloat16* p) { return __bfloat162float(*p); }
// Four consecutive elements (16-byte f32 or 8-byte 16-bit loads; the caller guarantees alignment).
__device__ __forceinline__ float4 kv_get4(const float* p) { return *reinterpret_cast<const float4*>(p); }
__device__ __forceinline__ float4 kv_get4(const __half* p) {
  const uint2 u = *reinterpret_cast<const uint2*>(p);
  const float2 a = __half22float2(*reinterpret_cast<const __half2*>(&u.x));
  const float2 b = __half22float2(*reinterpret_cast<const __half2*>(&u.y));
  return make_float4(a.x, a.y, b.x, b.y);
}
__device__ __forceinline__ float4 kv_get4(const __nv_bfloat16* p) {
  const uint2 u = *reinterpret_cast<const uint2*>(p);
  const float2 a = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&u.x));
  const float2 b = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&u.y));
  return make_float4(a.x, a.y, b.x, b.y);
}

template <typename T>
__global__ void store_kv_kernel(KvPoolView kv, const float* k, const float* v, const int64_t* slots) {
  const int64_t row = int64_t(kv.kv_heads) * kv.head_dim;
  const int64_t t = blockIdx.y;
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= row) return;
  const int64_t slot = slots[t];
  T* base = static_cast<T*>(kv.pool) + (slot / kv.block_size) * kv.block_elems + (slot % kv.block_size) * row + e;
  kv_put(base + kv.k_off, k[t * row + e]);
  kv_put(base + kv.v_off, v[t * row + e]);
}

constexpr int kAttnThreads = 128, kAttnWarps = kAttnThreads / 32, kAttnTile = 32;
constexpr int kHeadsPerWarp = kMaxAttnGroup / kAttnWarps;
constexpr int kDimsPerLane = kMaxAttnHeadDim / 32;

// One thread block per (context span, KV head, query row). Warp w owns the group's heads w, w + 4...;
// lane p scores tile position p, then every lane accumulates its head dims d = lane + 32i.
template <typename T>
__global__ void __launch_bounds__(kAttnThreads) attn_split_kernel(AttnParams p, int64_t row0) {
  extern __shared__ float smem[];
  const int64_t rl = blockIdx.z, r = row0 + rl;
  const int kvh = blockIdx.y, sp = blockIdx.x;
  const int ctx = p.row_ctx[r];
  const int p0 = sp * kAttnSplit;
  if (p0 >= ctx) return;
  const int p1 = min(ctx, p0 + kAttnSplit);
  const int hd = p.kv.head_dim, G = p.heads / p.kv.kv_heads, ld = hd + 1, bs = p.kv.block_size;
  float* qs = smem;
  float* ks = qs + G * hd;
  float* vs = ks + kAttnTile * ld;
  for (int i = threadIdx.x; i < G * hd; i += kAttnThreads) qs[i] = p.q[r * p.ldq + int64_t(kvh) * G * hd + i];
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
  float m[kHeadsPerWarp], l[kHeadsPerWarp], acc[kHeadsPerWarp][kDimsPerLane];
#pragma unroll
  for (int j = 0; j < kHeadsPerWarp; ++j) {
    m[j] = -INFINITY, l[j] = 0.0f;
#pragma unroll
    for (int dd = 0; dd < kDimsPerLane; ++dd) acc[j][dd] = 0.0f;
  }
  const int32_t* table = p.tables + p.row_table[r];
  const int64_t row_floats = int64_t(p.kv.kv_heads) * hd;
  const T* pool = static_cast<const T*>(p.kv.pool);
  for (int t0 = p0; t0 < p1; t0 += kAttnTile) {
    const int n = min(kAttnTile, p1 - t0);
    __syncthreads();
    if (hd % 4 == 0) {  // vector loads (every offset in the pool is then a multiple of 4 elements)
      const int hd4 = hd / 4;
      for (int i = threadIdx.x; i < n * hd4; i += kAttnThreads) {
        const int pp = i / hd4, d = (i % hd4) * 4, pos = t0 + pp;
        const T* base = pool + int64_t(table[pos / bs]) * p.kv.block_elems + int64_t(pos % bs) * row_floats +
                        int64_t(kvh) * hd + d;
        const float4 kq = kv_get4(base + p.kv.k_off);
        const float4 vq = kv_get4(base + p.kv.v_off);
        float* kd = ks + pp * ld + d;
        float* vd = vs + pp * ld + d;
        kd[0] = kq.x, kd[1] = kq.y, kd[2] = kq.z, kd[3] = kq.w;
        vd[0] = vq.x, vd[1] = vq.y, vd[2] = vq.z, vd[3] = vq.w;
      }
    } else {
      for (int i = threadIdx.x; i < n * hd; i += kAttnThreads) {
        const int pp = i / hd, d = i % hd, pos = t0 + pp;
        const T* base = pool + int64_t(table[pos / bs]) * p.kv.block_elems + int64_t(pos % bs) * row_floats +
                        int64_t(kvh) * hd + d;
        ks[pp * ld + d] = kv_get(base + p.kv.k_off);
        vs[pp * ld + d] = kv_get(base + p.kv.v_off);
      }
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kHeadsPerWarp; ++j) {
      const int g = warp + kAttnWarps * j;
      if (g >= G) break;  // warp-uniform
      float s = -INFINITY;
      if (lane < n) {
        float dot = 0.0f;
        for (int d = 0; d < hd; ++d) dot += qs[g * hd + d] * ks[lane * ld + d];
        s = dot * p.scale;
      }
      const float m_new = fmaxf(m[j], warp_max(s));
      const float alpha = expf(m[j] - m_new);
      const float e = lane < n ? expf(s - m_new) : 0.0f;
      l[j] = l[j] * alpha + warp_sum(e);
#pragma unroll
      for (int dd = 0; dd < kDimsPerLane; ++dd) acc[j][dd] *= alpha;
      for (int pp = 0; pp < n; ++pp) {
        const float w = __shfl_sync(kFull, e, pp);
#pragma unroll
        for (int dd = 0; dd < kDimsPerLane; ++dd) {
          const int d = lane + 32 * dd;
          if (d < hd) acc[j][dd] += w * vs[pp * ld + d];
        }
      }
      m[j] = m_new;
    }
  }
#pragma unroll
  for (int j = 0; j < kHeadsPerWarp; ++j) {
    const int g = warp + kAttnWarps * j;
    if (g >= G) break;
    const int64_t idx = (rl * p.heads + int64_t(kvh) * G + g) * p.max_splits + sp;
    if (lane == 0) p.part_ml[2 * idx] = m[j], p.part_ml[2 * idx + 1] = l[j];
#pragma unroll
    for (int dd = 0; dd < kDimsPerLane; ++dd) {
      const int d = lane + 32 * dd;
      if (d < hd) p.part_acc[idx * hd + d] = acc[j][dd];
    }
  }
}

// Merges a (row, head)'s spans in span order.
__global__ void attn_combine_kernel(AttnParams p, int64_t row0) {
  const int64_t rl = blockIdx.y, r = row0 + rl;
  const int h = blockIdx.x, hd = p.kv.head_dim;
  const int spans = (p.row_ctx[r] + kAttnSplit - 1) / kAttnSplit;
  const int64_t base = (rl * p.heads + h) * p.max_splits;
  float mx = -INFINITY;
  for (int s = 0; s < spans; ++s) mx = fmaxf(mx, p.part_ml[2 * (base + s)]);
  float sum = 0.0f;
  for (int s = 0; s < spans; ++s) sum += p.part_ml[2 * (base + s) + 1] * expf(p.part_ml[2 * (base + s)] - mx);
  for (int d = threadIdx.x; d < hd; d += blockDim.x) {
    float o = 0.0f;
    for (int s = 0; s < spans; ++s) o += p.part_acc[(base + s) * hd + d] * expf(p.part_ml[2 * (base + s)] - mx);
    p.out[r * p.ldo + int64_t(h) * hd + d] = o / sum;
  }
}

// ---- element-wise -------------------------------------------------------------------------------

__global__ void swiglu_kernel(const float* gate, const float* up, float* out, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float g = gate[i];
  out[i] = mul(g / (1.0f + expf(-g)), up[i]);
}

__global__ void add_kernel(const float* a, const float* b, float* out, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}

__global__ void gather_rows_kernel(const float* x, int64_t cols, const int32_t* rows, float* out) {
  const int64_t j = blockIdx.y;
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c < cols) out[j * cols + c] = x[int64_t(rows[j]) * cols + c];
}

__global__ void fill_kernel(float* p, int64_t n, float value) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) p[i] = value;
}

// Q6_K blocks (210 bytes, rows back to back) -> 224-byte slots; one thread per block.
__global__ void pad_q6_k_kernel(const uint8_t* src, int64_t blocks, uint8_t* dst) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= blocks) return;
  const uint8_t* b = src + i * DecQ6_KR::kBlockBytes;
  uint8_t* o = dst + i * DecQ6_KR::kPaddedBytes;
  for (int j = 0; j < DecQ6_KR::kBlockBytes; ++j) o[j] = b[j];
  for (int j = DecQ6_KR::kBlockBytes; j < DecQ6_KR::kPaddedBytes; ++j) o[j] = 0;
}

}  // namespace

bool kernel_supports(TensorType type) {
  return dispatch(type, false, [](auto) { return cudaSuccess; }) == cudaSuccess;
}

cudaError_t launch_gemv(TensorType type, const void* w, int64_t n, int64_t k, const float* x, int64_t ldx, int nb,
                        float* out, int64_t ldo, const float* bias, cudaStream_t stream, bool batch1_kernel) {
  if (nb < 1 || nb > kMaxGemvRows) return cudaErrorInvalidValue;
  if (nb == 1 && batch1_kernel) {
    GemvSegs segs;
    segs.add(w, n, out, bias);
    return launch_gemv1(type, segs, k, x, stream);
  }
  return dispatch(type, vec_ok(w, k), [&](auto dec) {
    using D = decltype(dec);
    gemv_kernel<D><<<blocks_for(n, 8), 256, 0, stream>>>(static_cast<const uint8_t*>(w), row_bytes_of<D>(k), n, k, x,
                                                          ldx, nb, out, ldo, bias);
    return cudaGetLastError();
  });
}

cudaError_t launch_dequant_bf16(TensorType type, const void* w, int64_t row0, int64_t rows, int64_t k, void* dst,
                                cudaStream_t stream) {
  return dispatch(type, vec_ok(w, k), [&](auto dec) {
    using D = decltype(dec);
    const int64_t total = rows * (k / D::kChunk);
    dequant_bf16_kernel<D><<<blocks_for(total, 256), 256, 0, stream>>>(
        static_cast<const uint8_t*>(w), row_bytes_of<D>(k), row0, rows, k, static_cast<__nv_bfloat16*>(dst));
    return cudaGetLastError();
  });
}

size_t device_row_bytes(TensorType type, int64_t k) {
  size_t out = 0;
  (void)dispatch(type, k % 8 == 0, [&](auto dec) {  // the 8-wide decoders only for whole chunks
    out = row_bytes_of<decltype(dec)>(k);
    return cudaSuccess;
  });
  return out;
}

cudaError_t launch_repack(TensorType type, const void* src, int64_t rows, int64_t k, void* dst, cudaStream_t stream) {
  if (type == TensorType::Q6_K) {
    const int64_t total = rows * (k / 256);
    pad_q6_k_kernel<<<blocks_for(total, 256), 256, 0, stream>>>(static_cast<const uint8_t*>(src), total,
                                                                 static_cast<uint8_t*>(dst));
    return cudaGetLastError();
  }
  if (type != TensorType::Q8_0) return cudaErrorInvalidValue;
  const int64_t total = rows * (k / 32);
  repack_q8_0_kernel<<<blocks_for(total, 256), 256, 0, stream>>>(static_cast<const uint8_t*>(src), rows, k,
                                                                  static_cast<uint8_t*>(dst));
  return cudaGetLastError();
}

cudaError_t launch_f32_to_bf16(const float* src, void* dst, int64_t n, cudaStream_t stream) {
  f32_to_bf16_kernel<<<blocks_for(n, 256), 256, 0, stream>>>(src, static_cast<__nv_bfloat16*>(dst), n);
  return cudaGetLastError();
}

cudaError_t launch_add_bias(float* out, int64_t rows, int64_t cols, int64_t ldo, const float* bias, cudaStream_t stream) {
  add_bias_kernel<<<blocks_for(rows * cols, 256), 256, 0, stream>>>(out, rows, cols, ldo, bias);
  return cudaGetLastError();
}

cudaError_t launch_embed(TensorType type, const void* table, int64_t vocab, int64_t cols, const int32_t* tokens,
                         int64_t n, float* out, int64_t ldo, cudaStream_t stream) {
  (void)vocab;  // token ids are checked by the model before the step
  return dispatch(type, vec_ok(table, cols), [&](auto dec) {
    using D = decltype(dec);
    const int64_t total = n * (cols / D::kChunk);
    embed_kernel<D><<<blocks_for(total, 256), 256, 0, stream>>>(static_cast<const uint8_t*>(table), row_bytes_of<D>(cols),
                                                                 cols, tokens, n, out, ldo);
    return cudaGetLastError();
  });
}

cudaError_t launch_rms_norm(const float* x, const float* gain, int64_t rows, int64_t cols, int64_t group, float eps,
                            float* out, cudaStream_t stream) {
  if (group <= 0 || cols % group != 0) return cudaErrorInvalidValue;
  if (group >= 1024) {
    rms_norm_block_kernel<<<static_cast<unsigned>(rows * (cols / group)), 256, 0, stream>>>(x, gain, cols, group, eps, out);
  } else {
    rms_norm_kernel<<<blocks_for(rows * (cols / group), 8), 256, 0, stream>>>(x, gain, rows, cols, group, eps, out);
  }
  return cudaGetLastError();
}

cudaError_t launch_rope(float* x, int64_t rows, int64_t cols, int head_dim, const int32_t* positions,
                        const RopeParams& p, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  const int64_t pairs = (cols / head_dim) * p.half;
  rope_kernel<<<dim3(blocks_for(pairs, 128), static_cast<unsigned>(rows)), 128, 0, stream>>>(x, cols, head_dim,
                                                                                           positions, p);
  return cudaGetLastError();
}

cudaError_t launch_store_kv(const KvPoolView& kv, const float* k, const float* v, const int64_t* slots, int64_t n,
                            cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const int64_t row = int64_t(kv.kv_heads) * kv.head_dim;
  const dim3 grid(blocks_for(row, 256), static_cast<unsigned>(n));
  switch (kv.type) {
    case TensorType::F32: store_kv_kernel<float><<<grid, 256, 0, stream>>>(kv, k, v, slots); break;
    case TensorType::F16: store_kv_kernel<__half><<<grid, 256, 0, stream>>>(kv, k, v, slots); break;
    case TensorType::BF16: store_kv_kernel<__nv_bfloat16><<<grid, 256, 0, stream>>>(kv, k, v, slots); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t launch_split(const AttnParams& p, int64_t row0, dim3 grid, size_t smem, size_t max_smem, cudaStream_t stream) {
  static bool raised = false;
  if (!raised) {
    const cudaError_t rc =
        cudaFuncSetAttribute(attn_split_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(max_smem));
    if (rc != cudaSuccess) return rc;
    raised = true;
  }
  attn_split_kernel<T><<<grid, kAttnThreads, smem, stream>>>(p, row0);
  return cudaGetLastError();
}

cudaError_t launch_attention(const AttnParams& p, int64_t row0, int64_t rows, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  const int G = p.heads / p.kv.kv_heads, hd = p.kv.head_dim;
  if (G > kMaxAttnGroup || hd > kMaxAttnHeadDim) return cudaErrorInvalidValue;
  const size_t smem = sizeof(float) * (size_t(G) * hd + 2 * size_t(kAttnTile) * (hd + 1));
  // The largest shape needs more than the default 48 KiB (once per instantiation).
  const size_t max_smem = sizeof(float) * (size_t(kMaxAttnGroup) * kMaxAttnHeadDim + 2 * size_t(kAttnTile) * (kMaxAttnHeadDim + 1));
  const dim3 grid(p.max_splits, p.kv.kv_heads, static_cast<unsigned>(rows));
  cudaError_t rc = cudaErrorInvalidValue;
  switch (p.kv.type) {
    case TensorType::F32: rc = launch_split<float>(p, row0, grid, smem, max_smem, stream); break;
    case TensorType::F16: rc = launch_split<__half>(p, row0, grid, smem, max_smem, stream); break;
    case TensorType::BF16: rc = launch_split<__nv_bfloat16>(p, row0, grid, smem, max_smem, stream); break;
    default: break;
  }
  if (rc != cudaSuccess) return rc;
  attn_combine_kernel<<<dim3(p.heads, static_cast<unsigned>(rows)), 128, 0, stream>>>(p, row0);
  return cudaGetLastError();
}

cudaError_t launch_swiglu(const float* gate, const float* up, float* out, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  swiglu_kernel<<<blocks_for(n, 256), 256, 0, stream>>>(gate, up, out, n);
  return cudaGetLastError();
}

cudaError_t launch_add(const float* a, const float* b, float* out, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  add_kernel<<<blocks_for(n, 256), 256, 0, stream>>>(a, b, out, n);
  return cudaGetLastError();
}

cudaError_t launch_gather_rows(const float* x, int64_t cols, const int32_t* rows, int64_t n, float* out,
                               cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  gather_rows_kernel<<<dim3(blocks_for(cols, 256), static_cast<unsigned>(n)), 256, 0, stream>>>(x, cols, rows, out);
  return cudaGetLastError();
}

cudaError_t launch_fill(float* p, int64_t n, float value, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  fill_kernel<<<blocks_for(n, 256), 256, 0, stream>>>(p, n, value);
  return cudaGetLastError();
}

}  // namespace vellum::cuda
