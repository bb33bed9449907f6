// The CUDA backend's kernels. Element-wise ops mirror the CPU backend's expressions (no FMA
// contraction where the CPU rounds twice) so that f32 paths agree to ~1e-6.

#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/warp_reduce.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>

#include "backend/cuda/dequant.cuh"
#include "backend/cuda/gemv_kernels.h"
#include "backend/cuda/launch.h"
#include "backend/cuda/pack16.cuh"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/swiglu8.cuh"

namespace vellum::cuda {
namespace {



unsigned blocks_for(int64_t n, int threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

template <class D>
size_t row_bytes_of(int64_t k) {
  return row_stride<D>(k);
}

// Original Q8_0 rows (34-byte blocks) -> DecQ8_0R's layout; one thread per block.
__global__ void repack_q8_0_kernel(const uint8_t* src, int64_t rows, int64_t k, uint8_t* dst) {
  pdl_wait();
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
  pdl_wait();
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

// A weight tile's rows dequantized to BF16 for cuBLAS (round 8). The tile is one contiguous
// [rows x k] array, so thread i of the launch decodes chunk i of it (32-bit indices: a tile holds
// < 2^31 chunks). Chunks of 16+ elements are staged through shared memory, so that each store
// instruction of the block writes one contiguous 4 KB run instead of 16 bytes at a 64-byte
// stride per lane.
constexpr int kDequantThreads = 256;
template <class D>
__global__ void __launch_bounds__(kDequantThreads) dequant_bf16_kernel(const uint8_t* w, size_t row_bytes, int64_t row0,
                                                                       uint32_t chunks_per_row, uint32_t total,
                                                                       __nv_bfloat16* dst) {
  constexpr bool kStage = D::kChunk % 8 == 0 && D::kChunk > 8;
  constexpr int kVecs = D::kChunk / 8;  // 16-byte pieces a chunk (staged kernels)
  __shared__ uint4 stage[kStage ? kDequantThreads * kVecs : 1];
  pdl_wait();
  const uint32_t first = blockIdx.x * kDequantThreads, i = first + threadIdx.x;
  float y[D::kChunk] = {};
  if (i < total) {
    const uint32_t r = i / chunks_per_row, c = i - r * chunks_per_row;
    D::load(w + (row0 + r) * row_bytes, c, y);
  }
  if constexpr (kStage) {
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
      uint4 v;
      uint32_t* u = reinterpret_cast<uint32_t*>(&v);
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const __nv_bfloat162 pair = __floats2bfloat162_rn(y[8 * j + 2 * q], y[8 * j + 2 * q + 1]);
        u[q] = *reinterpret_cast<const uint32_t*>(&pair);
      }
      stage[threadIdx.x * kVecs + j] = v;
    }
    __syncthreads();
    const uint32_t vecs = min(total - first, uint32_t(kDequantThreads)) * kVecs;
    uint4* out = reinterpret_cast<uint4*>(dst + size_t(first) * D::kChunk);
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
      const uint32_t v = j * kDequantThreads + threadIdx.x;
      if (v < vecs) out[v] = stage[v];
    }
  } else {
    if (i >= total) return;
    __nv_bfloat16* d = dst + size_t(i) * D::kChunk;
    if constexpr (D::kChunk % 8 == 0) {  // 16-byte stores: 8 bf16 at a time (k is a multiple of 8)
#pragma unroll
      for (int j = 0; j < D::kChunk; j += 8) {
        uint4 v;
        uint32_t* u = reinterpret_cast<uint32_t*>(&v);
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const __nv_bfloat162 pair = __floats2bfloat162_rn(y[j + 2 * q], y[j + 2 * q + 1]);
          u[q] = *reinterpret_cast<const uint32_t*>(&pair);
        }
        *reinterpret_cast<uint4*>(d + j) = v;
      }
    } else {
#pragma unroll
      for (int j = 0; j < D::kChunk; ++j) d[j] = __float2bfloat16_rn(y[j]);
    }
  }
}

// f32 → bf16 or f16, round to nearest even (pairs: pack2, pack16.cuh).
__device__ __forceinline__ void to16(float v, __nv_bfloat16* d) { *d = __float2bfloat16_rn(v); }
__device__ __forceinline__ void to16(float v, __half* d) { *d = __float2half_rn(v); }

template <typename T>
__global__ void f32_to_16_kernel(const float* src, T* dst, int64_t n) {
  pdl_wait();
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) to16(src[i], dst + i);
}

// 4 elements a thread (16-byte loads, 8-byte stores); n % 4 == 0, both pointers aligned.
template <typename T>
__global__ void f32_to_16_x4_kernel(const float4* src, uint2* dst, int64_t n4) {
  pdl_wait();
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n4) return;
  const float4 v = src[i];
  dst[i] = make_uint2(pack2(v.x, v.y, T{}), pack2(v.z, v.w, T{}));
}

// bf16 back to f32 (exact): the f32 rows of a fused SwiGLU, made on demand from the bf16 rows the
// down projection reads (cuda_backend.cpp, Impl::materialize).
__global__ void bf16_to_f32_kernel(const __nv_bfloat16* src, float* dst, int64_t n) {
  pdl_wait();
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = __bfloat162float(src[i]);
}

__global__ void add_bias_kernel(float* out, int64_t rows, int64_t cols, int64_t ldo, const float* bias) {
  pdl_wait();
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < rows * cols) out[(i / cols) * ldo + i % cols] += bias[i % cols];
}

// ---- embedding, norms, rope ---------------------------------------------------------------------

template <class D>
__global__ void embed_kernel(const uint8_t* table, size_t row_bytes, int64_t cols, const int32_t* tokens, int64_t n,
                             float* out, int64_t ldo) {
  pdl_wait();
  const int64_t chunks = cols / D::kChunk;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n * chunks) return;
  const int64_t t = i / chunks, c = i % chunks;
  float y[D::kChunk];
  D::load(table + int64_t(tokens[t]) * row_bytes, c, y);
  float* o = out + t * ldo + c * D::kChunk;
  if constexpr (D::kChunk % 4 == 0) {
    // 16-byte stores where aligned: a Q4_K row of 32-float chunks took 42 us for 512 rows of 4 096
    // with one 4-byte store at a time (round 34, ncu).
    if ((reinterpret_cast<uintptr_t>(o) & 15) == 0) {
#pragma unroll
      for (int j = 0; j < D::kChunk; j += 4) *reinterpret_cast<float4*>(o + j) = make_float4(y[j], y[j + 1], y[j + 2], y[j + 3]);
      return;
    }
  }
#pragma unroll
  for (int j = 0; j < D::kChunk; ++j) o[j] = y[j];
}

// One warp per (row, group).
__global__ void rms_norm_kernel(const float* x, const float* gain, int64_t rows, int64_t cols, int64_t group, float eps,
                                float* out) {
  pdl_wait();
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
  pdl_wait();
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
  pdl_wait();
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
  pdl_wait();
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
  pdl_wait();
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float g = gate[i];
  out[i] = mul(g / (1.0f + expf(-g)), up[i]);
}

// swiglu_kernel's expression on 16-bit gate/up (cuBLAS outputs: bf16, or f16 for F16 weights), 8
// elements a thread (16-byte loads; swiglu8.cuh): f32 out and its rounding to T (the next GEMM's
// input), each when not null. n % 8 == 0.
template <typename T>
__global__ void swiglu16_kernel(const uint4* gate, const uint4* up, float4* out, uint4* out16, int64_t n8) {
  pdl_wait();
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n8) return;
  float y[8];
  swiglu8<T>(gate[i], up[i], y);
  if (out != nullptr) {
    out[2 * i] = make_float4(y[0], y[1], y[2], y[3]);
    out[2 * i + 1] = make_float4(y[4], y[5], y[6], y[7]);
  }
  if (out16 != nullptr) out16[i] = make_uint4(pack2(y[0], y[1], T{}), pack2(y[2], y[3], T{}), pack2(y[4], y[5], T{}), pack2(y[6], y[7], T{}));
}

__global__ void add_kernel(const float* a, const float* b, float* out, int64_t n) {
  pdl_wait();
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}

__global__ void gather_rows_kernel(const float* x, int64_t cols, const int32_t* rows, float* out) {
  pdl_wait();
  const int64_t j = blockIdx.y;
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c < cols) out[j * cols + c] = x[int64_t(rows[j]) * cols + c];
}

__global__ void fill_kernel(float* p, int64_t n, float value) {
  pdl_wait();
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) p[i] = value;
}

// GGUF Q6_K rows (210-byte super-blocks: ql[128], qh[64], int8 scales[16], f16 d) -> DecQ6_KR's
// groups; one thread per super-block. GGUF element e = 128h + 32kq + l: low 4 bits in ql[64h + 32(kq
// & 1) + l] (kq < 2: low nibble), high 2 bits at bit 2kq of qh[32h + l].
__global__ void repack_q6_k_kernel(const uint8_t* src, int64_t rows, int64_t k, uint8_t* dst) {
  pdl_wait();
  const int64_t nb = k / 256, i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * nb) return;
  const int64_t r = i / nb, b = i % nb;
  const int b4 = int(b % 4);
  const uint8_t* s = src + i * DecQ6_KR::kBlockBytes;
  uint8_t* g = dst + r * DecQ6_KR::repacked_row_bytes(k) + (b / 4) * DecQ6_KR::kGroupBytes;
  const auto lo4 = [&](int e) {
    const int h = e / 128, kq = (e % 128) / 32, l = e % 32;
    return (s[64 * h + 32 * (kq & 1) + l] >> (kq < 2 ? 0 : 4)) & 0xF;
  };
  const auto hi2 = [&](int e) { return (s[128 + 32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3; };
  for (int sb = 0; sb < 8; ++sb) {
    const int t = 8 * b4 + sb, e0 = 32 * sb;
    for (int j = 0; j < 16; ++j) g[16 * t + j] = uint8_t(lo4(e0 + j) | (lo4(e0 + 16 + j) << 4));
    for (int half = 0; half < 2; ++half) {
      for (int byte = 0; byte < 4; ++byte) {
        int v = 0;
        for (int w = 0; w < 4; ++w) v |= hi2(e0 + 16 * half + 4 * w + byte) << (2 * w);
        g[DecQ6_KR::kQhOff + 8 * t + 4 * half + byte] = uint8_t(v);
      }
    }
  }
  for (int j = 0; j < 16; ++j) g[DecQ6_KR::kScOff + 16 * b4 + j] = s[192 + j];
  g[DecQ6_KR::kDOff + 2 * b4] = s[208];
  g[DecQ6_KR::kDOff + 2 * b4 + 1] = s[209];
}

// GGUF Q4_K rows (144-byte super-blocks) -> DecQ4_KR's groups; one thread per super-block. GGUF
// keeps element 64cc + j in the low nibble of quant byte 32cc + j and 64cc + 32 + j in the high one.
__global__ void repack_q4_k_kernel(const uint8_t* src, int64_t rows, int64_t k, uint8_t* dst) {
  pdl_wait();
  const int64_t nb = k / 256, i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * nb) return;
  const int64_t r = i / nb, b = i % nb;
  const uint8_t* s = src + i * DecQ4_KR::kBlockBytes;
  uint8_t* g = dst + r * DecQ4_KR::repacked_row_bytes(k) + (b / 4) * DecQ4_KR::kGroupBytes;
  for (int j = 0; j < 16; ++j) g[16 * (b % 4) + j] = s[j];
  const auto nib = [&](int e) { return (s[16 + 32 * (e / 64) + e % 32] >> (e % 64 < 32 ? 0 : 4)) & 0xF; };
  uint8_t* q = g + DecQ4_KR::kQuantOff + 128 * (b % 4);
  for (int sb = 0; sb < 8; ++sb) {
    for (int j = 0; j < 16; ++j) q[16 * sb + j] = uint8_t(nib(32 * sb + j) | (nib(32 * sb + 16 + j) << 4));
  }
}

}  // namespace

bool kernel_supports(TensorType type) {
  return dispatch(type, false, [](auto) { return cudaSuccess; }) == cudaSuccess;
}

cudaError_t launch_gemv(TensorType type, const void* w, int64_t n, int64_t k, const float* x, int64_t ldx, int nb,
                        float* out, int64_t ldo, const float* bias, cudaStream_t stream) {
  if (nb < 1 || nb > kMaxGemvRows) return cudaErrorInvalidValue;
  if (nb == 1) {
    GemvSegs segs;
    segs.add(w, n, out, bias);
    return launch_gemv1(type, segs, k, x, stream);
  }
  return dispatch(type, vec_ok(w, k), [&](auto dec) {
    using D = decltype(dec);
    launch_kernel(gemv_kernel<D>, blocks_for(n, 8), 256, 0, stream, static_cast<const uint8_t*>(w), row_bytes_of<D>(k), n, k, x,
                                                          ldx, nb, out, ldo, bias);
    return cudaGetLastError();
  });
}

cudaError_t launch_dequant_bf16(TensorType type, const void* w, int64_t row0, int64_t rows, int64_t k, void* dst,
                                cudaStream_t stream) {
  return dispatch(type, vec_ok(w, k), [&](auto dec) {
    using D = decltype(dec);
    const int64_t chunks = k / D::kChunk, total = rows * chunks;
    if (total >= (int64_t(1) << 31)) return cudaErrorInvalidValue;  // tiles are far smaller
    launch_kernel(dequant_bf16_kernel<D>, blocks_for(total, kDequantThreads), kDequantThreads, 0, stream,
        static_cast<const uint8_t*>(w), row_bytes_of<D>(k), row0, uint32_t(chunks), uint32_t(total),
        static_cast<__nv_bfloat16*>(dst));
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
  if (type == TensorType::Q4_K || type == TensorType::Q6_K) {  // groups of 4 super-blocks
    const bool q4 = type == TensorType::Q4_K;
    const size_t bytes = (q4 ? DecQ4_KR::repacked_row_bytes(k) : DecQ6_KR::repacked_row_bytes(k)) * size_t(rows);
    if (!q4 || k % 1024 != 0) {  // padding: Q6_K's 8 bytes a group, a short last group
      if (const cudaError_t rc = cudaMemsetAsync(dst, 0, bytes, stream); rc != cudaSuccess) return rc;
    }
    const int64_t total = rows * (k / 256);
    const auto* in = static_cast<const uint8_t*>(src);
    auto* out = static_cast<uint8_t*>(dst);
    if (q4) launch_kernel(repack_q4_k_kernel, blocks_for(total, 256), 256, 0, stream, in, rows, k, out);
    else launch_kernel(repack_q6_k_kernel, blocks_for(total, 256), 256, 0, stream, in, rows, k, out);
    return cudaGetLastError();
  }
  if (type != TensorType::Q8_0) return cudaErrorInvalidValue;
  const int64_t total = rows * (k / 32);
  launch_kernel(repack_q8_0_kernel, blocks_for(total, 256), 256, 0, stream, static_cast<const uint8_t*>(src), rows, k,
                                                                  static_cast<uint8_t*>(dst));
  return cudaGetLastError();
}

template <typename T>
cudaError_t launch_f32_to_16(const float* src, void* dst, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (n % 4 == 0 && reinterpret_cast<uintptr_t>(src) % 16 == 0 && reinterpret_cast<uintptr_t>(dst) % 8 == 0) {
    launch_kernel(f32_to_16_x4_kernel<T>, blocks_for(n / 4, 256), 256, 0, stream, reinterpret_cast<const float4*>(src),
                                                                        static_cast<uint2*>(dst), n / 4);
    return cudaGetLastError();
  }
  launch_kernel(f32_to_16_kernel<T>, blocks_for(n, 256), 256, 0, stream, src, static_cast<T*>(dst), n);
  return cudaGetLastError();
}
cudaError_t launch_f32_to_bf16(const float* src, void* dst, int64_t n, cudaStream_t stream) {
  return launch_f32_to_16<__nv_bfloat16>(src, dst, n, stream);
}
cudaError_t launch_f32_to_f16(const float* src, void* dst, int64_t n, cudaStream_t stream) {
  return launch_f32_to_16<__half>(src, dst, n, stream);
}

cudaError_t launch_bf16_to_f32(const void* src, float* dst, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  launch_kernel(bf16_to_f32_kernel, blocks_for(n, 256), 256, 0, stream, static_cast<const __nv_bfloat16*>(src), dst, n);
  return cudaGetLastError();
}

cudaError_t launch_add_bias(float* out, int64_t rows, int64_t cols, int64_t ldo, const float* bias, cudaStream_t stream) {
  launch_kernel(add_bias_kernel, blocks_for(rows * cols, 256), 256, 0, stream, out, rows, cols, ldo, bias);
  return cudaGetLastError();
}

cudaError_t launch_embed(TensorType type, const void* table, int64_t vocab, int64_t cols, const int32_t* tokens,
                         int64_t n, float* out, int64_t ldo, cudaStream_t stream) {
  (void)vocab;  // token ids are checked by the model before the step
  return dispatch(type, vec_ok(table, cols), [&](auto dec) {
    using D = decltype(dec);
    const int64_t total = n * (cols / D::kChunk);
    launch_kernel(embed_kernel<D>, blocks_for(total, 256), 256, 0, stream, static_cast<const uint8_t*>(table), row_bytes_of<D>(cols),
                                                                 cols, tokens, n, out, ldo);
    return cudaGetLastError();
  });
}

cudaError_t launch_rms_norm(const float* x, const float* gain, int64_t rows, int64_t cols, int64_t group, float eps,
                            float* out, cudaStream_t stream) {
  if (group <= 0 || cols % group != 0) return cudaErrorInvalidValue;
  if (group >= 1024) {
    launch_kernel(rms_norm_block_kernel, static_cast<unsigned>(rows * (cols / group)), 256, 0, stream, x, gain, cols, group, eps, out);
  } else {
    launch_kernel(rms_norm_kernel, blocks_for(rows * (cols / group), 8), 256, 0, stream, x, gain, rows, cols, group, eps, out);
  }
  return cudaGetLastError();
}

cudaError_t launch_rope(float* x, int64_t rows, int64_t cols, int head_dim, const int32_t* positions,
                        const RopeParams& p, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  const int64_t pairs = (cols / head_dim) * p.half;
  launch_kernel(rope_kernel, dim3(blocks_for(pairs, 128), static_cast<unsigned>(rows)), 128, 0, stream, x, cols, head_dim,
                                                                                           positions, p);
  return cudaGetLastError();
}

cudaError_t launch_store_kv(const KvPoolView& kv, const float* k, const float* v, const int64_t* slots, int64_t n,
                            cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const int64_t row = int64_t(kv.kv_heads) * kv.head_dim;
  const dim3 grid(blocks_for(row, 256), static_cast<unsigned>(n));
  switch (kv.type) {
    case TensorType::F32: launch_kernel(store_kv_kernel<float>, grid, 256, 0, stream, kv, k, v, slots); break;
    case TensorType::F16: launch_kernel(store_kv_kernel<__half>, grid, 256, 0, stream, kv, k, v, slots); break;
    case TensorType::BF16: launch_kernel(store_kv_kernel<__nv_bfloat16>, grid, 256, 0, stream, kv, k, v, slots); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_swiglu(const float* gate, const float* up, float* out, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  launch_kernel(swiglu_kernel, blocks_for(n, 256), 256, 0, stream, gate, up, out, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t launch_swiglu16(const void* gate, const void* up, float* out, void* out16, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  if (n % 8 != 0 || !aligned(gate) || !aligned(up) || !aligned(out) || !aligned(out16)) return cudaErrorInvalidValue;
  launch_kernel(swiglu16_kernel<T>, blocks_for(n / 8, 256), 256, 0, stream, static_cast<const uint4*>(gate), static_cast<const uint4*>(up),
                                                                 reinterpret_cast<float4*>(out), static_cast<uint4*>(out16), n / 8);
  return cudaGetLastError();
}
cudaError_t launch_swiglu_bf16(const void* gate, const void* up, float* out, void* out_bf16, int64_t n, cudaStream_t stream) {
  return launch_swiglu16<__nv_bfloat16>(gate, up, out, out_bf16, n, stream);
}
cudaError_t launch_swiglu_f16(const void* gate, const void* up, float* out, void* out_f16, int64_t n, cudaStream_t stream) {
  return launch_swiglu16<__half>(gate, up, out, out_f16, n, stream);
}

cudaError_t launch_add(const float* a, const float* b, float* out, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  launch_kernel(add_kernel, blocks_for(n, 256), 256, 0, stream, a, b, out, n);
  return cudaGetLastError();
}

cudaError_t launch_gather_rows(const float* x, int64_t cols, const int32_t* rows, int64_t n, float* out,
                               cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  launch_kernel(gather_rows_kernel, dim3(blocks_for(cols, 256), static_cast<unsigned>(n)), 256, 0, stream, x, cols, rows, out);
  return cudaGetLastError();
}

cudaError_t launch_fill(float* p, int64_t n, float value, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  launch_kernel(fill_kernel, blocks_for(n, 256), 256, 0, stream, p, n, value);
  return cudaGetLastError();
}

}  // namespace vellum::cuda
