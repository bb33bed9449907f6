#pragma once
// mma.sync on int8 operands with int32 results from zero (PTX ISA fragment layouts): the K-quant
// and Q8_0 matmuls on tensor cores (mmq.cu, rows_mma.cu, gemv_mma.cu).

#include <cstdint>

namespace vellum::cuda {

// D = A·B, A 16×32 s8 (row: a0 / a1 rows g / g+8, elements 4t..4t+3; a2 / a3 the same at 16+4t),
// B 32×8 s8 (col: b0 elements 4t..4t+3 of column g, b1 at 16+4t), from zero.
__device__ __forceinline__ void mma_k32(uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0, uint32_t b1,
                                        int (&c)[4]) {
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};\n"
      : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(0));
}
// D = A·B, A 16×16 s8 (row), B 16×8 s8 (col), from zero.
__device__ __forceinline__ void mma_k16(uint32_t a0, uint32_t a1, uint32_t b0, int (&c)[4]) {
  asm("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%7,%7,%7};\n"
      : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
      : "r"(a0), "r"(a1), "r"(b0), "r"(0));
}

}  // namespace vellum::cuda
