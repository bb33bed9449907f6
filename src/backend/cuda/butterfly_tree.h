#pragma once
// warp_sum's tree outside a warp (round 22). warp_sum (warp_reduce.cuh) adds 32 lane values by a xor
// butterfly (16, 8, 4, 2, 1). Every lane ends with the same bits (float addition is commutative),
// those of the tree ((v0 + v16) + (v8 + v24)) + ((v4 + v20) + (v12 + v28)) + ...: its leaves in
// bit-reversed lane order, neighbours paired at every level. A kernel that holds the 32 values one
// at a time (rows_mma: one GEMV lane position after another) gets the same bits by visiting lanes
// in that order and adding each pair as soon as both halves exist: a binary counter of five pending
// sums. Host and device code (the unit tests check it against a simulated butterfly).

#include <type_traits>

#if defined(__CUDACC__)
#define VELLUM_HD __host__ __device__
#else
#define VELLUM_HD
#endif

namespace vellum::cuda {

// The lane at leaf i (0..31) of warp_sum's tree: i with its five bits reversed.
VELLUM_HD constexpr int butterfly_leaf(int i) {
  return ((i & 1) << 4) | ((i & 2) << 2) | (i & 4) | ((i & 8) >> 2) | ((i & 16) >> 4);
}

// Leaf i's value, held by the caller, joins the tree: at level L, take(L) stores the value as the
// pending left half and stops; add(L) makes the value pending[L] + value (a finished pair) and goes
// up a level. Returns true after leaf 31, whose value is then the whole sum. L comes as a
// std::integral_constant, so a caller's pending sums can be indexed by constants (registers).
template <int L = 0, class Take, class Add>
VELLUM_HD inline bool butterfly_push(int i, Take&& take, Add&& add) {
  if constexpr (L == 5) {
    return true;
  } else {
    if (((i >> L) & 1) == 0) {
      take(std::integral_constant<int, L>{});
      return false;
    }
    add(std::integral_constant<int, L>{});
    return butterfly_push<L + 1>(i, take, add);
  }
}

}  // namespace vellum::cuda
