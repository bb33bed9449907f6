// Tensor maps made through cuTensorMapEncodeTiled (tensor_map.h).

#include "backend/cuda/tensor_map.h"

namespace vellum::cuda {
namespace {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                                 const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
EncodeTiled encoder() {
  static const EncodeTiled fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      return EncodeTiled(nullptr);
    }
    return reinterpret_cast<EncodeTiled>(p);
  }();
  return fn;
}

}  // namespace

bool tensor_maps_available() { return encoder() != nullptr; }

cudaError_t encode_tensor_map_2d(CUtensorMap& map, CUtensorMapDataType type, const void* base, uint64_t inner, uint64_t rows,
                                 uint64_t stride, uint32_t box_inner, uint32_t box_rows, CUtensorMapSwizzle swizzle,
                                 CUtensorMapL2promotion l2) {
  const EncodeTiled f = encoder();
  if (f == nullptr) return cudaErrorNotSupported;
  const cuuint64_t dims[2] = {inner, rows}, strides[1] = {stride};
  const cuuint32_t box[2] = {box_inner, box_rows}, steps[2] = {1, 1};
  const CUresult rc = f(&map, type, 2, const_cast<void*>(base), dims, strides, box, steps, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, l2,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return rc == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

}  // namespace vellum::cuda
