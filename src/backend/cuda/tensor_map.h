// Tensor maps for Hopper's bulk tensor copies (tma.cuh), made on the host: the dequantizing GEMMs'
// weights and x (dq_tma.cu) and the prefill attention's K/V pool (attn_wgmma.cu).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace vellum::cuda {

// Whether the driver offers cuTensorMapEncodeTiled (reached through the runtime: no link against
// the driver library).
bool tensor_maps_available();

// A 2-D row-major array (`inner` elements a row, `rows` rows `stride` bytes apart) and its box of
// box_inner x box_rows elements. cudaErrorNotSupported without the encoder, cudaErrorInvalidValue
// when the driver refuses the shape.
cudaError_t encode_tensor_map_2d(CUtensorMap& map, CUtensorMapDataType type, const void* base, uint64_t inner, uint64_t rows,
                                 uint64_t stride, uint32_t box_inner, uint32_t box_rows, CUtensorMapSwizzle swizzle,
                                 CUtensorMapL2promotion l2);

}  // namespace vellum::cuda
