#pragma once
// Converts a llama2.c checkpoint (the legacy export: 7 int32 header, then float32 tensors) and its
// tokenizer.bin into a llama-architecture GGUF with a SentencePiece-style vocabulary, as llama.cpp's
// own llama2c converter lays it out: weights keep llama2.c's row order (it already uses the
// interleaved-pair RoPE of GGUF's llama convention, so Q/K need no permutation), spaces in pieces
// become U+2581, ids 0/1/2 are <unk>/<s>/</s>, <0xXX> pieces are byte tokens.

#include <cstdint>
#include <string>

#include "core/tensor_type.h"

namespace vellum::gguf {

struct Llama2cConfig {
  int32_t dim = 0, hidden_dim = 0, n_layers = 0, n_heads = 0, n_kv_heads = 0, vocab_size = 0, seq_len = 0;
  bool shared_classifier = true;  // llama2.c signals an unshared classifier by a negative vocab_size
};

struct Llama2cConvertOptions {
  std::string model_path;
  std::string tokenizer_path;
  std::string output_path;
  std::string name;                         // general.name; defaults to the model file's stem
  TensorType matrix_type = TensorType::F32; // 2-D weights; norms stay F32
};

// Reads and validates the checkpoint header and size; throws vellum::Error naming the problem.
Llama2cConfig read_llama2c_config(const std::string& model_path);
// Converts; returns the configuration read.
Llama2cConfig convert_llama2c(const Llama2cConvertOptions& options);

}  // namespace vellum::gguf
