#include "quant/quant.h"

#include <cstring>

#include "core/error.h"
#include "core/half.h"
#include "quant/blocks.h"
#include "quant/k_quants.h"
#include "quant/legacy_quants.h"

namespace vellum::quant {
namespace {

// Block element counts, tied to the layouts so the dispatch below cannot disagree with blocks.h.
template <typename Block> constexpr int kBlockElements = 0;
template <> constexpr int kBlockElements<BlockQ4_0> = QK4_0;
template <> constexpr int kBlockElements<BlockQ4_1> = QK4_1;
template <> constexpr int kBlockElements<BlockQ5_0> = QK5_0;
template <> constexpr int kBlockElements<BlockQ5_1> = QK5_1;
template <> constexpr int kBlockElements<BlockQ8_0> = QK8_0;
template <> constexpr int kBlockElements<BlockQ2_K> = QK_K;
template <> constexpr int kBlockElements<BlockQ3_K> = QK_K;
template <> constexpr int kBlockElements<BlockQ4_K> = QK_K;
template <> constexpr int kBlockElements<BlockQ5_K> = QK_K;
template <> constexpr int kBlockElements<BlockQ6_K> = QK_K;

template <typename Block>
void dequantize_blocks(const void* src, float* dst, int64_t nblocks) {
  for (int64_t i = 0; i < nblocks; ++i) dequantize_block(load_block<Block>(src, i), dst + i * kBlockElements<Block>);
}

template <typename Block>
void quantize_blocks(const float* src, void* dst, int64_t nblocks) {
  for (int64_t i = 0; i < nblocks; ++i) {
    Block b{};
    quantize_block(src + i * kBlockElements<Block>, b);
    store_block(dst, i, b);
  }
}

bool supported(TensorType type) {
  switch (type) {
    case TensorType::F32:
    case TensorType::F16:
    case TensorType::BF16:
    case TensorType::Q4_0:
    case TensorType::Q4_1:
    case TensorType::Q5_0:
    case TensorType::Q5_1:
    case TensorType::Q8_0:
    case TensorType::Q2_K:
    case TensorType::Q3_K:
    case TensorType::Q4_K:
    case TensorType::Q5_K:
    case TensorType::Q6_K:
      return true;
    default:
      return false;
  }
}

// Validates the call and returns the number of blocks.
int64_t check_row(const char* what, TensorType type, const void* src, const void* dst, int64_t n) {
  if (!supported(type)) {
    const auto t = tensor_type_traits(static_cast<uint32_t>(type));
    if (t) throw_error("{}: tensor type {} is not supported", what, t->name);
    throw_error("{}: unknown tensor type id {}", what, static_cast<uint32_t>(type));
  }
  const auto& t = traits(type);
  if (n < 0 || n % t.block_elements != 0) {
    throw_error("{}: {} elements is not a multiple of the {} block size {}", what, n, t.name, t.block_elements);
  }
  if (n > 0 && (src == nullptr || dst == nullptr)) throw_error("{}: null buffer for {} elements", what, n);
  return n / t.block_elements;
}

}  // namespace

bool can_dequantize(TensorType type) { return supported(type); }
bool can_quantize(TensorType type) { return supported(type); }

void dequantize_row(TensorType type, const void* src, float* dst, int64_t n) {
  const int64_t nb = check_row("dequantize_row", type, src, dst, n);
  if (nb == 0) return;
  const auto* bytes = static_cast<const unsigned char*>(src);
  switch (type) {
    case TensorType::F32:
      std::memmove(dst, src, size_t(n) * sizeof(float));
      return;
    case TensorType::F16:
    case TensorType::BF16: {
      const bool f16 = type == TensorType::F16;
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, bytes + 2 * i, 2);
        dst[i] = f16 ? f16_to_f32(h) : bf16_to_f32(h);
      }
      return;
    }
    case TensorType::Q4_0: return dequantize_blocks<BlockQ4_0>(src, dst, nb);
    case TensorType::Q4_1: return dequantize_blocks<BlockQ4_1>(src, dst, nb);
    case TensorType::Q5_0: return dequantize_blocks<BlockQ5_0>(src, dst, nb);
    case TensorType::Q5_1: return dequantize_blocks<BlockQ5_1>(src, dst, nb);
    case TensorType::Q8_0: return dequantize_blocks<BlockQ8_0>(src, dst, nb);
    case TensorType::Q2_K: return dequantize_blocks<BlockQ2_K>(src, dst, nb);
    case TensorType::Q3_K: return dequantize_blocks<BlockQ3_K>(src, dst, nb);
    case TensorType::Q4_K: return dequantize_blocks<BlockQ4_K>(src, dst, nb);
    case TensorType::Q5_K: return dequantize_blocks<BlockQ5_K>(src, dst, nb);
    case TensorType::Q6_K: return dequantize_blocks<BlockQ6_K>(src, dst, nb);
    default: break;
  }
  throw_error("dequantize_row: unhandled tensor type {}", tensor_type_name(type));  // unreachable
}

void quantize_row(TensorType type, const float* src, void* dst, int64_t n) {
  const int64_t nb = check_row("quantize_row", type, src, dst, n);
  if (nb == 0) return;
  auto* bytes = static_cast<unsigned char*>(dst);
  switch (type) {
    case TensorType::F32:
      std::memmove(dst, src, size_t(n) * sizeof(float));
      return;
    case TensorType::F16:
    case TensorType::BF16: {
      const bool f16 = type == TensorType::F16;
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = f16 ? f32_to_f16(src[i]) : f32_to_bf16(src[i]);
        std::memcpy(bytes + 2 * i, &h, 2);
      }
      return;
    }
    case TensorType::Q4_0: return quantize_blocks<BlockQ4_0>(src, dst, nb);
    case TensorType::Q4_1: return quantize_blocks<BlockQ4_1>(src, dst, nb);
    case TensorType::Q5_0: return quantize_blocks<BlockQ5_0>(src, dst, nb);
    case TensorType::Q5_1: return quantize_blocks<BlockQ5_1>(src, dst, nb);
    case TensorType::Q8_0: return quantize_blocks<BlockQ8_0>(src, dst, nb);
    case TensorType::Q2_K: return quantize_blocks<BlockQ2_K>(src, dst, nb);
    case TensorType::Q3_K: return quantize_blocks<BlockQ3_K>(src, dst, nb);
    case TensorType::Q4_K: return quantize_blocks<BlockQ4_K>(src, dst, nb);
    case TensorType::Q5_K: return quantize_blocks<BlockQ5_K>(src, dst, nb);
    case TensorType::Q6_K: return quantize_blocks<BlockQ6_K>(src, dst, nb);
    default: break;
  }
  throw_error("quantize_row: unhandled tensor type {}", tensor_type_name(type));  // unreachable
}

}  // namespace vellum::quant
