#pragma once
// Device decoders of the GGUF weight types, one expression per element exactly as
// quant/legacy_quants.cpp and quant/k_quants.cpp write it (block layouts: quant/blocks.h).
// A decoder turns chunk c of a row (kChunk consecutive elements) into floats. Quantized types use
// 32-element chunks (a legacy block, or a K-quant sub-block of 32); plain types 8 (one 16-byte load)
// or 1 (rows whose length or alignment does not allow the vector load).
//
// Blocks sit at 2-byte alignment at best (34-byte Q8_0 blocks...), so fields are read as bytes or
// 16-bit halves, never through wider casts.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include <cuda_runtime.h>

#include "core/tensor_type.h"

namespace vellum::cuda {

__device__ __forceinline__ float ld_f16(const uint8_t* p) {
  return __half2float(__ushort_as_half(*reinterpret_cast<const uint16_t*>(p)));
}
__device__ __forceinline__ uint32_t ld_u32_bytes(const uint8_t* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}
// 32 bytes at a 16-byte aligned address, as 8 little-endian words; byte_of picks byte l.
__device__ __forceinline__ void load32(const uint8_t* p, uint32_t* w) {
  const uint4 a = reinterpret_cast<const uint4*>(p)[0], b = reinterpret_cast<const uint4*>(p)[1];
  w[0] = a.x, w[1] = a.y, w[2] = a.z, w[3] = a.w, w[4] = b.x, w[5] = b.y, w[6] = b.z, w[7] = b.w;
}
__device__ __forceinline__ uint32_t byte_of(const uint32_t* w, int l) { return (w[l / 4] >> (8 * (l % 4))) & 0xFFu; }

// Exact int -> float for small integers without the quarter-rate I2F: 2^23 + v has v in its low
// mantissa bits, so one OR and one subtraction give float(v) (0 <= v < 2^23).
__device__ __forceinline__ float u2f(uint32_t v) { return __uint_as_float(0x4B000000u | v) - 8388608.0f; }
// float(int8_t(b)) for a byte b (0..255): flip the sign bit to bias by 128.
__device__ __forceinline__ float s8f(uint32_t b) { return __uint_as_float(0x4B000000u | (b ^ 0x80u)) - 8388736.0f; }

// Bytes of one row in device memory (decoders that repack at upload pad rows to 16 bytes).
template <class D>
__host__ __device__ inline size_t row_stride(int64_t k) {
  if constexpr (D::kRepacked) {
    return D::repacked_row_bytes(k);
  } else {
    return static_cast<size_t>(k / D::kBlockElems) * D::kBlockBytes;
  }
}

// No FMA contraction in decoders: the CPU reference rounds the product and the sum separately.
__device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }

struct DecF32x8 {
  static constexpr bool kRepacked = false;
  static constexpr int kChunk = 8, kBlockBytes = 32, kBlockElems = 8;
  __device__ static void load(const uint8_t* row, int64_t c, float* y) {
    const float4* p = reinterpret_cast<const float4*>(row) + 2 * c;
    const float4 a = p[0], b = p[1];
    y[0] = a.x, y[1] = a.y, y[2] = a.z, y[3] = a.w, y[4] = b.x, y[5] = b.y, y[6] = b.z, y[7] = b.w;
  }
};
struct DecF16x8 {
  static constexpr bool kRepacked = false;
  static constexpr int kChunk = 8, kBlockBytes = 16, kBlockElems = 8;
  __device__ static void load(const uint8_t* row, int64_t c, float* y) { unpack(reinterpret_cast<const uint4*>(row)[c], y); }
  __device__ static void unpack(const uint4& v, float* y) {
    const __half2* h = reinterpret_cast<const __half2*>(&v);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 f = __half22float2(h[i]);
      y[2 * i] = f.x, y[2 * i + 1] = f.y;
    }
  }
};
struct DecBF16x8 {
  static constexpr bool kRepacked = false;
  static constexpr int kChunk = 8, kBlockBytes = 16, kBlockElems = 8;
  __device__ static void load(const uint8_t* row, int64_t c, float* y) { unpack(reinterpret_cast<const uint4*>(row)[c], y); }
  __device__ static void unpack(const uint4& v, float* y) {
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      y[2 * i] = __uint_as_float(w[i] << 16);
      y[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
    }
  }
};
struct DecF32x1 {
  static constexpr bool kRepacked = false;
  static constexpr int kChunk = 1, kBlockBytes = 4, kBlockElems = 1;
  __device__ static void load(const uint8_t* row, int64_t c, float* y) { y[0] = reinterpret_cast<const float*>(row)[c]; }
};
struct DecF16x1 {
  static constexpr bool kRepacked = false;
  static constexpr int kChunk = 1, kBlockBytes = 2, kBlockElems = 1;
  __device__ static void load(const uint8_t* row, int64_t c, float* y) { y[0] = ld_f16(row + 2 * c); }
};
struct DecBF16x1 {
  static constexpr bool kRepacked = false;
  static constexpr int kChunk = 1, kBlockBytes = 2, kBlockElems = 1;
  __device__ static void load(const uint8_t* row, int64_t c, float* y) {
    y[0] = __uint_as_float(uint32_t(reinterpret_cast<const uint16_t*>(row)[c]) << 16);
  }
};

// ---- legacy 32-element blocks --------------------------------------------------------------------
struct DecQ4_0 {
  static constexpr bool kRepacked = false;
  static constexpr int kChunk = 32, kBlockBytes = 18, kBlockElems = 32;
  __device__ static void load(const uint8_t* row, int64_t c, float* y) {
    const uint8_t* b = row + c * kBlockBytes;
    const float d = ld_f16(b);
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const uint8_t q = b[2 + j];
      y[j] = mul(float((q & 0x0F) - 8), d);
      y[j + 16] = mul(float((q >> 4) - 8), d);
    }
  }
};
struct DecQ4_1 {
  static constexpr bool kRepacked = false;
  static constexpr int kChunk = 32, kBlockBytes = 20, kBlockElems = 32;
  __device__ static void load(const uint8_t* row, int64_t c, float* y) {
    const uint8_t* b = row + c * kBlockBytes;
    const float d = ld_f16(b), m = ld_f16(b + 2);
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const uint8_t q = b[4 + j];
      y[j] = add(mul(float(q & 0x0F), d), m);
      y[j + 16] = add(mul(float(q >> 4), d), m);
    }
  }
};
struct DecQ5_0 {
  static constexpr bool kRepacked = false;
  static constexpr int kChunk = 32, kBlockBytes = 22, kBlockElems = 32;
  __device__ static void load(const uint8_t* row, int64_t c, float* y) {
    const uint8_t* b = row + c * kBlockBytes;
    const float d = ld_f16(b);
    const uint32_t qh = ld_u32_bytes(b + 2);
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const uint8_t q = b[6 + j];
      const int h0 = int((qh >> j) & 1u) << 4, h1 = int((qh >> (j + 16)) & 1u) << 4;
      y[j] = mul(float(((q & 0x0F) | h0) - 16), d);
      y[j + 16] = mul(float(((q >> 4) | h1) - 16), d);
    }
  }
};
struct DecQ5_1 {
  static constexpr bool kRepacked = false;
  static constexpr int kChunk = 32, kBlockBytes = 24, kBlockElems = 32;
  __device__ static void load(const uint8_t* row, int64_t c, float* y) {
    const uint8_t* b = row + c * kBlockBytes;
    const float d = ld_f16(b), m = ld_f16(b + 2);
    const uint32_t qh = ld_u32_bytes(b + 4);
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const uint8_t q = b[8 + j];
      const int h0 = int((qh >> j) & 1u) << 4, h1 = int((qh >> (j + 16)) & 1u) << 4;
      y[j] = add(mul(float((q & 0x0F) | h0), d), m);
      y[j + 16] = add(mul(float((q >> 4) | h1), d), m);
    }
  }
};

// Q8_0 as the CUDA backend stores it: each group of 8 blocks (256 elements) becomes the 8 f16
// scales (16 bytes) then the 256 int8 quants, so a 32-element chunk is two aligned 16-byte loads.
// A row's last group may hold fewer blocks (same offsets, shorter); rows are padded to 16 bytes.
struct DecQ8_0R {
  static constexpr bool kRepacked = true;
  static constexpr int kChunk = 32, kBlockBytes = 34, kBlockElems = 32;
  static constexpr int kGroupBytes = 16 + 8 * 32;
  __host__ __device__ static size_t repacked_row_bytes(int64_t k) {
    const int64_t blocks = k / 32, tail = blocks % 8;
    return size_t(blocks / 8) * kGroupBytes + (tail ? size_t(16 + 32 * tail) : 0);
  }
  __device__ static void load(const uint8_t* row, int64_t c, float* y) {
    const uint8_t* g = row + (c / 8) * kGroupBytes;
    const int j = int(c % 8);
    const float d = ld_f16(g + 2 * j);
    uint32_t q[8];
    load32(g + 16 + 32 * j, q);
#pragma unroll
    for (int l = 0; l < 32; ++l) y[l] = mul(s8f(byte_of(q, l)), d);
  }
  // For the int8 GEMV: chunk c as 32 int8 values q (4 a word) with value = d0·q (first 16),
  // d1·q (last 16), minus mn.
  __device__ static void load_i8(const uint8_t* row, int64_t c, uint32_t* q, float& d0, float& d1, float& mn) {
    const uint8_t* g = row + (c / 8) * kGroupBytes;
    const int j = int(c % 8);
    d0 = d1 = ld_f16(g + 2 * j);
    mn = 0.0f;
    load32(g + 16 + 32 * j, q);
  }
};

// ---- K-quants: 256-element super-blocks, decoded 32 elements (sub-block s) at a time --------------
__device__ __forceinline__ void scale_min_k4(int j, const uint8_t* q, int& sc, int& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

struct DecQ2_K {
  static constexpr bool kRepacked = false;
  static constexpr int kChunk = 32, kBlockBytes = 84, kBlockElems = 256;
  __device__ static void load(const uint8_t* row, int64_t c, float* y) {
    const uint8_t* b = row + (c / 8) * kBlockBytes;
    const int s = int(c % 8), h = s / 4, k = s % 4;
    const float d = ld_f16(b + 80), dmin = ld_f16(b + 82);
#pragma unroll
    for (int l = 0; l < 32; ++l) {
      const uint8_t sc = b[2 * s + l / 16];
      const float dl = mul(d, float(sc & 0xF)), ml = mul(dmin, float(sc >> 4));
      const int q = (b[16 + 32 * h + l] >> (2 * k)) & 3;
      y[l] = sub(mul(dl, float(q)), ml);
    }
  }
};
struct DecQ3_K {
  static constexpr bool kRepacked = false;
  static constexpr int kChunk = 32, kBlockBytes = 110, kBlockElems = 256;
  __device__ static int scale(const uint8_t* scales, int s) {
    const int lo = s < 8 ? (scales[s] & 0xF) : (scales[s - 8] >> 4);
    const int hi = (scales[8 + s % 4] >> (2 * (s / 4))) & 3;
    return (lo | (hi << 4)) - 32;
  }
  __device__ static void load(const uint8_t* row, int64_t c, float* y) {
    const uint8_t* b = row + (c / 8) * kBlockBytes;
    const int s = int(c % 8), h = s / 4, k = s % 4;
    const float d = ld_f16(b + 108);
    const float dl0 = mul(d, float(scale(b + 96, 2 * s))), dl1 = mul(d, float(scale(b + 96, 2 * s + 1)));
#pragma unroll
    for (int l = 0; l < 32; ++l) {
      const int lo = (b[32 + 32 * h + l] >> (2 * k)) & 3;
      const bool high = (b[l] >> (4 * h + k)) & 1;
      y[l] = mul(l < 16 ? dl0 : dl1, float(lo - (high ? 0 : 4)));
    }
  }
};
// Q4_K as the CUDA backend stores it (round 7; repack_q4_k_kernel at upload): super-blocks in
// groups of 4 (1 024 elements) = their 4 GGUF headers (16 bytes each: d, dmin, 12 bytes of 6-bit
// scales and minimums), then 4 x 128 quant bytes in which sub-block s (32 elements) is bytes
// 16s..16s+15, byte j holding element j (low nibble) and j + 16 (high). A GEMV warp's 32 lanes then
// read one whole sub-block each from 512 contiguous bytes. A row's last group keeps the full
// 576-byte slot (zero padding) when it holds fewer super-blocks, so every offset is a function of
// the element index alone; for k a multiple of 1 024 the row is exactly the GGUF size.
struct DecQ4_KR {
  static constexpr bool kRepacked = true;
  static constexpr int kChunk = 32, kBlockBytes = 144, kBlockElems = 256;
  static constexpr int kGroupBytes = 4 * 144, kQuantOff = 4 * 16;
  __host__ __device__ static constexpr size_t repacked_row_bytes(int64_t k) { return size_t((k / 256 + 3) / 4) * kGroupBytes; }
  __device__ static const uint8_t* header(const uint8_t* row, int64_t b) { return row + (b / 4) * kGroupBytes + 16 * (b % 4); }
  __device__ static const uint8_t* quants(const uint8_t* row, int64_t c) {  // sub-block c of the row
    return row + (c / 32) * kGroupBytes + kQuantOff + 16 * (c % 32);
  }
  __device__ static void load(const uint8_t* row, int64_t c, float* y) {
    const uint8_t* h = header(row, c / 8);
    int sc, m;
    scale_min_k4(int(c % 8), h + 4, sc, m);
    const float d1 = mul(ld_f16(h), float(sc)), m1 = mul(ld_f16(h + 2), float(m));
    const uint4 v = *reinterpret_cast<const uint4*>(quants(row, c));
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int l = 0; l < 16; ++l) {
      const uint32_t b = byte_of(w, l);
      y[l] = sub(mul(d1, u2f(b & 0xF)), m1);
      y[l + 16] = sub(mul(d1, u2f(b >> 4)), m1);
    }
  }
};
struct DecQ5_K {
  static constexpr bool kRepacked = false;
  static constexpr int kChunk = 32, kBlockBytes = 176, kBlockElems = 256;
  __device__ static void load(const uint8_t* row, int64_t c, float* y) {
    const uint8_t* b = row + (c / 8) * kBlockBytes;
    const int s = int(c % 8), cc = s / 2, upper = s % 2;
    int sc, m;
    scale_min_k4(s, b + 4, sc, m);
    const float d1 = mul(ld_f16(b), float(sc)), m1 = mul(ld_f16(b + 2), float(m));
    uint32_t qs[8], qh[8];  // 176-byte blocks, 16-aligned fields
    load32(b + 48 + 32 * cc, qs);
    load32(b + 16, qh);
#pragma unroll
    for (int l = 0; l < 32; ++l) {
      const uint32_t v = byte_of(qs, l);
      const uint32_t lo = upper ? (v >> 4) : (v & 0xF);
      const uint32_t hi = (byte_of(qh, l) >> (2 * cc + upper)) & 1u;
      y[l] = sub(mul(d1, u2f(lo | (hi << 4))), m1);
    }
  }
};
// Q6_K as the CUDA backend stores it (round 7; repack_q6_k_kernel at upload): super-blocks in
// groups of 4 (1 024 elements, 32 sub-blocks of 32): 512 bytes of low 4 bits (sub-block t at 16t,
// byte j: element j low nibble, j + 16 high), 256 bytes of high 2 bits (sub-block t at 512 + 8t: two
// words for elements 0..15 and 16..31; in each, byte i bits 2w..2w+1 = element 4w + i), the 4 x 16
// int8 scales (GGUF order, at 768), the 4 f16 d (at 832), 8 bytes of padding: 848 bytes, 1% above
// GGUF's 840 (the round-5 layout padded every block to 224: 6.7%). A GEMV warp's lanes read one
// sub-block each from contiguous bytes; a short last group keeps the full slot (zero padding).
struct DecQ6_KR {
  static constexpr bool kRepacked = true;
  static constexpr int kChunk = 32, kBlockBytes = 210, kBlockElems = 256;
  static constexpr int kGroupBytes = 848, kQhOff = 512, kScOff = 768, kDOff = 832;
  __host__ __device__ static constexpr size_t repacked_row_bytes(int64_t k) { return size_t((k / 256 + 3) / 4) * kGroupBytes; }
  // Bits 4..5 of each byte: the high 2 bits of elements 4w..4w+3 from a qh word.
  __device__ static uint32_t hi2(uint32_t qh, int w) { return ((qh >> (2 * w)) & 0x03030303u) << 4; }
  __device__ static void load(const uint8_t* row, int64_t c, float* y) {
    const uint8_t* g = row + (c / 32) * kGroupBytes;
    const int t = int(c % 32);
    const float d = ld_f16(g + kDOff + 2 * (t / 8));
    const float d0 = mul(d, float(int8_t(g[kScOff + 2 * t]))), d1 = mul(d, float(int8_t(g[kScOff + 2 * t + 1])));
    const uint4 v = *reinterpret_cast<const uint4*>(g + 16 * t);
    const uint2 h = *reinterpret_cast<const uint2*>(g + kQhOff + 8 * t);
    const uint32_t ql[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      const uint32_t a = (ql[w] & 0x0F0F0F0Fu) | hi2(h.x, w), b = ((ql[w] >> 4) & 0x0F0F0F0Fu) | hi2(h.y, w);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        // float(q - 32) exactly: 2^23 + q - (2^23 + 32)
        y[4 * w + i] = mul(d0, __uint_as_float(0x4B000000u | ((a >> (8 * i)) & 0xFFu)) - 8388640.0f);
        y[16 + 4 * w + i] = mul(d1, __uint_as_float(0x4B000000u | ((b >> (8 * i)) & 0xFFu)) - 8388640.0f);
      }
    }
  }
};

// ---- int8 GEMV decoders (batch 1, gemv_kernels.cu) -------------------------------------------------
// A wider chunk per lane than the f32 decoders, so that every byte a lane loads is used by it: a
// Q8_0 lane takes two blocks (64 quants, both scales in one word); Q4_K and Q6_K have their own
// kernel (gemv_kernels.cu, round 7). load() only issues the loads, dot() consumes them against x
// quantized to int8 per 32 (I8X: kChunk bytes and kChunk/32 (d, d·Σq)), so a warp has every row's
// loads in flight before the first use.
template <int kChunk>
struct I8X {
  uint4 q[kChunk / 16];
  float2 s[kChunk / 32];
  __device__ void load(const int8_t* xq, const float2* xs, int64_t c) {
    const uint4* p = reinterpret_cast<const uint4*>(xq + c * kChunk);
#pragma unroll
    for (int i = 0; i < kChunk / 16; ++i) q[i] = p[i];
#pragma unroll
    for (int i = 0; i < kChunk / 32; ++i) s[i] = xs[c * (kChunk / 32) + i];
  }
};
__device__ __forceinline__ int dp4a16(const uint4& a, const uint4& b, int s) {
  s = __dp4a(int(a.x), int(b.x), s);
  s = __dp4a(int(a.y), int(b.y), s);
  s = __dp4a(int(a.z), int(b.z), s);
  return __dp4a(int(a.w), int(b.w), s);
}
__device__ __forceinline__ float f16_lo(uint32_t w) { return __half2float(__ushort_as_half(uint16_t(w & 0xFFFFu))); }
__device__ __forceinline__ float f16_hi(uint32_t w) { return __half2float(__ushort_as_half(uint16_t(w >> 16))); }
__device__ __forceinline__ uint4 nib(const uint4& v, int shift) {
  return make_uint4((v.x >> shift) & 0x0F0F0F0Fu, (v.y >> shift) & 0x0F0F0F0Fu, (v.z >> shift) & 0x0F0F0F0Fu,
                    (v.w >> shift) & 0x0F0F0F0Fu);
}

struct I8Q8_0 {  // DecQ8_0R's layout; rows of a multiple of 64 elements
  static constexpr int kChunk = 64, kInFlight = 2;
  using Dec = DecQ8_0R;
  struct Raw {
    uint4 q[4];
    uint32_t d;  // the two blocks' f16 scales
  };
  __device__ static void load(const uint8_t* row, int64_t c, Raw& r) {
    const uint8_t* g = row + (c / 4) * DecQ8_0R::kGroupBytes;
    const int j = int(c % 4) * 2;
    r.d = *reinterpret_cast<const uint32_t*>(g + 2 * j);
    // Generic loads, so a row copied into shared memory reads the same way (the staged producer).
    // Through L1: without L1 allocation llama3-8b Q8_0 batch 1 fell from 409–413 to 355–359 tok/s
    // (round 48, call 4).
    const uint4* q = reinterpret_cast<const uint4*>(g + 16 + 32 * j);
#pragma unroll
    for (int i = 0; i < 4; ++i) r.q[i] = q[i];
  }
  __device__ static float dot(const Raw& r, const I8X<kChunk>& x) {
    const int s0 = dp4a16(r.q[1], x.q[1], dp4a16(r.q[0], x.q[0], 0));
    const int s1 = dp4a16(r.q[3], x.q[3], dp4a16(r.q[2], x.q[2], 0));
    return combine(s0, s1, x.s[0].x, x.s[1].x, r.d);
  }
  // A chunk's term from its two blocks' exact integer sums, x scales and f16 scale pair. Explicit
  // roundings: the deterministic mode's tensor-core rows (rows_mma.cu) give the same bits.
  __device__ static float combine(int s0, int s1, float x0, float x1, uint32_t d) {
    return __fmaf_rn(x0, __fmul_rn(f16_lo(d), __int2float_rn(s0)), __fmul_rn(x1, __fmul_rn(f16_hi(d), __int2float_rn(s1))));
  }
};

// Calls f(Decoder{}) for a weight type; `vec` picks the 8-wide loads of plain types.
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
    case TensorType::Q4_K: return f(DecQ4_KR{});  // re-laid at upload
    case TensorType::Q5_K: return f(DecQ5_K{});
    case TensorType::Q6_K: return f(DecQ6_KR{});  // re-laid at upload
    default: return cudaErrorInvalidValue;
  }
}
inline bool vec_ok(const void* p, int64_t k) { return k % 8 == 0 && reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace vellum::cuda
