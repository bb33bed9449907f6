#pragma once
// IEEE binary16 (f16) and bfloat16 conversions, bit-exact and portable (no F16C needed).
// f16 -> f32 and bf16 -> f32 are exact (NaN payloads shift over unchanged, signalling NaNs included).
// f32 -> f16 is numpy's astype(float16) bit for bit (round to nearest even; NaN keeps its top payload
// bits, so gguf-py's F16 output and ours agree); f32 -> bf16 is ggml's GGML_FP32_TO_BF16 (nearest
// even, NaN made quiet), which gguf-py copies. tests/unit/test_half.cpp checks both against numpy.

#include <bit>
#include <cstdint>

namespace vellum {

inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      uint32_t m = mant;
      do {
        ++e;
        m <<= 1;
      } while ((m & 0x400u) == 0);
      bits = sign | (uint32_t(127 - 15 - e) << 23) | ((m & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + (127 - 15)) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

inline uint16_t f32_to_f16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) {  // NaN: keep the top payload bits (never 0, which would read as inf), as numpy does
    const uint32_t payload = (abs & 0x7fffffu) >> 13;
    return uint16_t(sign | 0x7c00u | (payload != 0 ? payload : 1u));
  }
  if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // overflow (incl. inf) after rounding
  if (abs < 0x38800000u) {                                  // result is subnormal or zero
    if (abs < 0x33000000u) return uint16_t(sign);           // below half the smallest subnormal
    const uint32_t e = abs >> 23;
    const uint32_t m = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14 + (113 - e) - 1 + ... : bits to drop to land on 2^-24 units
    const uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    uint32_t r = q + ((rem > half || (rem == half && (q & 1))) ? 1 : 0);
    return uint16_t(sign | r);
  }
  // normal: rebias exponent, round mantissa from 23 to 10 bits, nearest even (carry may bump exponent)
  uint32_t v = abs - ((127 - 15) << 23);
  const uint32_t rem = v & 0x1fffu;
  v >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (v & 1))) ++v;
  return uint16_t(sign | v);
}

inline float bf16_to_f32(uint16_t h) { return std::bit_cast<float>(uint32_t(h) << 16); }

inline uint16_t f32_to_bf16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 64);  // quiet NaN, as ggml does
  return uint16_t((x + (0x7fffu + ((x >> 16) & 1))) >> 16);
}

}  // namespace vellum
