#pragma once
// On-disk block layouts of the ggml quantized types, byte for byte as ggml (and so GGUF) stores them.
// Every field is little-endian; f16 scales are kept as raw IEEE binary16 bits (convert with
// core/half.h). The structs have no padding (checked below), so sizeof equals the GGUF type size.
//
// Tensor data can sit at any byte offset, so never read a block through a cast pointer: use
// load_block / store_block, which memcpy (the compiler turns that into plain loads).

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace vellum::quant {

static_assert(std::endian::native == std::endian::little, "GGUF block fields are little-endian");

inline constexpr int QK4_0 = 32;
inline constexpr int QK4_1 = 32;
inline constexpr int QK5_0 = 32;
inline constexpr int QK5_1 = 32;
inline constexpr int QK8_0 = 32;
inline constexpr int QK_K = 256;     // elements in a K-quant super-block
inline constexpr int K_SCALE_SIZE = 12;  // 8 six-bit scales + 8 six-bit mins (Q4_K, Q5_K)

// x[i] = d * (q[i] - 8). Element j < 16 is the low nibble of qs[j], element j + 16 the high nibble.
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[QK4_0 / 2];
};

// x[i] = d * q[i] + m. Nibble order as Q4_0.
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[QK4_1 / 2];
};

// x[i] = d * (q[i] - 16); the fifth bit of element i is bit i of qh (a little-endian u32).
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[QK5_0 / 2];
};

// x[i] = d * q[i] + m. Bits as Q5_0.
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[QK5_1 / 2];
};

// x[i] = d * qs[i].
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[QK8_0];
};

// 16 sub-blocks of 16: x = d * (scales[s] & 15) * q - dmin * (scales[s] >> 4), q in 0..3.
// Element e = 128*h + 32*k + l is bits 2k..2k+1 of qs[32*h + l].
struct BlockQ2_K {
  uint8_t scales[QK_K / 16];
  uint8_t qs[QK_K / 4];
  uint16_t d;
  uint16_t dmin;
};

// 16 sub-blocks of 16 with signed 6-bit scales (packed in 12 bytes, stored + 32):
// x = d * (scale[s] - 32) * (q - (hmask bit set ? 0 : 4)), q the 2-bit value placed as in Q2_K,
// the high bit of element e = 128*h + 32*k + l is bit 4*h + k of hmask[l].
struct BlockQ3_K {
  uint8_t hmask[QK_K / 8];
  uint8_t qs[QK_K / 4];
  uint8_t scales[12];
  uint16_t d;
};

// 8 sub-blocks of 32 with 6-bit scales and mins: x = d * sc[s] * q - dmin * m[s], q in 0..15.
// Element e = 64*c + l is the low nibble of qs[32*c + l]; e = 64*c + 32 + l the high nibble.
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[K_SCALE_SIZE];
  uint8_t qs[QK_K / 2];
};

// As Q4_K plus a fifth bit: element 64*c + l has bit 2c of qh[l], 64*c + 32 + l bit 2c + 1.
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[K_SCALE_SIZE];
  uint8_t qh[QK_K / 8];
  uint8_t qs[QK_K / 2];
};

// 16 sub-blocks of 16 with int8 scales: x = d * scales[e / 16] * (q - 32), q in 0..63.
// In half h (128 elements; ql + 64h, qh + 32h), element 128h + 32k + l takes the low (k = 0, 1) or
// high (k = 2, 3) nibble of ql[l + 32*(k & 1)] and bits 2k..2k+1 of qh[l].
struct BlockQ6_K {
  uint8_t ql[QK_K / 2];
  uint8_t qh[QK_K / 4];
  int8_t scales[QK_K / 16];
  uint16_t d;
};

// Sizes are the GGUF type sizes (core/tensor_type.cpp); offsets pin the field order.
static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22 && offsetof(BlockQ5_0, qs) == 6);
static_assert(sizeof(BlockQ5_1) == 24 && offsetof(BlockQ5_1, qh) == 4 && offsetof(BlockQ5_1, qs) == 8);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ2_K) == 84 && offsetof(BlockQ2_K, d) == 80);
static_assert(sizeof(BlockQ3_K) == 110 && offsetof(BlockQ3_K, scales) == 96 && offsetof(BlockQ3_K, d) == 108);
static_assert(sizeof(BlockQ4_K) == 144 && offsetof(BlockQ4_K, qs) == 16);
static_assert(sizeof(BlockQ5_K) == 176 && offsetof(BlockQ5_K, qh) == 16 && offsetof(BlockQ5_K, qs) == 48);
static_assert(sizeof(BlockQ6_K) == 210 && offsetof(BlockQ6_K, scales) == 192 && offsetof(BlockQ6_K, d) == 208);

template <typename Block>
inline constexpr bool kIsBlock = std::is_trivially_copyable_v<Block> && std::has_unique_object_representations_v<Block>;

// Block i of an array of blocks starting at `base` (any alignment).
template <typename Block>
inline Block load_block(const void* base, int64_t i) {
  static_assert(kIsBlock<Block>);
  Block b;
  std::memcpy(&b, static_cast<const unsigned char*>(base) + i * int64_t(sizeof(Block)), sizeof(Block));
  return b;
}

template <typename Block>
inline void store_block(void* base, int64_t i, const Block& b) {
  static_assert(kIsBlock<Block>);
  std::memcpy(static_cast<unsigned char*>(base) + i * int64_t(sizeof(Block)), &b, sizeof(Block));
}

}  // namespace vellum::quant
