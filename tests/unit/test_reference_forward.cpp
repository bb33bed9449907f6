// The fast CPU forward (paged KV, ragged batches, chunked prefill, SIMD matmuls) against the plain
// float64 forward of reference_forward.h, on small random models of each architecture and RoPE
// variant, with weights in F32, F16, BF16 and quantized formats.
//
// Tolerances (relative to the RMS of the reference logits):
// - F32 / F16 / BF16 weights: the fast path computes in float32 with exactly the reference's weights
//   (F16/BF16 are widened exactly), so it differs only by float32 rounding: unit roundoff 6e-8,
//   dot products of ≤ 512 terms (random-walk growth ≈ sqrt(512)·u ≈ 1.4e-6 each), a few dozen of
//   them in series. We require max |error| ≤ kFloatTol = 2e-5 (measured: about 1e-6).
// - Quantized weights: the reference uses the same dequantized weights, so the only modelled
//   difference is that the fast path rounds every matmul input to 8 bits per block of 32
//   (d = amax/127, as llama.cpp's Q8_0/Q8_K activations). That rounding is a uniform error in ±d/2,
//   relative squared size e_m² = Σ_b 32 d_b²/12 / Σ x² for matmul m, which the reference measures on
//   its own activations. Independent input errors pass through a random layer with their relative
//   size, so the logits are off by about sqrt(Σ_m e_m²) relative to their RMS. We require the RMS
//   error ≤ 3 × that (+ kFloatTol) and the max error ≤ 12 × that; a wrong block decoder, scale or
//   min gives errors of order 1.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_features.h"
#include "gguf/gguf_writer.h"
#include "model/transformer.h"
#include "quant/quant.h"
#include "reference_forward.h"

namespace vellum {
namespace {

namespace fs = std::filesystem;
using testref::RefConfig;

constexpr double kFloatTol = 2e-5;

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Writes a random model: matrices uniform with std `scale`/sqrt(fan-in) (so activations stay O(1)
// and attention is far from uniform), norm gains in [0.5, 1.5], biases of std 0.3. Matrices are
// stored as `type`, 1-D tensors as F32 (as converters do).
void write_model(const RefConfig& c, TensorType type, const std::string& path, uint64_t seed) {
  gguf::GgufWriter w;
  auto& md = w.metadata();
  const std::string a = c.arch;
  auto u32 = [](uint32_t v) { return gguf::Value::u32(v); };
  md.set("general.architecture", gguf::Value::string(a));
  md.set(a + ".vocab_size", u32(c.vocab));
  md.set(a + ".context_length", u32(c.context));
  md.set(a + ".embedding_length", u32(c.dim));
  md.set(a + ".feed_forward_length", u32(c.ffn));
  md.set(a + ".block_count", u32(c.layers));
  md.set(a + ".attention.head_count", u32(c.heads));
  md.set(a + ".attention.head_count_kv", u32(c.kv_heads));
  md.set(a + ".attention.key_length", u32(c.head_dim));
  md.set(a + ".rope.dimension_count", u32(c.rope_dims));
  md.set(a + ".rope.freq_base", gguf::Value::f32(static_cast<float>(c.rope_base)));
  md.set(a + ".attention.layer_norm_rms_epsilon", gguf::Value::f32(static_cast<float>(c.eps)));
  if (c.scaling != "none") {
    md.set(a + ".rope.scaling.type", gguf::Value::string(c.scaling));
    md.set(a + ".rope.scaling.factor", gguf::Value::f32(static_cast<float>(c.factor)));
    if (c.original_context) md.set(a + ".rope.scaling.original_context_length", u32(c.original_context));
  }
  uint64_t state = seed;
  auto uniform = [&] { return static_cast<double>(splitmix(state) >> 11) * 0x1.0p-53 * 2.0 - 1.0; };  // [-1, 1)
  auto add = [&](const std::string& name, uint64_t cols, uint64_t rows, TensorType t, auto value) {
    std::vector<float> v(cols * rows);
    for (auto& e : v) e = static_cast<float>(value());
    std::vector<uint8_t> bytes(row_bytes(t, cols) * rows);
    for (uint64_t r = 0; r < rows; ++r) {
      quant::quantize_row(t, v.data() + r * cols, bytes.data() + r * row_bytes(t, cols), static_cast<int64_t>(cols));
    }
    std::vector<uint64_t> shape{cols};
    if (rows > 1) shape.push_back(rows);
    w.add_tensor(name, t, shape, std::move(bytes));
  };
  auto matrix = [&](const std::string& name, uint64_t in, uint64_t out, double scale = 1.0) {
    const double half_width = scale / std::sqrt(double(in)) * std::sqrt(3.0);
    add(name, in, out, type, [&] { return half_width * uniform(); });
  };
  auto gain = [&](const std::string& name, uint64_t n) { add(name, n, 1, TensorType::F32, [&] { return 1.0 + 0.5 * uniform(); }); };
  auto bias = [&](const std::string& name, uint64_t n) { add(name, n, 1, TensorType::F32, [&] { return 0.3 * std::sqrt(3.0) * uniform(); }); };

  const uint64_t qd = uint64_t(c.heads) * c.head_dim, kvd = uint64_t(c.kv_heads) * c.head_dim;
  add("token_embd.weight", c.dim, c.vocab, type, [&] { return std::sqrt(3.0) * uniform(); });
  gain("output_norm.weight", c.dim);
  if (!c.tied) matrix("output.weight", c.dim, c.vocab, 3.0);
  if (c.freq_factors) {  // Llama 3's pattern: 1 for the fast rotations, growing to 8 for the slow ones
    uint32_t i = 0;
    const uint32_t half = c.rope_dims / 2;
    add("rope_freqs.weight", half, 1, TensorType::F32, [&] { return 1.0 + 7.0 * double(i++) / (half - 1); });
  }
  for (uint32_t l = 0; l < c.layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    gain(p + "attn_norm.weight", c.dim);
    matrix(p + "attn_q.weight", c.dim, qd, 2.0);
    matrix(p + "attn_k.weight", c.dim, kvd, 2.0);
    matrix(p + "attn_v.weight", c.dim, kvd);
    if (c.qkv_bias()) {
      bias(p + "attn_q.bias", qd);
      bias(p + "attn_k.bias", kvd);
      bias(p + "attn_v.bias", kvd);
    }
    if (c.qk_norm()) {
      gain(p + "attn_q_norm.weight", c.head_dim);
      gain(p + "attn_k_norm.weight", c.head_dim);
    }
    matrix(p + "attn_output.weight", qd, c.dim);
    gain(p + "ffn_norm.weight", c.dim);
    matrix(p + "ffn_gate.weight", c.dim, c.ffn);
    matrix(p + "ffn_up.weight", c.dim, c.ffn);
    matrix(p + "ffn_down.weight", c.ffn, c.dim);
  }
  w.write(path);
}

// Block tables handed out in a scrambled order, so that logical and physical blocks differ.
struct Pager {
  uint32_t block_size, next = 0, blocks;
  explicit Pager(uint32_t bs, uint32_t n) : block_size(bs), blocks(n) {}
  void grow(std::vector<int32_t>& table, uint32_t tokens) {
    while (table.size() * block_size < tokens) table.push_back(static_cast<int32_t>((next++ * 7 + 3) % blocks));
  }
};

// Logits of every position of `a` (and of `b`, when given) through the fast path: `a` fed in chunks
// of `chunk` tokens; `b` (if any) prefills its first 3 tokens with a's first chunk, then decodes one
// token per step alongside a's chunks, then finishes alone.
void fast_forward(model::Transformer& m, backend::CpuBackend& be, uint32_t block_size, size_t chunk,
                  const std::vector<int32_t>& a, const std::vector<int32_t>* b, std::vector<float>& out_a,
                  std::vector<float>& out_b) {
  be.init_kv(m.kv_layout(block_size), 64);
  Pager pager(block_size, 64);
  const size_t vocab = m.hparams().vocab;
  std::vector<int32_t> ta, tb;
  size_t pa = 0, pb = 0;
  out_a.clear();
  out_b.clear();
  while (pa < a.size() || (b && pb < b->size())) {
    engine::Batch batch;
    batch.block_size = block_size;
    size_t na = 0, nb = 0;
    if (b && pb < b->size()) {  // b goes first, so a's rows sit at an offset in the batch
      nb = pb == 0 ? 3 : 1;
      pager.grow(tb, static_cast<uint32_t>(pb + nb));
      batch.add_sequence(std::vector<int32_t>(b->begin() + pb, b->begin() + pb + nb), static_cast<uint32_t>(pb), tb,
                         engine::Batch::Logits::All);
    }
    if (pa < a.size()) {
      na = std::min(chunk, a.size() - pa);
      pager.grow(ta, static_cast<uint32_t>(pa + na));
      batch.add_sequence(std::vector<int32_t>(a.begin() + pa, a.begin() + pa + na), static_cast<uint32_t>(pa), ta,
                         engine::Batch::Logits::All);
    }
    const auto logits = m.forward(batch);
    out_b.insert(out_b.end(), logits.begin(), logits.begin() + nb * vocab);
    out_a.insert(out_a.end(), logits.begin() + nb * vocab, logits.end());
    pa += na;
    pb += nb;
  }
}

struct Err {
  double max_rel = 0, rms_rel = 0;
};

Err compare(const std::vector<float>& fast, const std::vector<double>& ref) {
  double ss = 0, es = 0, mx = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    ss += ref[i] * ref[i];
    const double e = std::fabs(double(fast[i]) - ref[i]);
    es += e * e;
    mx = std::max(mx, e);
  }
  const double rms = std::sqrt(ss / double(ref.size()));
  return {mx / rms, std::sqrt(es / double(ref.size())) / rms};
}

struct Case {
  const char* name;
  RefConfig cfg;
};

RefConfig base(const std::string& arch) {
  RefConfig c;
  c.arch = arch;
  c.dim = 256;  // K-quants need rows of 256
  c.layers = 2;
  c.heads = 8;
  c.kv_heads = 2;  // GQA: 4 query heads per KV head
  c.head_dim = 32;
  c.ffn = 512;
  c.vocab = 320;
  c.rope_dims = 32;
  return c;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  RefConfig c = base("llama");
  c.scaling = "linear";
  c.factor = 2.0;
  out.push_back({"llama_linear", c});
  c = base("llama");
  c.freq_factors = true;  // Llama 3 scaling
  c.tied = true;
  c.rope_base = 500000.0;
  c.rope_dims = 16;  // partial rotary: half of each head passes through
  out.push_back({"llama3_freqs_tied_partial", c});
  c = base("qwen2");
  c.scaling = "yarn";
  c.factor = 4.0;
  c.original_context = 64;
  c.rope_base = 1000000.0;
  c.tied = true;
  c.eps = 1e-6;
  out.push_back({"qwen2_yarn_tied", c});
  c = base("qwen3");
  c.kv_heads = 1;  // multi-query
  c.eps = 1e-6;
  out.push_back({"qwen3_mqa", c});
  return out;
}

std::vector<int32_t> tokens(size_t n, uint32_t mul, uint32_t add, uint32_t vocab) {
  std::vector<int32_t> t;
  for (size_t i = 0; i < n; ++i) t.push_back(static_cast<int32_t>((i * mul + add) % vocab));
  return t;
}

void check_type(TensorType type) {
  const bool q8_activations = type != TensorType::F32 && type != TensorType::F16 && type != TensorType::BF16;
  for (const Case& cs : cases()) {
    const std::string tname(tensor_type_name(type));
    SCOPED_TRACE(std::string(cs.name) + " " + tname);
    const std::string path = (fs::temp_directory_path() / ("vellum_ref_" + std::to_string(::getpid()) + "_" +
                                                           cs.name + "_" + tname + ".gguf"))
                                 .string();
    write_model(cs.cfg, type, path, 0x5eed + static_cast<uint64_t>(type));
    const auto f = gguf::GgufFile::open(path);
    testref::ReferenceModel ref(f, cs.cfg);
    const auto a = tokens(37, 113, 5, cs.cfg.vocab), b = tokens(9, 71, 200, cs.cfg.vocab);
    const auto ref_a = ref.forward(a);
    const double q8_rel = std::sqrt(ref.q8_rel2_sum());
    const auto ref_b = ref.forward(b);

    std::vector<float> level0;
    for (int level = 0; level <= static_cast<int>(backend::cpu::detected_isa()); ++level) {
      backend::cpu::set_isa_limit(static_cast<backend::cpu::IsaLevel>(level));
      const char* isa = backend::cpu::isa_name(backend::cpu::active_isa()).data();
      SCOPED_TRACE(isa);
      backend::CpuBackend be(2);
      model::Transformer m(f, be);
      std::vector<float> whole, whole_b, chunked, chunked_b, mixed_a, mixed_b;
      fast_forward(m, be, 16, a.size(), a, nullptr, whole, whole_b);  // one prefill
      fast_forward(m, be, 4, 5, a, nullptr, chunked, chunked_b);      // chunks of 5, blocks of 4
      fast_forward(m, be, 5, 7, a, &b, mixed_a, mixed_b);             // ragged batch with a decoding sequence
      ASSERT_EQ(whole.size(), ref_a.size());
      ASSERT_EQ(mixed_b.size(), ref_b.size());

      // Batch invariance: the three ways of running `a` give the same bits, at every ISA level.
      EXPECT_EQ(chunked, whole);
      EXPECT_EQ(mixed_a, whole);
      if (level == 0) level0 = whole;
      EXPECT_EQ(whole, level0) << "ISA levels disagree";

      const double rms_tol = q8_activations ? 3.0 * q8_rel + kFloatTol : kFloatTol;
      const double max_tol = q8_activations ? 12.0 * q8_rel + kFloatTol : kFloatTol;
      for (const auto& [fast, refv, what] : {std::tuple{&whole, &ref_a, "a"}, std::tuple{&mixed_b, &ref_b, "b"}}) {
        const Err e = compare(*fast, *refv);
        EXPECT_LE(e.rms_rel, rms_tol) << what;
        EXPECT_LE(e.max_rel, max_tol) << what;
        if (level != static_cast<int>(backend::cpu::detected_isa())) continue;  // print one level's figures
        std::printf("%-26s %-5s %-6s seq %s: error max %.2e rms %.2e of logit RMS (tolerance rms %.2e, max %.2e)\n",
                    cs.name, tname.c_str(), isa, what, e.max_rel, e.rms_rel, rms_tol, max_tol);
      }
    }
    backend::cpu::set_isa_limit(std::nullopt);
    fs::remove(path);
  }
}

class ReferenceForward : public ::testing::TestWithParam<TensorType> {};

TEST_P(ReferenceForward, FastPathAgreesWithFloat64) {
  check_type(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Types, ReferenceForward,
                         ::testing::Values(TensorType::F32, TensorType::F16, TensorType::BF16, TensorType::Q8_0,
                                           TensorType::Q4_0, TensorType::Q5_1, TensorType::Q4_K, TensorType::Q6_K),
                         [](const auto& info) { return std::string(tensor_type_name(info.param)); });

}  // namespace
}  // namespace vellum
