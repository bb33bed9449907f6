#include "model/hparams.h"

#include "core/error.h"

namespace vellum::model {
namespace {

struct ArchEntry {
  const char* name;
  Arch arch;
  RopeOrder rope_order;
  bool qkv_bias;
  bool qk_norm;
};

// The architecture table: everything that distinguishes one family from another in the forward.
const ArchEntry kArchs[] = {
    {"llama", Arch::Llama, RopeOrder::Interleaved, false, false},
    {"qwen2", Arch::Qwen2, RopeOrder::Halves, true, false},
    {"qwen3", Arch::Qwen3, RopeOrder::Halves, false, true},
};

uint32_t get_u32(const gguf::Metadata& md, const std::string& key) {
  const int64_t v = md.get_int(key);
  if (v < 0 || v > 0xffffffffll) throw_error("key {}: value {} out of range", key, v);
  return static_cast<uint32_t>(v);
}

uint32_t get_u32_or(const gguf::Metadata& md, const std::string& key, uint32_t fallback) {
  return md.contains(key) ? get_u32(md, key) : fallback;
}

float get_f32_or(const gguf::Metadata& md, const std::string& key, float fallback) {
  return md.contains(key) ? static_cast<float>(md.get_float(key)) : fallback;
}

}  // namespace

std::vector<std::string> supported_architectures() {
  std::vector<std::string> out;
  for (const auto& a : kArchs) out.emplace_back(a.name);
  return out;
}

HParams read_hparams(const gguf::Metadata& md) {
  if (!md.contains("general.architecture")) throw_error("key general.architecture: missing");
  const std::string name = md.get<std::string>("general.architecture");
  const ArchEntry* entry = nullptr;
  for (const auto& a : kArchs) {
    if (name == a.name) entry = &a;
  }
  if (entry == nullptr) {
    std::string known;
    for (const auto& n : supported_architectures()) known += (known.empty() ? "" : ", ") + n;
    throw_error("architecture '{}' is not supported (supported: {})", name, known);
  }
  const std::string p = name + ".";
  HParams h;
  h.arch = entry->arch;
  h.arch_name = name;
  h.qkv_bias = entry->qkv_bias;
  h.qk_norm = entry->qk_norm;
  h.dim = get_u32(md, p + "embedding_length");
  h.layers = get_u32(md, p + "block_count");
  h.heads = get_u32(md, p + "attention.head_count");
  h.kv_heads = get_u32_or(md, p + "attention.head_count_kv", h.heads);
  h.ffn = get_u32(md, p + "feed_forward_length");
  h.context_train = get_u32_or(md, p + "context_length", 2048);
  if (h.heads == 0 || h.kv_heads == 0 || h.dim == 0 || h.layers == 0 || h.ffn == 0) {
    throw_error("{}: embedding_length, block_count, head counts and feed_forward_length must be positive", name);
  }
  h.head_dim = get_u32_or(md, p + "attention.key_length", h.dim / h.heads);
  const uint32_t value_dim = get_u32_or(md, p + "attention.value_length", h.head_dim);
  if (value_dim != h.head_dim) throw_error("{}: value_length {} != key_length {} is not supported", name, value_dim, h.head_dim);
  if (h.heads % h.kv_heads != 0) throw_error("{}: head_count {} is not a multiple of head_count_kv {}", name, h.heads, h.kv_heads);
  h.rms_eps = get_f32_or(md, p + "attention.layer_norm_rms_epsilon", 1e-5f);

  if (md.contains(p + "vocab_size")) {
    h.vocab = get_u32(md, p + "vocab_size");
  } else if (const auto* tokens = md.find("tokenizer.ggml.tokens"); tokens != nullptr && tokens->type() == gguf::ValueType::ARRAY) {
    h.vocab = static_cast<uint32_t>(tokens->as_array().size());
  }

  RopeConfig& r = h.rope;
  r.order = entry->rope_order;
  r.dims = get_u32_or(md, p + "rope.dimension_count", h.head_dim);
  if (r.dims == 0 || r.dims > h.head_dim || r.dims % 2 != 0) {
    throw_error("{}: rope.dimension_count {} must be even and at most the head size {}", name, r.dims, h.head_dim);
  }
  r.base = get_f32_or(md, p + "rope.freq_base", 10000.0f);
  const std::string scaling = md.get_or<std::string>(p + "rope.scaling.type", "none");
  if (scaling == "none") {
    r.scaling = RopeScaling::None;
  } else if (scaling == "linear") {
    r.scaling = RopeScaling::Linear;
  } else if (scaling == "yarn") {
    r.scaling = RopeScaling::Yarn;
  } else {
    throw_error("key {}rope.scaling.type: '{}' is not supported (none, linear, yarn)", p, scaling);
  }
  r.factor = get_f32_or(md, p + "rope.scaling.factor", 1.0f);
  if (r.factor <= 0.0f) throw_error("key {}rope.scaling.factor: {} must be positive", p, r.factor);
  r.original_context = get_u32_or(md, p + "rope.scaling.original_context_length", h.context_train);
  r.yarn_beta_fast = get_f32_or(md, p + "rope.scaling.yarn_beta_fast", 32.0f);
  r.yarn_beta_slow = get_f32_or(md, p + "rope.scaling.yarn_beta_slow", 1.0f);
  r.yarn_attn_factor = get_f32_or(md, p + "rope.scaling.attn_factor", 1.0f);
  return h;
}

}  // namespace vellum::model
