#include "model/synthetic_model.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <thread>

#include <unistd.h>

#include "core/error.h"
#include "gguf/file_type.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "quant/quant.h"

namespace vellum::model {
namespace {

struct Preset {
  const char* name;
  SyntheticShape shape;
};

// Shapes of real models (their config.json), and BENCHMARKS.md's "L8B"/"L0.4B" benchmark models.
const Preset kPresets[] = {
    {"tiny", {"llama", 256, 2, 4, 2, 64, 768, 512, 2048, 10000.0f, 1e-5f, false}},
    {"qwen2.5-0.5b", {"qwen2", 896, 24, 14, 2, 64, 4864, 151936, 32768, 1000000.0f, 1e-6f, true}},
    {"qwen3-0.6b", {"qwen3", 1024, 28, 16, 8, 128, 3072, 151936, 40960, 1000000.0f, 1e-6f, true}},
    {"llama3.2-1b", {"llama", 2048, 16, 32, 8, 64, 8192, 128256, 131072, 500000.0f, 1e-5f, true}},
    {"llama3-8b", {"llama", 4096, 32, 32, 8, 128, 14336, 128256, 8192, 500000.0f, 1e-5f, false}},
    {"L0.4B", {"llama", 896, 24, 14, 2, 64, 4864, 32000, 4096, 10000.0f, 1e-5f, false}},
    {"L8B", {"llama", 4096, 32, 32, 8, 128, 14336, 32000, 8192, 10000.0f, 1e-5f, false}},
};

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t hash_name(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// llama.cpp's fallback when a row is not a whole number of the wanted type's blocks.
TensorType fallback_type(TensorType wanted, uint64_t row) {
  auto fits = [&](TensorType t) { return row % traits(t).block_elements == 0 && quant::can_quantize(t); };
  if (fits(wanted)) return wanted;
  const TensorType chain[] = {wanted == TensorType::Q6_K || wanted == TensorType::Q8_0 ? TensorType::Q8_0
                                                                                      : TensorType::Q5_0,
                              TensorType::Q8_0, TensorType::F16};
  for (TensorType t : chain) {
    if (fits(t)) return t;
  }
  return TensorType::F32;
}

// llama.cpp's Q4_K_M choice: more bits for the first and last eighth of layers and every third between.
bool use_more_bits(uint32_t layer, uint32_t layers) {
  return layer < layers / 8 || layer >= 7 * layers / 8 || (layer - layers / 8) % 3 == 2;
}

struct TypePlan {
  TensorType base;
  bool k_m = false;  // Q4_K_M / Q5_K_M style mixture
};

TypePlan parse_type(const std::string& name) {
  std::string upper;
  for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper == "Q4_K_M") return {TensorType::Q4_K, true};
  if (upper == "Q5_K_M") return {TensorType::Q5_K, true};
  const auto t = parse_tensor_type(upper == "Q4_K_S" ? "Q4_K" : upper);
  if (!t) throw_error("unknown tensor type '{}' (expected e.g. F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K, Q4_K_M)", name);
  if (!quant::can_quantize(*t)) throw_error("cannot write {} tensors (no quantizer for it)", tensor_type_name(*t));
  return {*t, false};
}

// The type of a 2-D weight under the plan.
TensorType matrix_type(const TypePlan& plan, const std::string& tensor, int layer, uint32_t layers, uint64_t row) {
  TensorType t = plan.base;
  if (plan.k_m) {
    if (tensor == "output.weight") t = TensorType::Q6_K;
    else if ((tensor == "attn_v.weight" || tensor == "ffn_down.weight") && layer >= 0 &&
             use_more_bits(static_cast<uint32_t>(layer), layers)) t = TensorType::Q6_K;
  }
  if (!quant::can_quantize(t)) t = TensorType::Q8_0;
  return fallback_type(t, row);
}

}  // namespace

std::vector<std::string> synthetic_preset_names() {
  std::vector<std::string> names;
  for (const auto& p : kPresets) names.emplace_back(p.name);
  return names;
}

SyntheticShape synthetic_preset(const std::string& name) {
  for (const auto& p : kPresets) {
    if (name == p.name) return p.shape;
  }
  std::string known;
  for (const auto& n : synthetic_preset_names()) known += (known.empty() ? "" : ", ") + n;
  throw_error("unknown preset '{}' (known: {})", name, known);
}

SyntheticShape write_synthetic_model(SynthOptions o) {
  SyntheticShape& s = o.shape;
  if (s.arch != "llama" && s.arch != "qwen2" && s.arch != "qwen3") {
    throw_error("synth: unknown architecture '{}' (llama, qwen2, qwen3)", s.arch);
  }
  if (s.head_dim == 0 && s.heads != 0) s.head_dim = s.dim / s.heads;
  if (s.dim == 0 || s.layers == 0 || s.heads == 0 || s.kv_heads == 0 || s.head_dim == 0 || s.ffn == 0 ||
      s.context == 0) {
    throw_error("synth: dim, layers, heads, kv-heads, head-dim, ffn and context must all be positive");
  }
  if (s.heads % s.kv_heads != 0) throw_error("synth: heads {} is not a multiple of kv-heads {}", s.heads, s.kv_heads);
  if (s.head_dim % 2 != 0) throw_error("synth: head-dim {} is odd", s.head_dim);
  const TypePlan plan = parse_type(o.type);

  gguf::GgufWriter w;
  auto& md = w.metadata();
  if (o.vocab_path) {
    const auto vocab = gguf::GgufFile::open(*o.vocab_path);
    for (const auto& [key, value] : vocab.metadata().entries()) {
      if (key.rfind("tokenizer.", 0) == 0) md.set(key, value);
    }
    if (!md.contains("tokenizer.ggml.tokens")) throw_error("{}: has no tokenizer.ggml.tokens", *o.vocab_path);
    s.vocab = static_cast<uint32_t>(md.at("tokenizer.ggml.tokens").as_array().size());
  }
  if (s.vocab == 0) throw_error("synth: vocab size must be positive (give --vocab FILE or --vocab-size N)");

  const std::string a = s.arch;
  auto u32 = [](uint32_t v) { return gguf::Value::u32(v); };
  gguf::Metadata head;  // general.* and hyperparameters first, as converters order them
  head.set("general.architecture", gguf::Value::string(a));
  head.set("general.name", gguf::Value::string("vellum synthetic " + a));
  head.set("general.file_type", u32(0));
  head.set("general.quantization_version", u32(2));
  head.set(a + ".vocab_size", u32(s.vocab));
  head.set(a + ".context_length", u32(s.context));
  head.set(a + ".embedding_length", u32(s.dim));
  head.set(a + ".feed_forward_length", u32(s.ffn));
  head.set(a + ".block_count", u32(s.layers));
  head.set(a + ".attention.head_count", u32(s.heads));
  head.set(a + ".attention.head_count_kv", u32(s.kv_heads));
  head.set(a + ".attention.key_length", u32(s.head_dim));
  head.set(a + ".attention.value_length", u32(s.head_dim));
  head.set(a + ".rope.dimension_count", u32(s.head_dim));
  head.set(a + ".rope.freq_base", gguf::Value::f32(s.rope_base));
  head.set(a + ".attention.layer_norm_rms_epsilon", gguf::Value::f32(s.rms_eps));
  for (const auto& [key, value] : md.entries()) head.set(key, value);
  md = head;

  const unsigned threads = o.threads != 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  const uint64_t seed = o.seed;
  // Every row's values depend only on (seed, tensor name, row), never on thread scheduling.
  auto add = [&](const std::string& name, std::vector<uint64_t> shape, TensorType type, float mean, float std) {
    const uint64_t row = shape[0];
    uint64_t rows = 1;
    for (size_t i = 1; i < shape.size(); ++i) rows *= shape[i];
    w.add_tensor(name, type, shape, [=](std::span<uint8_t> out) {
      const uint64_t out_row = out.size() / rows;
      const float half_width = std * 1.7320508f;  // uniform(-a, a) has std a/sqrt(3)
      std::atomic<uint64_t> next{0};
      auto work = [&] {
        std::vector<float> values(row);
        for (uint64_t r; (r = next.fetch_add(1)) < rows;) {
          uint64_t state = seed ^ hash_name(name) ^ (r * 0xd1b54a32d192ed03ull);
          for (uint64_t i = 0; i < row; ++i) {
            const double u = static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;  // [0, 1)
            values[i] = std == 0.0f ? mean : mean + half_width * static_cast<float>(2.0 * u - 1.0);
          }
          quant::quantize_row(type, values.data(), out.data() + r * out_row, static_cast<int64_t>(row));
        }
      };
      std::vector<std::thread> pool;
      const unsigned n = static_cast<unsigned>(std::min<uint64_t>(threads, rows));
      for (unsigned t = 1; t < n; ++t) pool.emplace_back(work);
      work();
      for (auto& t : pool) t.join();
    });
  };
  const float init_std = 0.02f;
  auto matrix = [&](const std::string& name, const std::string& kind, int layer, uint64_t in, uint64_t out_dim) {
    add(name, {in, out_dim}, matrix_type(plan, kind, layer, s.layers, in), 0.0f, init_std);
  };
  auto vector = [&](const std::string& name, uint64_t n, float value) { add(name, {n}, TensorType::F32, value, 0.0f); };
  auto bias = [&](const std::string& name, uint64_t n) { add(name, {n}, TensorType::F32, 0.0f, init_std); };

  const uint64_t q_dim = uint64_t(s.heads) * s.head_dim, kv_dim = uint64_t(s.kv_heads) * s.head_dim;
  matrix("token_embd.weight", "token_embd.weight", -1, s.dim, s.vocab);
  vector("output_norm.weight", s.dim, 1.0f);
  if (!s.tied_embeddings) matrix("output.weight", "output.weight", -1, s.dim, s.vocab);
  for (uint32_t l = 0; l < s.layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    const int li = static_cast<int>(l);
    vector(p + "attn_norm.weight", s.dim, 1.0f);
    matrix(p + "attn_q.weight", "attn_q.weight", li, s.dim, q_dim);
    matrix(p + "attn_k.weight", "attn_k.weight", li, s.dim, kv_dim);
    matrix(p + "attn_v.weight", "attn_v.weight", li, s.dim, kv_dim);
    if (a == "qwen2") {
      bias(p + "attn_q.bias", q_dim);
      bias(p + "attn_k.bias", kv_dim);
      bias(p + "attn_v.bias", kv_dim);
    }
    if (a == "qwen3") {
      vector(p + "attn_q_norm.weight", s.head_dim, 1.0f);
      vector(p + "attn_k_norm.weight", s.head_dim, 1.0f);
    }
    matrix(p + "attn_output.weight", "attn_output.weight", li, q_dim, s.dim);
    vector(p + "ffn_norm.weight", s.dim, 1.0f);
    matrix(p + "ffn_gate.weight", "ffn_gate.weight", li, s.dim, s.ffn);
    matrix(p + "ffn_down.weight", "ffn_down.weight", li, s.ffn, s.dim);
    matrix(p + "ffn_up.weight", "ffn_up.weight", li, s.dim, s.ffn);
  }
  md.set("general.file_type", u32(gguf::llama_file_type(plan.base, plan.k_m)));

  const bool show = o.verbose && ::isatty(2);  // a progress line only where someone watches it
  w.write(o.output_path, [&](size_t done, size_t total) {
    if (show) std::fprintf(stderr, "\rsynth: %zu/%zu tensors%s", done, total, done == total ? "\n" : "");
  });
  return s;
}

}  // namespace vellum::model
