// quant/: bit-exact against the vectors tools/gen_quant_vectors.py wrote (tests/data/quant/).
//  - dequantization of every supported type: against gguf.quants.dequantize (the `gguf` package);
//  - quantization of F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0: against gguf.quants.quantize;
//  - quantization of Q2_K..Q6_K: gguf-py has no K-quant quantizer, so against tools/kquant_ref.py, a
//    separate Python transcription of ggml's quantize_row_*_ref whose bytes the generator checks
//    through gguf.quants.dequantize. Round-trip error bounds back this up for every type, and
//    idempotence (quantize(dequantize(q)) == q) for the types whose quantizer has it: the K-quant
//    scale searches do not (a grid point can re-fit to a slightly different grid), so not for them.

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/tensor_type.h"
#include "quant/blocks.h"
#include "quant/quant.h"
#include "quant_test_data.h"

namespace vellum {
namespace {

using quant::dequantize_row;
using quant::quantize_row;
using test::bits_str;
using test::floats_from_bits;
using test::from_hex;
using test::load_quant_vectors;
using test::to_hex;

const std::vector<TensorType> kSupported = {
    TensorType::F32,  TensorType::F16,  TensorType::BF16, TensorType::Q4_0, TensorType::Q4_1,
    TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0, TensorType::Q2_K, TensorType::Q3_K,
    TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K,
};

bool is_k_quant(TensorType t) { return traits(t).block_elements == uint32_t(quant::QK_K); }

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

nlohmann::json vectors_for(TensorType t) { return load_quant_vectors(lower(tensor_type_name(t)) + ".json"); }

// Bit-exact comparison; where the case says NaN payloads are the hardware's choice (inf * 0), any
// NaN matches a NaN.
void expect_same_floats(const std::vector<float>& want, const float* got, bool nan_payload_exact,
                        const std::string& what) {
  int failures = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const bool same = std::bit_cast<uint32_t>(want[i]) == std::bit_cast<uint32_t>(got[i]) ||
                      (!nan_payload_exact && std::isnan(want[i]) && std::isnan(got[i]));
    if (!same && ++failures <= 10) {
      ADD_FAILURE() << what << " element " << i << ": expected " << bits_str(want[i]) << " (" << want[i]
                    << "), got " << bits_str(got[i]) << " (" << got[i] << ")";
    }
  }
  EXPECT_EQ(failures, 0) << what;
}

class QuantVectors : public ::testing::TestWithParam<TensorType> {};

TEST_P(QuantVectors, FileDescribesType) {
  const TensorType t = GetParam();
  const auto doc = vectors_for(t);
  EXPECT_EQ(doc.at("type").get<std::string>(), tensor_type_name(t));
  EXPECT_EQ(doc.at("type_id").get<uint32_t>(), static_cast<uint32_t>(t));
  EXPECT_EQ(doc.at("block_elements").get<uint32_t>(), traits(t).block_elements);
  EXPECT_EQ(doc.at("block_bytes").get<uint32_t>(), traits(t).block_bytes);
  EXPECT_TRUE(quant::can_dequantize(t));
  EXPECT_TRUE(quant::can_quantize(t));
}

TEST_P(QuantVectors, DequantizeMatchesGguf) {
  const TensorType t = GetParam();
  const auto doc = vectors_for(t);
  const auto& cases = doc.at("dequantize");
  ASSERT_GE(cases.size(), traits(t).block_elements > 1 ? 6u : 1u);  // random + the edge cases
  for (const auto& c : cases) {
    const std::string what = std::string(tensor_type_name(t)) + " dequantize " + c.at("name").get<std::string>();
    const auto bytes = from_hex(c.at("blocks").get<std::string>());
    const auto want = floats_from_bits(c.at("expected"));
    ASSERT_FALSE(want.empty()) << what;
    ASSERT_EQ(row_bytes(t, want.size()), bytes.size()) << what;
    const bool nan_exact = c.at("nan_payload_exact").get<bool>();

    std::vector<float> got(want.size(), -1.0f);
    dequantize_row(t, bytes.data(), got.data(), int64_t(want.size()));
    expect_same_floats(want, got.data(), nan_exact, what);

    // Same again from an odd address: tensor data in a file need not be aligned for our structs.
    std::vector<uint8_t> shifted(bytes.size() + 1);
    std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
    std::fill(got.begin(), got.end(), -1.0f);
    dequantize_row(t, shifted.data() + 1, got.data(), int64_t(want.size()));
    expect_same_floats(want, got.data(), nan_exact, what + " (unaligned)");
  }
}

TEST_P(QuantVectors, QuantizeMatchesReference) {
  const TensorType t = GetParam();
  const auto doc = vectors_for(t);
  const auto& cases = doc.at("quantize");
  ASSERT_GE(cases.size(), 5u);
  for (const auto& c : cases) {
    const std::string what = std::string(tensor_type_name(t)) + " quantize " + c.at("name").get<std::string>() +
                             " (reference: " + c.at("reference").get<std::string>() + ")";
    const auto x = floats_from_bits(c.at("input"));
    const auto want = from_hex(c.at("expected").get<std::string>());
    ASSERT_EQ(row_bytes(t, x.size()), want.size()) << what;

    std::vector<uint8_t> got(want.size() + 1, 0xAA);
    quantize_row(t, x.data(), got.data() + 1, int64_t(x.size()));  // odd address on purpose
    const size_t bb = traits(t).block_bytes;
    for (size_t off = 0; off < want.size(); off += bb) {
      EXPECT_EQ(to_hex(got.data() + 1 + off, bb), to_hex(want.data() + off, bb)) << what << " block " << off / bb;
    }
    EXPECT_EQ(got[0], 0xAA) << what << ": wrote before the buffer";
  }
}

// Worst acceptable error of a quantize -> dequantize round trip, as a fraction of the block's largest
// magnitude (max |x|; of |x| itself for the plain float types). Legacy types: half a step, plus the
// clamped top level (a full step) for the symmetric ones, plus f16 rounding of the scale. K-quants:
// about twice the worst case measured on the vectors; their scales are themselves 4..8-bit numbers.
double roundtrip_bound(TensorType t) {
  switch (t) {
    case TensorType::F32: return 0.0;
    case TensorType::F16: return 1.0 / 2048;  // relative, see below
    case TensorType::BF16: return 1.0 / 256;
    case TensorType::Q8_0: return 0.6 / 127;
    case TensorType::Q4_0: return 1.05 / 8;
    case TensorType::Q5_0: return 1.05 / 16;
    case TensorType::Q4_1: return 2 * 0.55 / 15;  // (max - min) <= 2 max|x|
    case TensorType::Q5_1: return 2 * 0.55 / 31;
    case TensorType::Q2_K: return 0.5;
    case TensorType::Q3_K: return 0.4;
    case TensorType::Q4_K: return 0.12;
    case TensorType::Q5_K: return 0.07;
    case TensorType::Q6_K: return 0.03;
    default: return 0.0;
  }
}

TEST_P(QuantVectors, RoundTrip) {
  const TensorType t = GetParam();
  const auto doc = vectors_for(t);
  const auto& cases = doc.at("quantize");
  ASSERT_GE(cases.size(), 5u);
  const int64_t block = traits(t).block_elements;
  // Absolute slack for scales that underflow f16 (the "tiny" case, |x| ~ 1e-6): there the block's
  // step is the f16 subnormal grid, not a fraction of max|x|. Plain F16 rounds to 2^-24 steps there.
  const double slack = t == TensorType::F16 ? 0x1p-25 : (block == 1 ? 0.0 : 1e-5);
  const double bound = roundtrip_bound(t);
  double worst = 0;
  for (const auto& c : cases) {
    const std::string what = std::string(tensor_type_name(t)) + " round trip " + c.at("name").get<std::string>();
    const auto x = floats_from_bits(c.at("input"));
    const int64_t n = int64_t(x.size());
    ASSERT_EQ(n % block, 0) << what;

    std::vector<uint8_t> q(row_bytes(t, uint64_t(n)));
    std::vector<float> y(size_t(n), 0.f);
    quantize_row(t, x.data(), q.data(), n);
    dequantize_row(t, q.data(), y.data(), n);

    const int64_t group = std::max<int64_t>(block, 32);
    for (int64_t b0 = 0; b0 < n; b0 += group) {
      double amax = 0;
      for (int64_t i = b0; i < b0 + group; ++i) amax = std::max(amax, double(std::fabs(x[size_t(i)])));
      for (int64_t i = b0; i < b0 + group; ++i) {
        const double err = std::fabs(double(x[size_t(i)]) - double(y[size_t(i)]));
        // Plain float types round each element on its own: bound relative to the element.
        const double ref = block == 1 ? std::fabs(double(x[size_t(i)])) : amax;
        if (ref > 1e-4) worst = std::max(worst, err / ref);
        ASSERT_LE(err, bound * ref + slack) << what << " element " << i << ": " << x[size_t(i)] << " -> " << y[size_t(i)];
      }
    }

    // Idempotence: values on the quantizer's own grid quantize back to the same bytes (and so to the
    // same values). Not where the scale underflowed f16 to zero ("tiny"): the codes are then moot.
    if (!is_k_quant(t)) {
      std::vector<uint8_t> q2(q.size());
      std::vector<float> y2(static_cast<size_t>(n));
      quantize_row(t, y.data(), q2.data(), n);
      dequantize_row(t, q2.data(), y2.data(), n);
      EXPECT_TRUE(y2 == y) << what << ": values not idempotent";  // == on floats: -0 and 0 agree
      if (c.at("name").get<std::string>() != "tiny") {
        EXPECT_EQ(to_hex(q2.data(), q2.size()), to_hex(q.data(), q.size())) << what << ": quantize(dequantize(q)) != q";
      }
    }
  }
  RecordProperty("worst_relative_error", std::to_string(worst));
  std::printf("[ info     ] %s worst round-trip error %.4g of max|x| (bound %.4g)\n",
              std::string(tensor_type_name(t)).c_str(), worst, bound);
}

INSTANTIATE_TEST_SUITE_P(Quant, QuantVectors, ::testing::ValuesIn(kSupported),
                         [](const ::testing::TestParamInfo<TensorType>& info) {
                           return std::string(tensor_type_name(info.param));
                         });

// ---- hand-made blocks: independent of the generated vectors ----------------------------------------

TEST(QuantBlocks, Q4_0HandMade) {
  // d = 0.5 (f16 0x3800); low nibbles 0..15 then high nibbles 15..0.
  uint8_t raw[18] = {0x00, 0x38};
  for (int j = 0; j < 16; ++j) raw[2 + j] = uint8_t(j | ((15 - j) << 4));
  float y[32];
  dequantize_row(TensorType::Q4_0, raw, y, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 0.5f * float(j - 8)) << j;
    EXPECT_EQ(y[j + 16], 0.5f * float(7 - j)) << j;
  }
}

TEST(QuantBlocks, Q8_0QuantizeHandMade) {
  // amax 127 makes d exactly 1, so the levels are the inputs rounded half away from zero.
  float x[32];
  for (int j = 0; j < 32; ++j) x[j] = float(j) - 16.5f;
  x[31] = 127.f;
  uint8_t q[34];
  quantize_row(TensorType::Q8_0, x, q, 32);
  EXPECT_EQ(q[0], 0x00);
  EXPECT_EQ(q[1], 0x3c);  // d = 1.0
  for (int j = 0; j < 31; ++j) EXPECT_EQ(int8_t(q[2 + j]), int(std::round(x[j]))) << j;
  EXPECT_EQ(int8_t(q[2 + 0]), -17);  // -16.5 -> -17: away from zero
  EXPECT_EQ(int8_t(q[33]), 127);
}

// llama.cpp's tests/test-quantize-fns.cpp check: quantize 0.1 + 2 cos(i) (4096 values), dequantize,
// and the error sqrt(sum (x - y)^2) / n must stay under its thresholds.
TEST(QuantBlocks, LlamaCppQuantizeFnsThresholds) {
  constexpr int n = 32 * 128;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[size_t(i)] = 0.1f + 2 * std::cos(float(i));
  for (TensorType t : kSupported) {
    const double max_error = t == TensorType::Q2_K ? 0.0075 : t == TensorType::Q3_K ? 0.0040 : 0.002;
    std::vector<uint8_t> q(row_bytes(t, n));
    quantize_row(t, x.data(), q.data(), n);
    dequantize_row(t, q.data(), y.data(), n);
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += (double(x[size_t(i)]) - y[size_t(i)]) * (double(x[size_t(i)]) - y[size_t(i)]);
    EXPECT_LT(std::sqrt(sum) / n, max_error) << tensor_type_name(t);
  }
}

// An outside spot check of Q3_K quantization: huggingface/candle's quantized_tests.rs (quantize_q3k)
// publishes these values, rounded to 3 decimals, for its port of ggml's Q3_K reference quantizer (whose
// make_q3_quants ggml has not changed since). Candle's Q4_K/Q5_K/Q6_K ports follow older ggml
// searches, so their published values do not apply to ours.
TEST(QuantBlocks, Q3_KMatchesCandleSpotValues) {
  constexpr int n = 1024;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[size_t(i)] = (float(i) - 512.f) * 0.5f / 512.f;
  std::vector<uint8_t> q(row_bytes(TensorType::Q3_K, n));
  quantize_row(TensorType::Q3_K, x.data(), q.data(), n);
  dequantize_row(TensorType::Q3_K, q.data(), y.data(), n);
  const int at[] = {0, 128, 256, 512, 800, 1023};
  const double want[] = {-0.493, -0.37, -0.243, 0.0, 0.292, 0.492};
  for (int k = 0; k < 6; ++k) {
    EXPECT_EQ(std::round(1000.0 * y[size_t(at[k])]) / 1000.0, want[k]) << "element " << at[k];
  }
}

TEST(QuantBlocks, SizesMatchTensorTypeTable) {
  EXPECT_EQ(sizeof(quant::BlockQ4_0), traits(TensorType::Q4_0).block_bytes);
  EXPECT_EQ(sizeof(quant::BlockQ4_1), traits(TensorType::Q4_1).block_bytes);
  EXPECT_EQ(sizeof(quant::BlockQ5_0), traits(TensorType::Q5_0).block_bytes);
  EXPECT_EQ(sizeof(quant::BlockQ5_1), traits(TensorType::Q5_1).block_bytes);
  EXPECT_EQ(sizeof(quant::BlockQ8_0), traits(TensorType::Q8_0).block_bytes);
  EXPECT_EQ(sizeof(quant::BlockQ2_K), traits(TensorType::Q2_K).block_bytes);
  EXPECT_EQ(sizeof(quant::BlockQ3_K), traits(TensorType::Q3_K).block_bytes);
  EXPECT_EQ(sizeof(quant::BlockQ4_K), traits(TensorType::Q4_K).block_bytes);
  EXPECT_EQ(sizeof(quant::BlockQ5_K), traits(TensorType::Q5_K).block_bytes);
  EXPECT_EQ(sizeof(quant::BlockQ6_K), traits(TensorType::Q6_K).block_bytes);
  EXPECT_EQ(uint32_t(quant::QK_K), traits(TensorType::Q4_K).block_elements);
}

// ---- errors --------------------------------------------------------------------------------------

TEST(QuantErrors, LengthNotAMultipleOfTheBlock) {
  std::vector<float> f(1024, 0.5f);
  std::vector<uint8_t> bytes(4096, 0);
  for (TensorType t : kSupported) {
    const int64_t block = traits(t).block_elements;
    if (block == 1) continue;
    EXPECT_THROW(dequantize_row(t, bytes.data(), f.data(), block + 1), Error) << tensor_type_name(t);
    EXPECT_THROW(quantize_row(t, f.data(), bytes.data(), block - 1), Error) << tensor_type_name(t);
    EXPECT_THROW(quantize_row(t, f.data(), bytes.data(), 1), Error) << tensor_type_name(t);
  }
}

TEST(QuantErrors, NegativeLengthAndNullBuffers) {
  std::vector<float> f(256, 0.5f);
  std::vector<uint8_t> bytes(1024, 0);
  for (TensorType t : kSupported) {
    EXPECT_THROW(dequantize_row(t, bytes.data(), f.data(), -int64_t(traits(t).block_elements)), Error);
    EXPECT_THROW(quantize_row(t, f.data(), bytes.data(), -int64_t(traits(t).block_elements)), Error);
    EXPECT_THROW(dequantize_row(t, nullptr, f.data(), traits(t).block_elements), Error);
    EXPECT_THROW(quantize_row(t, f.data(), nullptr, traits(t).block_elements), Error);
    // Zero elements is a valid, empty row.
    EXPECT_NO_THROW(dequantize_row(t, nullptr, nullptr, 0));
    EXPECT_NO_THROW(quantize_row(t, nullptr, nullptr, 0));
  }
}

TEST(QuantErrors, UnsupportedTypesThrow) {
  std::vector<float> f(256, 0.5f);
  std::vector<uint8_t> bytes(1024, 0);
  const TensorType unsupported[] = {TensorType::Q8_1,  TensorType::Q8_K,  TensorType::IQ2_XXS, TensorType::IQ4_NL,
                                    TensorType::IQ4_XS, TensorType::I8,   TensorType::I32,     TensorType::F64,
                                    TensorType::TQ1_0, TensorType::MXFP4, static_cast<TensorType>(4),
                                    static_cast<TensorType>(12345)};
  for (TensorType t : unsupported) {
    EXPECT_FALSE(quant::can_dequantize(t)) << static_cast<uint32_t>(t);
    EXPECT_FALSE(quant::can_quantize(t)) << static_cast<uint32_t>(t);
    EXPECT_THROW(dequantize_row(t, bytes.data(), f.data(), 256), Error) << static_cast<uint32_t>(t);
    EXPECT_THROW(quantize_row(t, f.data(), bytes.data(), 256), Error) << static_cast<uint32_t>(t);
  }
}

TEST(QuantErrors, MessageNamesTheProblem) {
  std::vector<float> f(64, 0.f);
  std::vector<uint8_t> bytes(64, 0);
  try {
    dequantize_row(TensorType::Q4_K, bytes.data(), f.data(), 33);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Q4_K"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("256"), std::string::npos) << e.what();
  }
  try {
    quantize_row(TensorType::IQ2_XXS, f.data(), bytes.data(), 256);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("IQ2_XXS"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vellum
