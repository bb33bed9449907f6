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
  __device__ static void load(const uint8_t* row, int64_t c, float* y) {
    const uint4 v = reinterpret_cast<const uint4*>(row)[c];
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
  __device__ static void load(const uint8_t* row, int64_t c, float* y) {
    const uint4 v = reinterpret_cast<const uint4*>(row)[c];
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
struct DecQ4_K {
  static constexpr bool kRepacked = false;
  static constexpr int kChunk = 32, kBlockBytes = 144, kBlockElems = 256;
  __device__ static void load(const uint8_t* row, int64_t c, float* y) {
    const uint8_t* b = row + (c / 8) * kBlockBytes;
    const int s = int(c % 8), cc = s / 2, upper = s % 2;
    int sc, m;
    scale_min_k4(s, b + 4, sc, m);
    const float d1 = mul(ld_f16(b), float(sc)), m1 = mul(ld_f16(b + 2), float(m));
    uint32_t qs[8];  // blocks are 144 bytes and rows start 16-aligned: two 16-byte loads
    load32(b + 16 + 32 * cc, qs);
#pragma unroll
    for (int l = 0; l < 32; ++l) {
      const uint32_t v = byte_of(qs, l);
      y[l] = sub(mul(d1, u2f(upper ? (v >> 4) : (v & 0xF))), m1);
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
// Q6_K as the CUDA backend stores it: each 210-byte block padded to 224 bytes, so ql (0..127) and
// qh (128..191) are 16-byte aligned and a 32-element chunk is four 16-byte loads (6.7% more memory).
struct DecQ6_KR {
  static constexpr bool kRepacked = true;
  static constexpr int kChunk = 32, kBlockBytes = 210, kBlockElems = 256, kPaddedBytes = 224;
  __host__ __device__ static size_t repacked_row_bytes(int64_t k) { return size_t(k / 256) * kPaddedBytes; }
  __device__ static void load(const uint8_t* row, int64_t c, float* y) {
    const uint8_t* b = row + (c / 8) * kPaddedBytes;
    const int s = int(c % 8), h = s / 4, k = s % 4;
    const float d = ld_f16(b + 208);
    const float d0 = mul(d, float(int8_t(b[192 + 2 * s]))), d1 = mul(d, float(int8_t(b[192 + 2 * s + 1])));
    uint32_t ql[8], qh[8];
    load32(b + 64 * h + 32 * (k & 1), ql);
    load32(b + 128 + 32 * h, qh);
#pragma unroll
    for (int l = 0; l < 32; ++l) {
      const uint32_t v = byte_of(ql, l);
      const uint32_t lo = k < 2 ? (v & 0xF) : (v >> 4);
      const uint32_t hi = (byte_of(qh, l) >> (2 * k)) & 3u;
      // float(q - 32) exactly: 2^23 + q - (2^23 + 32)
      y[l] = mul(l < 16 ? d0 : d1, __uint_as_float(0x4B000000u | lo | (hi << 4)) - 8388640.0f);
    }
  }
};

}  // namespace vellum::cuda
