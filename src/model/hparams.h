#pragma once
// The architecture table and hyper-parameters of a decoder-only transformer, read from GGUF metadata.
// One forward pass serves every supported architecture; what differs between them is expressed here
// as flags (QKV bias, Q/K norm, RoPE pair order, tied output), not as separate code paths.

#include <cstdint>
#include <string>
#include <vector>

#include "backend/rope_config.h"
#include "gguf/metadata.h"

namespace vellum::model {

enum class Arch { Llama, Qwen2, Qwen3 };

using backend::RopeConfig;
using backend::RopeOrder;
using backend::RopeScaling;

struct HParams {
  Arch arch = Arch::Llama;
  std::string arch_name;
  uint32_t vocab = 0;
  uint32_t context_train = 0;
  uint32_t dim = 0;
  uint32_t layers = 0;
  uint32_t heads = 0;
  uint32_t kv_heads = 0;
  uint32_t head_dim = 0;
  uint32_t ffn = 0;
  float rms_eps = 1e-5f;
  RopeConfig rope;
  bool qkv_bias = false;  // qwen2
  bool qk_norm = false;   // qwen3: RMSNorm over each head of Q and K before RoPE

  uint32_t q_dim() const { return heads * head_dim; }
  uint32_t kv_dim() const { return kv_heads * head_dim; }
};

// Architectures vellum runs, as GGUF names them.
std::vector<std::string> supported_architectures();
// Reads and checks the hyper-parameters; throws vellum::Error for an unknown architecture, a missing
// or ill-typed key, or inconsistent values. `vocab` is taken from the tokenizer when the arch key is absent.
HParams read_hparams(const gguf::Metadata& md);

}  // namespace vellum::model
