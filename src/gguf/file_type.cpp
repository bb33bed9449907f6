#include "gguf/file_type.h"

namespace vellum::gguf {

uint32_t llama_file_type(TensorType type, bool k_m) {
  switch (type) {
    case TensorType::F32: return 0;
    case TensorType::F16: return 1;
    case TensorType::Q4_0: return 2;
    case TensorType::Q4_1: return 3;
    case TensorType::Q8_0: return 7;
    case TensorType::Q5_0: return 8;
    case TensorType::Q5_1: return 9;
    case TensorType::Q2_K: return 10;
    case TensorType::Q3_K: return k_m ? 12 : 11;
    case TensorType::Q4_K: return k_m ? 15 : 14;
    case TensorType::Q5_K: return k_m ? 17 : 16;
    case TensorType::Q6_K: return 18;
    case TensorType::BF16: return 32;
    default: return 0;
  }
}

}  // namespace vellum::gguf
