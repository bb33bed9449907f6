// The CUDA backend's kernels. Element-wise ops mirror the CPU backend's expressions (no FMA
// contraction where the CPU rounds twice) so that f32 paths agree to ~1e-6.

#include "backend/cuda/cuda_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>

#include "backend/cuda/dequant.cuh"

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

// Calls f(Decoder{}) for the weight type; `vec` picks the 8-wide loads of plain types.
template <class F>
cudaError_t dispatch(TensorType type, bool vec, F&& f) {
  switch (type) {
    case TensorType::F32: return vec ? f(DecF32x8{}) : f(DecF32x1{});
    case TensorType::F16: return vec ? f(DecF16x8{}) : f(DecF16x1{});
    case TensorType::BF16: return vec ? f(DecBF16x8{}) : f(DecBF16x1{});
    case TensorType::Q4_0: return f(DecQ4_0{});
    case TensorType::Q4_1: return f(DecQ4_1{});
    case TensorType::Q5_0: return f(DecQ5_0{});
    case TensorType::Q5_1: return f(DecQ5_1{});
    case TensorType::Q8_0: return f(DecQ8_0R{});  // repacked at upload (repack_weight)
    case TensorType::Q2_K: return f(DecQ2_K{});
    case TensorType::Q3_K: return f(DecQ3_K{});
    case TensorType::Q4_K: return f(DecQ4_K{});
    case TensorType::Q5_K: return f(DecQ5_K{});
    case TensorType::Q6_K: return f(DecQ6_KR{});  // padded at upload
    default: return cudaErrorInvalidValue;
  }
}

bool vec_ok(const void* p, int64_t k) { return k % 8 == 0 && reinterpret_cast<uintptr_t>(p) % 16 == 0; }

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

// Batch 1 (decode): each warp takes kGemv1Rows output rows and reuses every x chunk it loads for
// all of them. With one weight row per warp, reading f32 x from L1 (4 bytes an element) costs more
// than streaming the quantized weights (0.5-1 byte an element) and the L1 becomes the limit.
constexpr int kGemv1Warps = 4;

template <class D, int kGemv1Rows>
__global__ void __launch_bounds__(kGemv1Warps * 32) gemv1_kernel(const uint8_t* w, size_t row_bytes, int64_t n,
                                                                 int64_t k, const float* x, float* out,
                                                                 const float* bias) {
  const int lane = threadIdx.x & 31;
  const int64_t o0 = (int64_t(blockIdx.x) * kGemv1Warps + threadIdx.x / 32) * kGemv1Rows;
  if (o0 >= n) return;
  const uint8_t* rows[kGemv1Rows];
#pragma unroll
  for (int r = 0; r < kGemv1Rows; ++r) rows[r] = w + min(o0 + r, n - 1) * row_bytes;  // past the end: re-read, drop
  float acc[kGemv1Rows];
#pragma unroll
  for (int r = 0; r < kGemv1Rows; ++r) acc[r] = 0.0f;
  const int64_t chunks = k / D::kChunk;
  for (int64_t c = lane; c < chunks; c += 32) {
    float xv[D::kChunk];
    const float* xp = x + c * D::kChunk;
    if constexpr (D::kChunk % 4 == 0) {
#pragma unroll
      for (int j = 0; j < D::kChunk; j += 4) {
        const float4 v = *reinterpret_cast<const float4*>(xp + j);
        xv[j] = v.x, xv[j + 1] = v.y, xv[j + 2] = v.z, xv[j + 3] = v.w;
      }
    } else {
#pragma unroll
      for (int j = 0; j < D::kChunk; ++j) xv[j] = xp[j];
    }
#pragma unroll
    for (int r = 0; r < kGemv1Rows; ++r) {
      float wv[D::kChunk];
      D::load(rows[r], c, wv);
      float s = 0.0f;
#pragma unroll
      for (int j = 0; j < D::kChunk; ++j) s += wv[j] * xv[j];
      acc[r] += s;
    }
  }
#pragma unroll
  for (int r = 0; r < kGemv1Rows; ++r) {
    const float v = warp_sum(acc[r]);
    if (lane == 0 && o0 + r < n) out[o0 + r] = bias != nullptr ? v + bias[o0 + r] : v;
  }
}

// ---- int8 GEMV (batch 1, Q8_0 / Q4_K / Q6_K), as llama.cpp's MMVQ -------------------------------
// x is quantized once per matmul to int8 per block of 32 (scale amax/127); each weight chunk's
// integers are dotted with it by __dp4a (4 multiply-adds in one instruction) and scaled once per
// 16/32 elements. x traffic drops from 4 to 1 byte an element and the per-element float work
// disappears; the price is x's rounding (relative error ~5e-3, as the CPU backend's Q8 path).
__global__ void quantize_x_q8_kernel(const float* x, int64_t k, int8_t* xq, float2* xs) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= k) return;  // k % 32 == 0: whole warps leave together
  const float v = x[i];
  const float amax = warp_max(fabsf(v));
  const float d = amax / 127.0f;
  const int q = amax == 0.0f ? 0 : __float2int_rn(v / d);
  xq[i] = static_cast<int8_t>(q);
  const int sum = __reduce_add_sync(kFull, q);
  if ((threadIdx.x & 31) == 0) xs[i / 32] = make_float2(d, d * float(sum));
}

template <class D, int kRows>
__global__ void __launch_bounds__(kGemv1Warps * 32) gemv1_i8_kernel(const uint8_t* w, size_t row_bytes, int64_t n,
                                                                    int64_t k, const int8_t* xq, const float2* xs,
                                                                    float* out, const float* bias) {
  const int lane = threadIdx.x & 31;
  const int64_t o0 = (int64_t(blockIdx.x) * kGemv1Warps + threadIdx.x / 32) * kRows;
  if (o0 >= n) return;
  const uint8_t* rows[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) rows[r] = w + min(o0 + r, n - 1) * row_bytes;
  float acc[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = 0.0f;
  const int64_t chunks = k / 32;
  // Two chunks per lane per iteration: all 2·kRows weight loads are issued before any is used
  // (decode is latency bound unless each warp keeps several loads in flight).
  constexpr int U = 2;
  int64_t c0 = lane;
  for (; c0 < chunks; c0 += 32 * U) {
    uint32_t q[U][kRows][8];
    float d0[U][kRows], d1[U][kRows], mn[U][kRows];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t c = min(c0 + 32 * u, chunks - 1);  // past the end: re-read, dropped below
#pragma unroll
      for (int r = 0; r < kRows; ++r) D::load_i8(rows[r], c, q[u][r], d0[u][r], d1[u][r], mn[u][r]);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t c = c0 + 32 * u;
      if (c >= chunks) break;
      uint32_t xw[8];
      load32(reinterpret_cast<const uint8_t*>(xq + c * 32), xw);
      const float2 s = xs[c];
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        int s0 = 0, s1 = 0;
#pragma unroll
        for (int i = 0; i < 4; ++i) s0 = __dp4a(int(q[u][r][i]), int(xw[i]), s0);
#pragma unroll
        for (int i = 4; i < 8; ++i) s1 = __dp4a(int(q[u][r][i]), int(xw[i]), s1);
        acc[r] += s.x * (d0[u][r] * float(s0) + d1[u][r] * float(s1)) - mn[u][r] * s.y;
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const float v = warp_sum(acc[r]);
    if (lane == 0 && o0 + r < n) out[o0 + r] = bias != nullptr ? v + bias[o0 + r] : v;
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

// ---- KV store (attention: attention.cu) --------------------------------------------------------

// KV elements: f32, or 16-bit storage converted on store (round to nearest).
__device__ __forceinline__ void kv_put(float* p, float x) { *p = x; }
__device__ __forceinline__ void kv_put(__half* p, float x) { *p = __float2half_rn(x); }
__device__ __forceinline__ void kv_put(__nv_bfloat16* p, float x) { *p = __float2bfloat16_rn(x); }

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
  return dispatch(type, vec_ok(w, k), [&](auto dec) {
    using D = decltype(dec);
    if (nb == 1 && batch1_kernel) {
      // Fewer rows per warp for short outputs, so that they still spread over every SM.
      const auto* wb = static_cast<const uint8_t*>(w);
      const size_t rb = row_bytes_of<D>(k);
      if (n >= 4096) {  // 2 rows per warp measured slower for Q4_K at 4096 rows, faster for BF16/Q8_0
        gemv1_kernel<D, 4><<<blocks_for(n, 4 * kGemv1Warps), kGemv1Warps * 32, 0, stream>>>(wb, rb, n, k, x, out, bias);
      } else if (n >= 2048) {
        gemv1_kernel<D, 2><<<blocks_for(n, 2 * kGemv1Warps), kGemv1Warps * 32, 0, stream>>>(wb, rb, n, k, x, out, bias);
      } else {
        gemv1_kernel<D, 1><<<blocks_for(n, kGemv1Warps), kGemv1Warps * 32, 0, stream>>>(wb, rb, n, k, x, out, bias);
      }
      return cudaGetLastError();
    }
    gemv_kernel<D><<<blocks_for(n, 8), 256, 0, stream>>>(static_cast<const uint8_t*>(w), row_bytes_of<D>(k), n, k, x,
                                                          ldx, nb, out, ldo, bias);
    return cudaGetLastError();
  });
}

bool int8_gemv_supports(TensorType type, int64_t k) {
  return k % 32 == 0 && (type == TensorType::Q8_0 || type == TensorType::Q4_K || type == TensorType::Q6_K);
}
size_t int8_gemv_scratch_bytes(int64_t k) { return size_t((k + 15) / 16 * 16) + size_t(k / 32) * sizeof(float2); }

cudaError_t launch_gemv_int8(TensorType type, const void* w, int64_t n, int64_t k, const float* x, void* scratch,
                             float* out, const float* bias, cudaStream_t stream) {
  if (!int8_gemv_supports(type, k)) return cudaErrorInvalidValue;
  auto* xq = static_cast<int8_t*>(scratch);
  auto* xs = reinterpret_cast<float2*>(static_cast<uint8_t*>(scratch) + (k + 15) / 16 * 16);
  quantize_x_q8_kernel<<<blocks_for(k, 256), 256, 0, stream>>>(x, k, xq, xs);
  const auto run = [&](auto dec) {
    using D = decltype(dec);
    const auto* wb = static_cast<const uint8_t*>(w);
    const size_t rb = row_bytes_of<D>(k);
    if (n >= 4096) {  // rows per warp by output size, as the f32 batch-1 kernel
      gemv1_i8_kernel<D, 4><<<blocks_for(n, 4 * kGemv1Warps), kGemv1Warps * 32, 0, stream>>>(wb, rb, n, k, xq, xs, out, bias);
    } else if (n >= 2048) {
      gemv1_i8_kernel<D, 2><<<blocks_for(n, 2 * kGemv1Warps), kGemv1Warps * 32, 0, stream>>>(wb, rb, n, k, xq, xs, out, bias);
    } else {
      gemv1_i8_kernel<D, 1><<<blocks_for(n, kGemv1Warps), kGemv1Warps * 32, 0, stream>>>(wb, rb, n, k, xq, xs, out, bias);
    }
    return cudaGetLastError();
  };
  switch (type) {
    case TensorType::Q8_0: return run(DecQ8_0R{});
    case TensorType::Q4_K: return run(DecQ4_K{});
    default: return run(DecQ6_KR{});
  }
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
