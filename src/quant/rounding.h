#pragma once
// Float-to-integer steps shared by the reference quantizers (internal to quant/).
//
// Bit-exactness with ggml needs every float expression evaluated as written: no FMA contraction and
// no reassociation. Both GCC (even in ISO C++ mode) and clang fuse a*b+c into an FMA when the target
// has one (-march=native, x86-64-v3, aarch64), so each .cpp that uses this turns contraction off with
// a pragma. Never build quant/ with -ffast-math.

#include <bit>
#include <cmath>
#include <cstdint>

namespace vellum::quant::detail {

// ggml's nearest_int: round to nearest, ties to even, by adding 1.5 * 2^23 and reading the mantissa.
// Exact for |f| <= 4194303; outside that (or for NaN) it returns a meaningless but defined value, as
// ggml does, where a C cast would be undefined behaviour.
inline int nearest_int(float f) {
  const float v = f + 12582912.f;
  return int(std::bit_cast<uint32_t>(v) & 0x007fffffu) - 0x00400000;
}

// (int)v clamped to [0, hi]: ggml's MIN(hi, (int8_t)v) for every v a finite input can produce
// (v >= 0 there); NaN and out-of-range values, undefined in C, give 0 or hi.
inline int trunc_clamp(float v, int hi) {
  if (!(v >= 0.f)) return 0;
  if (v >= float(hi)) return hi;
  return int(v);
}

// roundf(v) (half away from zero) as int8, as ggml's Q8_0 stores it; saturates instead of overflowing.
inline int8_t round_to_int8(float v) {
  const float r = std::round(v);
  if (!(r == r)) return 0;
  if (r >= 127.f) return 127;
  if (r <= -128.f) return -128;
  return int8_t(r);
}

}  // namespace vellum::quant::detail
