// CPU matmul kernels (backend/cpu/matmul_kernels.h) for every weight type at every ISA level this
// machine has: against a double-precision reference over the reference dequantization, bitwise
// across ISA levels, tile heights, row counts and thread counts, and on odd shapes.
//
// Tolerance. F32/F16/BF16 weights use f32 activations: |y - ref| <= 1e-5 * Σ|w x| (float rounding).
// Quantized weights use activations quantized per block of 32 to int8 with d = amax/127, so each
// activation is off by at most d/2; the integer dot is exact. Hence, per output,
//   |y - ref| <= Σ_blocks (amax_b / 254) * Σ_{i in b} |w_i|  +  1e-5 * Σ|w x|  (float rounding),
// the same bound for every quantized type; the test checks it and that it is actually tight-ish
// (the typical error stays well below it).

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_features.h"
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/cpu_matmul.h"
#include "backend/cpu/matmul_kernels.h"
#include "core/half.h"
#include "quant/quant.h"

namespace vellum {
namespace {

using backend::Tensor;
using backend::Weight;
using backend::cpu::CpuMatmul;
using backend::cpu::IsaLevel;

const std::vector<TensorType> kTypes = {TensorType::F32,  TensorType::F16,  TensorType::BF16, TensorType::Q4_0,
                                        TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0,
                                        TensorType::Q2_K, TensorType::Q3_K, TensorType::Q4_K, TensorType::Q5_K,
                                        TensorType::Q6_K};

std::vector<IsaLevel> levels() {
  std::vector<IsaLevel> v;
  for (int l = 0; l <= static_cast<int>(backend::cpu::detected_isa()); ++l) v.push_back(static_cast<IsaLevel>(l));
  return v;
}

struct Matrix {
  TensorType type;
  int64_t rows, cols;
  std::vector<uint8_t> bytes;
  std::vector<float> deq;  // reference dequantization
  Weight weight() const { return Weight{"w", type, cols, rows, bytes.data()}; }
};

Matrix make_weights(TensorType type, int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  Matrix m{type, rows, cols, {}, {}};
  const size_t rb = row_bytes(type, static_cast<uint64_t>(cols));
  m.bytes.resize(rb * static_cast<size_t>(rows) + 64);
  m.deq.resize(static_cast<size_t>(rows * cols));
  std::vector<float> src(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    // rows of different magnitudes, some outliers
    const float scale = 0.02f * float(1 + r % 5);
    for (auto& v : src) v = dist(rng) * scale;
    src[static_cast<size_t>(r % cols)] *= 8.0f;
    quant::quantize_row(type, src.data(), m.bytes.data() + r * rb, cols);
    quant::dequantize_row(type, m.bytes.data() + r * rb, m.deq.data() + r * cols, cols);
  }
  return m;
}

std::vector<float> make_acts(int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(rows * cols));
  for (auto& v : x) v = dist(rng);
  for (size_t i = 0; i < x.size(); i += 97) x[i] *= 10.0f;  // outliers, as real activations have
  if (rows > 1) std::fill(x.begin() + cols, x.begin() + 2 * cols, 0.0f);  // an all-zero row
  return x;
}

std::vector<float> run(const Matrix& m, const std::vector<float>& x, int64_t rows, unsigned threads, IsaLevel level,
                       const std::vector<float>* bias = nullptr) {
  ThreadPool pool(threads);
  CpuMatmul mm;
  std::vector<float> out(static_cast<size_t>(rows * m.rows), -1.0f);
  std::vector<float> xin(x.begin(), x.begin() + rows * m.cols);
  mm.run(pool, m.weight(), Tensor{xin.data(), rows, m.cols}, Tensor{out.data(), rows, m.rows},
         bias ? bias->data() : nullptr, level);
  return out;
}

bool quantized_acts(TensorType t) { return t != TensorType::F32 && t != TensorType::F16 && t != TensorType::BF16; }

void check_against_reference(const Matrix& m, const std::vector<float>& x, int64_t rows, const std::vector<float>& y,
                             const std::string& what) {
  double worst_ratio = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x.data() + r * m.cols;
    for (int64_t o = 0; o < m.rows; ++o) {
      const float* w = m.deq.data() + o * m.cols;
      double ref = 0.0, mag = 0.0, qerr = 0.0;
      for (int64_t i = 0; i < m.cols; ++i) {
        ref += double(w[i]) * xr[i];
        mag += std::fabs(double(w[i]) * xr[i]);
      }
      if (quantized_acts(m.type)) {
        for (int64_t b = 0; b < m.cols; b += 32) {
          double amax = 0.0, wsum = 0.0;
          for (int64_t i = b; i < b + 32; ++i) {
            amax = std::max(amax, std::fabs(double(xr[i])));
            wsum += std::fabs(double(w[i]));
          }
          qerr += amax / 254.0 * wsum;
        }
      }
      const double bound = qerr + 1e-5 * mag + 1e-30;
      const double err = std::fabs(double(y[static_cast<size_t>(r * m.rows + o)]) - ref);
      ASSERT_LE(err, bound) << what << " row " << r << " out " << o << " ref " << ref;
      worst_ratio = std::max(worst_ratio, err / bound);
    }
  }
  if (quantized_acts(m.type) && m.cols >= 128) {  // over many blocks random errors partly cancel
    EXPECT_LT(worst_ratio, 0.5) << what;
  }
}

std::string name_of(TensorType t, IsaLevel l) {
  return std::string(tensor_type_name(t)) + "/" + std::string(backend::cpu::isa_name(l));
}

bool bits_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(CpuMatmul, FeatureDetectionAndLimits) {
  using namespace backend::cpu;
  EXPECT_EQ(parse_isa("AVX2"), IsaLevel::Avx2);
  EXPECT_EQ(parse_isa("scalar"), IsaLevel::Scalar);
  EXPECT_EQ(parse_isa("avx512"), IsaLevel::Avx512);
  EXPECT_FALSE(parse_isa("amx").has_value());
  const IsaLevel before = active_isa();
  set_isa_limit(IsaLevel::Scalar);
  EXPECT_EQ(active_isa(), IsaLevel::Scalar);
  set_isa_limit(std::nullopt);
  EXPECT_EQ(active_isa(), before);
  const CpuFeatures& f = cpu_features();
  if (detected_isa() == IsaLevel::Avx512) {
    EXPECT_TRUE(f.os_zmm && f.avx512vnni);
  }
  std::printf("detected ISA: %s (avx512_bf16 %d)\n", std::string(isa_name(detected_isa())).c_str(), f.avx512bf16);
}

TEST(CpuMatmul, EveryTypeAndLevelMatchesReference) {
  for (TensorType t : kTypes) {
    const int64_t cols = (t >= TensorType::Q2_K && t <= TensorType::Q6_K) ? 512 : 160;
    const Matrix m = make_weights(t, 19, cols, 1234u + static_cast<uint32_t>(t));
    const int64_t rows = 6;
    const auto x = make_acts(rows, cols, 99);
    std::vector<float> first;
    for (IsaLevel l : levels()) {
      const auto y = run(m, x, rows, 2, l);
      check_against_reference(m, x, rows, y, name_of(t, l));
      // Every level computes the same lanes in the same order: the same bits.
      if (first.empty()) {
        first = y;
      } else {
        EXPECT_TRUE(bits_equal(first, y)) << name_of(t, l) << " differs from scalar";
      }
    }
  }
}

TEST(CpuMatmul, RowsTilesAndThreadsAreBitwiseInvariant) {
  for (TensorType t : kTypes) {
    const int64_t cols = (t >= TensorType::Q2_K && t <= TensorType::Q6_K) ? 256 : 96;
    const Matrix m = make_weights(t, 101, cols, 77u + static_cast<uint32_t>(t));  // > 64K MACs: really split across threads
    const int64_t rows = 11;  // tiles of 4, 4, 3
    const auto x = make_acts(rows, cols, 5);
    for (IsaLevel l : levels()) {
      const auto all = run(m, x, rows, 1, l);
      for (unsigned threads : {2u, 3u}) EXPECT_TRUE(bits_equal(all, run(m, x, rows, threads, l))) << name_of(t, l);
      for (int64_t r = 0; r < rows; ++r) {  // each row alone, and the first r+1 rows together
        const std::vector<float> xr(x.begin() + r * cols, x.begin() + (r + 1) * cols);
        const auto one = run(m, xr, 1, 2, l);
        ASSERT_EQ(std::memcmp(one.data(), all.data() + r * m.rows, sizeof(float) * m.rows), 0)
            << name_of(t, l) << " row " << r << " alone";
        const auto prefix = run(m, x, r + 1, 3, l);
        ASSERT_EQ(std::memcmp(prefix.data(), all.data(), prefix.size() * sizeof(float)), 0)
            << name_of(t, l) << " first " << r + 1 << " rows";
      }
    }
  }
}

TEST(CpuMatmul, OddShapes) {
  for (TensorType t : kTypes) {
    const int64_t block = (t >= TensorType::Q2_K && t <= TensorType::Q6_K) ? 256 : (quantized_acts(t) ? 32 : 1);
    std::vector<int64_t> col_options = {block == 1 ? 32 : block};
    if (block == 1) col_options.insert(col_options.end(), {1, 7, 16, 40, 81});  // tails of the float kernels
    for (int64_t cols : col_options) {
      for (int64_t wrows : {1, 5, 17}) {
        const Matrix m = make_weights(t, wrows, cols, 31u + static_cast<uint32_t>(wrows));
        for (int64_t rows : {1, 2, 5}) {
          const auto x = make_acts(rows, cols, 8);
          for (IsaLevel l : levels()) {
            const auto y = run(m, x, rows, 2, l);
            check_against_reference(m, x, rows, y, name_of(t, l) + " cols " + std::to_string(cols));
            EXPECT_TRUE(bits_equal(y, run(m, x, rows, 1, IsaLevel::Scalar))) << name_of(t, l) << " cols " << cols;
          }
        }
      }
    }
  }
}

TEST(CpuMatmul, F32IsTheReferenceDot) {
  // F32 weights keep llama2.c's rounding (stories260K must reproduce run.c): the reference dot_f32.
  for (int64_t cols : {1, 15, 16, 17, 64, 100}) {
    const Matrix m = make_weights(TensorType::F32, 9, cols, 3);
    const auto x = make_acts(5, cols, 4);
    for (IsaLevel l : levels()) {
      const auto y = run(m, x, 5, 2, l);
      for (int64_t r = 0; r < 5; ++r) {
        for (int64_t o = 0; o < m.rows; ++o) {
          const float ref = backend::cpu::dot_f32(x.data() + r * cols, m.deq.data() + o * cols, cols);
          ASSERT_EQ(std::bit_cast<uint32_t>(ref), std::bit_cast<uint32_t>(y[static_cast<size_t>(r * m.rows + o)]))
              << isa_name(l) << " cols " << cols;
        }
      }
    }
  }
}

TEST(CpuMatmul, VectorisedDotAndAxpyAreTheReference) {
  // Attention and RMSNorm use these: every level must give the bits of the portable code.
  std::mt19937 rng(21);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (int64_t n : {1, 7, 16, 31, 64, 100, 896}) {
    std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n)), y0(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) a[i] = dist(rng), b[i] = dist(rng), y0[i] = dist(rng);
    const float ref = backend::cpu::dot_f32(a.data(), b.data(), n);
    std::vector<float> yref = y0;
    backend::cpu::axpy_f32(0.37f, a.data(), yref.data(), n);
    for (IsaLevel l : levels()) {
      EXPECT_EQ(std::bit_cast<uint32_t>(backend::cpu::dot_f32_for(l)(a.data(), b.data(), n)), std::bit_cast<uint32_t>(ref))
          << isa_name(l) << " n " << n;
      std::vector<float> y = y0;
      backend::cpu::axpy_f32_for(l)(0.37f, a.data(), y.data(), n);
      EXPECT_TRUE(bits_equal(y, yref)) << isa_name(l) << " n " << n;
    }
  }
}

TEST(CpuMatmul, BiasIsAddedAfterTheDot) {
  const Matrix m = make_weights(TensorType::Q8_0, 9, 64, 5);
  const auto x = make_acts(3, 64, 6);
  std::vector<float> bias(9);
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.25f * float(i) - 1.0f;
  for (IsaLevel l : levels()) {
    const auto plain = run(m, x, 3, 2, l);
    const auto biased = run(m, x, 3, 2, l, &bias);
    for (size_t i = 0; i < plain.size(); ++i) EXPECT_EQ(biased[i], plain[i] + bias[i % 9]);
  }
}

TEST(CpuMatmul, ActivationQuantization) {
  float x[32];
  for (int i = 0; i < 32; ++i) x[i] = float(i - 16) * 0.5f;
  int8_t q[32];
  float d;
  int16_t sums[2];
  backend::cpu::quantize_act_block(x, q, &d, sums);
  EXPECT_FLOAT_EQ(d, 8.0f / 127.0f);
  EXPECT_EQ(q[0], -127);
  int s0 = 0, s1 = 0;
  for (int i = 0; i < 32; ++i) {
    EXPECT_LE(std::fabs(q[i] * d - x[i]), d / 2 * 1.0001f);
    (i < 16 ? s0 : s1) += q[i];
  }
  EXPECT_EQ(sums[0], s0);
  EXPECT_EQ(sums[1], s1);
  // The AVX2 quantizer writes the same bytes, ties, zeros, NaN and infinities included.
  if (backend::cpu::detected_isa() >= IsaLevel::Avx2) {
    std::mt19937 rng(11);
    std::normal_distribution<float> dist(0.0f, 3.0f);
    for (int trial = 0; trial < 200; ++trial) {
      float y[32];
      for (float& v : y) v = dist(rng);
      if (trial % 5 == 1) for (int i = 0; i < 32; ++i) y[i] = float(i - 16) * 0.25f;  // exact ties
      if (trial % 5 == 2) y[trial % 32] = NAN;
      if (trial % 5 == 3) y[trial % 32] = -INFINITY;
      if (trial % 5 == 4) for (float& v : y) v = 0.0f;
      int8_t qa[32], qb[32];
      float da, db;
      int16_t sa[2], sb[2];
      backend::cpu::quantize_act_block(y, qa, &da, sa);
      backend::cpu::quantize_act_block_avx2(y, qb, &db, sb);
      ASSERT_EQ(std::memcmp(qa, qb, 32), 0) << "trial " << trial;
      ASSERT_EQ(std::bit_cast<uint32_t>(da), std::bit_cast<uint32_t>(db)) << "trial " << trial;
      ASSERT_EQ(sa[0], sb[0]);
      ASSERT_EQ(sa[1], sb[1]);
    }
  }
  float zeros[32] = {};
  backend::cpu::quantize_act_block(zeros, q, &d, sums);
  EXPECT_EQ(d, 0.0f);
  EXPECT_EQ(sums[0], 0);
}


// Prefill-sized row counts take another path (weight rows decoded once per block, then read by every
// tile): still each row's bits alone, and the scalar reference's.
TEST(CpuMatmul, ManyRowsMatchOneRowAndScalar) {
  for (TensorType t : kTypes) {
    const int64_t cols = (t >= TensorType::Q2_K && t <= TensorType::Q6_K) ? 512 : 160;
    const Matrix m = make_weights(t, 37, cols, 400u + static_cast<uint32_t>(t));
    const int64_t rows = 45;
    const auto x = make_acts(rows, cols, 17);
    const auto scalar = run(m, x, rows, 1, IsaLevel::Scalar);
    for (IsaLevel l : levels()) {
      const auto all = run(m, x, rows, 2, l);
      EXPECT_TRUE(bits_equal(all, scalar)) << name_of(t, l);
      for (int64_t r = 0; r < rows; r += 11) {
        const std::vector<float> xr(x.begin() + r * cols, x.begin() + (r + 1) * cols);
        const auto one = run(m, xr, 1, 1, l);
        EXPECT_EQ(std::memcmp(one.data(), all.data() + r * m.rows, sizeof(float) * m.rows), 0)
            << name_of(t, l) << " row " << r;
      }
    }
  }
}

// run_many (the CPU backend's matmul_multi / matmul_swiglu): every output bitwise what run() gives,
// for mixed types sharing one activation format, biases, 1 and many rows, 1–3 threads.
TEST(CpuMatmul, FusedMultiAndSwigluAreBitwiseTheUnfusedOps) {
  using backend::cpu::MatmulJob;
  const std::vector<std::vector<TensorType>> groups = {
      {TensorType::F16, TensorType::F16, TensorType::F16}, {TensorType::Q5_0, TensorType::Q5_0, TensorType::Q8_0},
      {TensorType::Q4_K, TensorType::Q6_K, TensorType::Q4_K}, {TensorType::F32, TensorType::F32, TensorType::F32}};
  for (const auto& types : groups) {
    const int64_t cols = 256;
    const std::vector<int64_t> wrows = {40, 17, 17};  // Q, K, V-like: unequal, not multiples of 16
    std::vector<Matrix> ms;
    for (size_t i = 0; i < types.size(); ++i) ms.push_back(make_weights(types[i], wrows[i], cols, 50u + uint32_t(i)));
    std::vector<float> bias(64);
    for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.01f * float(i) - 0.2f;
    for (int64_t rows : {1, 11, 70}) {
      const auto x = make_acts(rows, cols, 9);
      for (IsaLevel l : levels()) {
        std::vector<Weight> ws;
        for (const auto& m : ms) ws.push_back(m.weight());
        const Weight* wp[] = {&ws[0], &ws[1], &ws[2]};
        ASSERT_TRUE(CpuMatmul::can_share(wp, l)) << name_of(types[0], l);
        for (unsigned threads : {1u, 2u, 3u}) {
          ThreadPool pool(threads);
          CpuMatmul mm;
          std::vector<std::vector<float>> outs;
          std::vector<MatmulJob> jobs;
          for (size_t i = 0; i < ms.size(); ++i) outs.emplace_back(static_cast<size_t>(rows * ms[i].rows), -1.0f);
          for (size_t i = 0; i < ms.size(); ++i) {
            jobs.push_back({&ws[i], Tensor{outs[i].data(), rows, ms[i].rows}, i == 1 ? bias.data() : nullptr});
          }
          std::vector<float> xin(x);
          mm.run_many(pool, Tensor{xin.data(), rows, cols}, jobs, l);
          for (size_t i = 0; i < ms.size(); ++i) {
            EXPECT_TRUE(bits_equal(outs[i], run(ms[i], x, rows, 2, l, i == 1 ? &bias : nullptr)))
                << name_of(types[i], l) << " job " << i << " rows " << rows << " threads " << threads;
          }
          // gate = ms[1], up = ms[2] (equal shapes): gate.out = swiglu(gate, up), up.out = up.
          std::vector<float> g(static_cast<size_t>(rows * 17), -1.0f), u(g.size(), -1.0f);
          const MatmulJob gu[] = {{&ws[1], Tensor{g.data(), rows, 17}}, {&ws[2], Tensor{u.data(), rows, 17}}};
          mm.run_many(pool, Tensor{xin.data(), rows, cols}, gu, l, /*swiglu=*/true);
          const auto g_ref = run(ms[1], x, rows, 1, l), u_ref = run(ms[2], x, rows, 1, l);
          std::vector<float> sw(g_ref.size());
          backend::cpu::swiglu_f32(g_ref.data(), u_ref.data(), sw.data(), static_cast<int64_t>(sw.size()));
          EXPECT_TRUE(bits_equal(u, u_ref)) << name_of(types[2], l) << " up, rows " << rows;
          EXPECT_TRUE(bits_equal(g, sw)) << name_of(types[1], l) << " swiglu, rows " << rows << " threads " << threads;
        }
      }
    }
  }
  // Different activation formats cannot share one dispatch.
  const Matrix a = make_weights(TensorType::F16, 4, 64, 1), b = make_weights(TensorType::Q8_0, 4, 64, 2);
  const Weight wa = a.weight(), wb = b.weight();
  const Weight* mixed[] = {&wa, &wb};
  EXPECT_FALSE(CpuMatmul::can_share(mixed, backend::cpu::detected_isa()));
}

}  // namespace
}  // namespace vellum
