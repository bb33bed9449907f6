// butterfly_tree.h: the deterministic mode's tensor-core rows (rows_mma.cu) add 32 GEMV lane sums one
// at a time and must get the bits warp_sum's xor butterfly gives (warp_reduce.cuh). Host arithmetic:
// the butterfly is simulated lane by lane here, with the same float additions.

#include "backend/cuda/butterfly_tree.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

namespace vellum::cuda {
namespace {

using Lanes = std::array<float, 32>;

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// warp_sum: at each step every lane l adds lane l ^ o's value (o = 16, 8, 4, 2, 1).
float butterfly(Lanes v, int lane) {
  for (int o = 16; o > 0; o /= 2) {
    Lanes next{};
    for (int l = 0; l < 32; ++l) next[l] = v[l] + v[l ^ o];
    v = next;
  }
  return v[lane];
}

// The lanes pushed one at a time in the order `lane_of(i)`, as rows_mma does.
template <class Order>
float counter_sum(const Lanes& v, Order lane_of) {
  float pend[5] = {0, 0, 0, 0, 0}, cur = 0.0f;
  for (int i = 0; i < 32; ++i) {
    cur = v[lane_of(i)];
    const bool done = butterfly_push(i, [&](auto l) { pend[l()] = cur; }, [&](auto l) { cur = pend[l()] + cur; });
    EXPECT_EQ(done, i == 31) << "leaf " << i;
  }
  return cur;
}

TEST(ButterflyTree, LeavesAreTheLanesBitReversed) {
  EXPECT_EQ(butterfly_leaf(0), 0);
  EXPECT_EQ(butterfly_leaf(1), 16);
  EXPECT_EQ(butterfly_leaf(2), 8);
  EXPECT_EQ(butterfly_leaf(3), 24);
  EXPECT_EQ(butterfly_leaf(4), 4);
  EXPECT_EQ(butterfly_leaf(31), 31);
  std::array<int, 32> hits{};
  for (int i = 0; i < 32; ++i) {
    ++hits[butterfly_leaf(i)];
    EXPECT_EQ(butterfly_leaf(butterfly_leaf(i)), i);
  }
  for (int l = 0; l < 32; ++l) EXPECT_EQ(hits[l], 1) << "lane " << l;
}

// Values over 40 binades (and signed zeros), so that the order of the additions shows in the
// rounding: the lane-order counter differs from the butterfly on many of them, which shows that the
// check can fail; the bit-reversed counter must not differ on any.
TEST(ButterflyTree, CounterInLeafOrderGivesTheButterflysBits) {
  std::mt19937 rng(22);
  std::uniform_real_distribution<float> mant(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exp2(-20, 20), zero(0, 15);
  int lane_order_differs = 0;
  for (int trial = 0; trial < 5000; ++trial) {
    Lanes v{};
    for (float& x : v) x = zero(rng) == 0 ? (zero(rng) % 2 ? -0.0f : 0.0f) : std::ldexp(mant(rng), exp2(rng));
    const float ref = butterfly(v, 0);
    for (int lane : {1, 13, 31}) ASSERT_EQ(bits(butterfly(v, lane)), bits(ref)) << "every lane ends with the same bits";
    ASSERT_EQ(bits(counter_sum(v, [](int i) { return butterfly_leaf(i); })), bits(ref)) << "trial " << trial;
    lane_order_differs += bits(counter_sum(v, [](int i) { return i; })) != bits(ref);
  }
  EXPECT_GT(lane_order_differs, 100);
}

}  // namespace
}  // namespace vellum::cuda
