#pragma once
// Rotary position embedding parameters, shared by the model (which reads them from GGUF) and the
// backends (which apply them).

#include <cstdint>
#include <vector>

namespace vellum::backend {

// Which elements RoPE rotates together: adjacent pairs (GGUF's llama convention, ggml's "normal")
// or element i with element i + dims/2 (GPT-NeoX, Hugging Face's rotate_half; ggml's "neox").
enum class RopeOrder { Interleaved, Halves };

enum class RopeScaling { None, Linear, Yarn };

struct RopeConfig {
  RopeOrder order = RopeOrder::Interleaved;
  uint32_t dims = 0;  // rotated dimensions per head (may be < head_dim; the rest pass through)
  float base = 10000.0f;
  RopeScaling scaling = RopeScaling::None;
  float factor = 1.0f;  // context extension factor (linear, yarn)
  uint32_t original_context = 0;
  float yarn_beta_fast = 32.0f, yarn_beta_slow = 1.0f, yarn_attn_factor = 1.0f;
  // Per-frequency divisors (Llama 3.x "rope_freqs.weight"); empty when the model has none.
  std::vector<float> freq_factors;
};

}  // namespace vellum::backend
