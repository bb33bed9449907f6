#pragma once
// general.file_type: llama.cpp's LLAMA_FTYPE, the one number that names a file's quantization mix.

#include <cstdint>

#include "core/tensor_type.h"

namespace vellum::gguf {

// The file type of a model whose matrices are mostly `type`; `k_m` selects the "_M" K-quant mixes
// (Q4_K_M, Q5_K_M) over the "_S" ones. Types without an LLAMA_FTYPE give 0 (all F32).
uint32_t llama_file_type(TensorType type, bool k_m = false);

}  // namespace vellum::gguf
