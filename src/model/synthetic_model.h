#pragma once
// Random-weight GGUF models with the exact tensor shapes of real architectures, for speed work and
// tests that need a model of a given size but not its knowledge. Weights are uniform with the
// standard deviation of a freshly initialised transformer (0.02), norms are 1, so activations stay
// finite through any number of layers. Output is deterministic for a seed, whatever the thread count.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor_type.h"

namespace vellum::model {

struct SyntheticShape {
  std::string arch = "llama";  // llama, qwen2 (q/k/v biases) or qwen3 (q/k norms)
  uint32_t dim = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, vocab = 0, context = 0;
  float rope_base = 10000.0f, rms_eps = 1e-5f;
  bool tied_embeddings = false;
};

// Presets: "tiny", "qwen2.5-0.5b", "qwen3-0.6b", "llama3-8b", "llama3.2-1b". Throws for an unknown name.
SyntheticShape synthetic_preset(const std::string& name);
std::vector<std::string> synthetic_preset_names();

struct SynthOptions {
  SyntheticShape shape;
  // A plain ggml type name ("Q8_0", "F16"…) or a llama.cpp mixture ("Q4_K_M"). Tensors whose rows
  // do not fit the type's blocks fall back the way llama.cpp's quantizer does (Q4_K → Q5_0 …).
  std::string type = "F16";
  std::optional<std::string> vocab_path;  // copy tokenizer.* from this GGUF; its size sets shape.vocab
  std::string output_path;
  uint64_t seed = 1;
  unsigned threads = 0;  // 0: all hardware threads
  bool verbose = true;   // progress on stderr
};

// Writes the model; returns the final shape (vocab size resolved).
SyntheticShape write_synthetic_model(SynthOptions options);

}  // namespace vellum::model
