#include "core/tensor_type.h"

#include <array>
#include <cctype>
#include <stdexcept>

namespace vellum {
namespace {

constexpr uint32_t QK_K = 256;

constexpr std::array<TensorTypeTraits, 32> kTraits = {{
    {TensorType::F32, "F32", 1, 4},
    {TensorType::F16, "F16", 1, 2},
    {TensorType::Q4_0, "Q4_0", 32, 18},
    {TensorType::Q4_1, "Q4_1", 32, 20},
    {TensorType::Q5_0, "Q5_0", 32, 22},
    {TensorType::Q5_1, "Q5_1", 32, 24},
    {TensorType::Q8_0, "Q8_0", 32, 34},
    {TensorType::Q8_1, "Q8_1", 32, 36},
    {TensorType::Q2_K, "Q2_K", QK_K, 84},
    {TensorType::Q3_K, "Q3_K", QK_K, 110},
    {TensorType::Q4_K, "Q4_K", QK_K, 144},
    {TensorType::Q5_K, "Q5_K", QK_K, 176},
    {TensorType::Q6_K, "Q6_K", QK_K, 210},
    {TensorType::Q8_K, "Q8_K", QK_K, 292},
    {TensorType::IQ2_XXS, "IQ2_XXS", QK_K, 66},
    {TensorType::IQ2_XS, "IQ2_XS", QK_K, 74},
    {TensorType::IQ3_XXS, "IQ3_XXS", QK_K, 98},
    {TensorType::IQ1_S, "IQ1_S", QK_K, 50},
    {TensorType::IQ4_NL, "IQ4_NL", 32, 18},
    {TensorType::IQ3_S, "IQ3_S", QK_K, 110},
    {TensorType::IQ2_S, "IQ2_S", QK_K, 82},
    {TensorType::IQ4_XS, "IQ4_XS", QK_K, 136},
    {TensorType::I8, "I8", 1, 1},
    {TensorType::I16, "I16", 1, 2},
    {TensorType::I32, "I32", 1, 4},
    {TensorType::I64, "I64", 1, 8},
    {TensorType::F64, "F64", 1, 8},
    {TensorType::IQ1_M, "IQ1_M", QK_K, 56},
    {TensorType::BF16, "BF16", 1, 2},
    {TensorType::TQ1_0, "TQ1_0", QK_K, 54},
    {TensorType::TQ2_0, "TQ2_0", QK_K, 66},
    {TensorType::MXFP4, "MXFP4", 32, 17},
}};

}  // namespace

std::optional<TensorTypeTraits> tensor_type_traits(uint32_t id) {
  for (const auto& t : kTraits) {
    if (static_cast<uint32_t>(t.type) == id) return t;
  }
  return std::nullopt;
}

const TensorTypeTraits& traits(TensorType type) {
  for (const auto& t : kTraits) {
    if (t.type == type) return t;
  }
  throw std::logic_error("traits: unknown tensor type");  // unreachable for a valid enum value
}

std::string_view tensor_type_name(TensorType type) { return traits(type).name; }

std::optional<TensorType> parse_tensor_type(std::string_view name) {
  for (const auto& t : kTraits) {
    if (t.name.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < name.size() && same; ++i) {
      same = std::toupper(static_cast<unsigned char>(name[i])) == t.name[i];
    }
    if (same) return t.type;
  }
  return std::nullopt;
}

}  // namespace vellum
