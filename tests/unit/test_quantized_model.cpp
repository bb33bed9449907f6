// The same weights in F16, Q8_0 and Q4_K_M give logits within the error each format implies.
// The synthetic generator draws each row's values from (seed, tensor, row), so the three files hold
// one set of weights in three encodings; the F32 file is the reference.

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "backend/cpu/cpu_backend.h"
#include "model/synthetic_model.h"
#include "quant/quant.h"
#include "model/transformer.h"

namespace vellum::model {
namespace {

namespace fs = std::filesystem;

std::vector<float> logits_for(const std::string& type) {
  SynthOptions o;
  o.shape = synthetic_preset("tiny");
  o.shape.vocab = 1000;
  o.type = type;
  o.seed = 11;
  o.verbose = false;
  o.output_path = (fs::temp_directory_path() / ("vellum_q_" + std::to_string(::getpid()) + "_" + type + ".gguf")).string();
  write_synthetic_model(o);
  const auto f = gguf::GgufFile::open(o.output_path);
  backend::CpuBackend be(2);
  Transformer t(f, be);
  be.init_kv(t.kv_layout(16), 4);
  engine::Batch b;
  std::vector<int32_t> prompt;
  for (int i = 0; i < 24; ++i) prompt.push_back((i * 131 + 7) % 1000);
  b.add_sequence(prompt, 0, {0, 1}, engine::Batch::Logits::All);
  auto logits = t.forward(b);
  fs::remove(o.output_path);
  return logits;
}

// ||a - b|| / ||b|| over all logits.
double relative_rms(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(b[i]) * b[i];
  }
  return std::sqrt(num / den);
}

// Relative RMS error that `type` itself introduces on weights like the model's (uniform, std 0.02).
double weight_error(TensorType type) {
  std::vector<float> w(256 * 64), back(w.size());
  uint64_t state = 3;
  for (auto& x : w) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x = 0.02f * 1.7320508f * (static_cast<float>(state >> 40) / float(1 << 24) * 2.0f - 1.0f);
  }
  std::vector<uint8_t> q(row_bytes(type, w.size()));
  quant::quantize_row(type, w.data(), q.data(), static_cast<int64_t>(w.size()));
  quant::dequantize_row(type, q.data(), back.data(), static_cast<int64_t>(w.size()));
  return relative_rms(back, w);
}

TEST(QuantizedModel, LogitsWithinFormatError) {
  const auto f32 = logits_for("F32");
  // Bound: 4× the error one matmul adds. Every quantized matrix on the path (embedding, Q/K/V/O,
  // gate/up/down of two layers, output) adds an independent error of that size, so the logits carry
  // about sqrt(number of matrices) ≈ 3× it; a wrong kernel gives errors of order 1. For quantized
  // weights the CPU backend also quantizes activations to 8 bits (as llama.cpp does), an independent
  // error of the Q8_0 size: one matmul's error is sqrt(weight² + activation²).
  struct Case {
    const char* type;
    TensorType weights;  // the format most of its weights use
  };
  for (const Case c : {Case{"F16", TensorType::F16}, Case{"Q8_0", TensorType::Q8_0}, Case{"Q6_K", TensorType::Q6_K},
                       Case{"Q4_K_M", TensorType::Q4_K}}) {
    const auto q = logits_for(c.type);
    ASSERT_EQ(q.size(), f32.size());
    const double w = weight_error(c.weights);
    const double act = c.weights == TensorType::F16 ? 0.0 : weight_error(TensorType::Q8_0);
    const double err = relative_rms(q, f32), bound = 4.0 * std::sqrt(w * w + act * act);
    EXPECT_LT(err, bound) << c.type;
    EXPECT_GT(err, 0.0) << c.type << ": identical to F32, so the quantized weights were not used";
    std::printf("%s: relative RMS logit error vs F32 = %.3g (bound %.3g)\n", c.type, err, bound);
  }
}

}  // namespace
}  // namespace vellum::model
