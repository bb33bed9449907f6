// AVX-512 kernels: the YMM kernels of matmul_simd.inc with VNNI (vpdpbusd, vpdpwssd on 256-bit
// registers, AVX-512VL), chosen at run time (cpu_features.h) where the CPU and OS enable AVX-512.

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
namespace avx512 {
namespace {

#define VELLUM_SIMD_TARGET "avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni"
#define VELLUM_SIMD_VNNI 1
#include "backend/cpu/matmul_simd.inc"
#undef VELLUM_SIMD_TARGET
#undef VELLUM_SIMD_VNNI

}  // namespace
}  // namespace avx512
#endif

MatmulKernel avx512_kernel(TensorType type) {
#if defined(__x86_64__)
  return avx512::ymm_kernel(type);
#else
  (void)type;
  return {};
#endif
}

}  // namespace vellum::backend::cpu
