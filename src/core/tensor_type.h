#pragma once
// The tensor element types a GGUF file can hold, numbered as ggml numbers them (the GGUF on-disk ids),
// with each type's block geometry. Every type llama.cpp writes is known here so that any real file can
// be validated and inspected; which types vellum can compute with is quant/'s business.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace vellum {

enum class TensorType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3,
  Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
  IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22, IQ4_XS = 23,
  I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30,
  TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39,
};

struct TensorTypeTraits {
  TensorType type;
  std::string_view name;     // as ggml spells it: "Q4_K", "BF16"
  uint32_t block_elements;   // elements per block (1 for plain types)
  uint32_t block_bytes;      // bytes per block
};

// Traits of a known type id, or nullopt for an id ggml does not define (or has retired: 4, 5, 31-33).
std::optional<TensorTypeTraits> tensor_type_traits(uint32_t id);
// Same, for a type known to be valid.
const TensorTypeTraits& traits(TensorType type);
std::string_view tensor_type_name(TensorType type);
// Parses "q4_k", "Q4_K", "bf16"... (case-insensitive); nullopt when unknown.
std::optional<TensorType> parse_tensor_type(std::string_view name);

// Bytes a row of `elements` elements takes; `elements` must be a multiple of the block size.
inline uint64_t row_bytes(TensorType type, uint64_t elements) {
  const auto& t = traits(type);
  return elements / t.block_elements * t.block_bytes;
}

}  // namespace vellum
