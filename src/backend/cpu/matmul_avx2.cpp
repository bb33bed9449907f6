// AVX2 + FMA + F16C kernels (matmul_simd.inc), chosen at run time (cpu_features.h).

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <cmath>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "backend/cpu/matmul_kernels.h"
#include "quant/blocks.h"
#include "quant/k_quants.h"

namespace vellum::backend::cpu {
#if defined(__x86_64__)
namespace avx2 {
namespace {

#define VELLUM_SIMD_TARGET "avx2,fma,f16c"
#include "backend/cpu/matmul_simd.inc"
#undef VELLUM_SIMD_TARGET

}  // namespace
}  // namespace avx2
#endif

MatmulKernel avx2_kernel(TensorType type) {
#if defined(__x86_64__)
  return avx2::ymm_kernel(type);
#else
  (void)type;
  return {};
#endif
}

}  // namespace vellum::backend::cpu
