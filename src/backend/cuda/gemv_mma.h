#pragma once
// Up to kMmaRowsMax token rows of a Q8_0 / Q4_K / Q6_K weight on int8 tensor cores (round 41; 8
// rows until round 51, now 16), for decode steps of a few sequences and speculative verification
// (the backend takes it from 3 rows; 4 until round 51). Each weight byte is read once for all rows;
// a warp multiplies 16 weight rows by each 8-column tile of token rows with mma.sync m16n8k32 (Q6_K:
// two m16n8k16), reading its A fragments from the weights' device layout as its own cp.async ring in
// shared memory holds them, so no block barrier sits in the K loop (mmq.cu stages 256-element steps
// between barriers: latency-bound below 32 rows). x is quantized as at batch 1 (int8 per 32
// elements, the same rounding) into a buffer laid out as the B fragments the lanes load.
//
// Not batch-invariant: a row's float sums are added in another order than the batch-1 GEMV's, so
// the deterministic mode keeps the int8 rows GEMV (gemv_kernels.h), which gives every row its
// batch-1 bits.

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "backend/cuda/gemv_kernels.h"
#include "core/tensor_type.h"

namespace vellum::cuda {

// Token columns of one mma.sync n-tile, and the most token rows a launch takes: 2 tiles (round
// 51), each weight fragment multiplied by both before the next is loaded. 4 tiles (32 rows) were
// measured and dropped: each warp's x side per super-block (3 KB a tile) then outweighs its 2.3 KB
// of Q4_K weights, and the kernel ran at 20-24% of copy bandwidth alone, no faster end to end than
// dq_mma and 13-15% slower than dq_tma (docs/cuda.md, round 51).
inline constexpr int kMmaTile = 8;
inline constexpr int kMmaRowsMax = 16;
// Tiles of a launch of `rows` token rows: 1 or 2.
__host__ __device__ constexpr int mma_tiles(int rows) { return rows <= kMmaTile ? 1 : 2; }
bool gemv_mma_supports(TensorType type, int64_t k);
// Bytes of the fragment-ordered int8 x of launch_quantize_mma_x for `rows` token rows (1..kMmaRowsMax).
size_t mma_x_bytes(int64_t k, int rows);
// The layout of one tile (8 token columns). Element e (0..255) of super-block j of token column
// `token` (< 8) lies at this byte: lane 4·token + t (t = (e % 16) / 4) loads (b0, b1) of sub-blocks
// 2p and 2p + 1 (p = e / 64) as one 16-byte piece, (j·4 + p)·32 + lane, so a warp's loads are contiguous.
__host__ __device__ constexpr int64_t mma_x_frag_byte(int64_t j, int token, int e) {
  const int s = e / 32, i = e % 32, t = (i % 16) / 4;
  return ((j * 4 + s / 2) * 32 + 4 * token + t) * 16 + (s % 2) * 8 + (i >= 16 ? 4 : 0) + i % 4;
}
// After kMmaTile·k bytes, the scale pair (d, d·Σq) of 32-element block s of super-block j of
// `token`, as float2 (j·32 + s·4 + token / 2)·2 + token % 2: lane t loads those of tokens 2t and
// 2t + 1 as one float4.
__host__ __device__ constexpr int64_t mma_x_scale_index(int64_t j, int token, int s) {
  return ((j * 8 + s) * 4 + token / 2) * 2 + token % 2;
}
// After the scale pairs (at mma_x_min_offset(k)), the K-quant minimums' x side for tf32 mma.sync
// (round 42): d·Σq of sub-block s of super-block j of `token` split in two floats, hi (its top 19
// bits, the part tf32 keeps) and lo (the rest), at these float indices: lane 4·token + s % 4 loads
// its B fragments (hi of s % 4, hi of s % 4 + 4, lo of both) as one float4.
__host__ __device__ constexpr int64_t mma_x_min_index(int64_t j, int token, int s, bool lo) {
  return ((j * 32 + 4 * token + s % 4) * 4) + s / 4 + (lo ? 2 : 0);
}
__host__ __device__ constexpr int64_t mma_x_min_offset(int64_t k) { return k * kMmaTile + (k / 32) * kMmaTile * 8; }
// nt tiles (round 51): the one-tile layout of a K nt times as long, whose super-block j·nt + tile
// holds that tile's 8 columns of super-block j. So a super-block's tiles are consecutive in each
// of the three parts, and nt = 1 is the one-tile layout itself. Token `token` of super-block j is
// token % 8 of this virtual super-block:
__host__ __device__ constexpr int64_t mma_x_vsb(int64_t j, int token, int nt) { return j * nt + token / kMmaTile; }
// Round 44: each super-block's x side copied into the warp's ring beside its weights (cp.async, after
// the programmatic wait) instead of loaded from global memory where it is used: the same arithmetic,
// the same bits. -1 (the default): always under round 44's launch shapes (gemv_mma.cu, launch_type),
// 0 never, 1 always. VELLUM_CUDA_MMA_STAGE_X sets the initial value (measurements).
void set_gemv_mma_stage_x(int mode);
int gemv_mma_stage_x();
// rows (1..kMmaRowsMax) rows of x (ldx floats apart) into xf (mma_x_bytes(k, rows)), in
// mma_tiles(rows) tiles; columns past rows are zeros.
cudaError_t launch_quantize_mma_x(const float* x, int64_t ldx, int rows, int64_t k, void* xf, cudaStream_t stream);
// out[r * ldo + o] = Σ_i w[o][i] · x[r][i] (+ bias[o]) for r < rows, from launch_quantize_mma_x's xf;
// sms: the device's multiprocessors (how many warps share a row's K).
cudaError_t launch_gemv_mma(TensorType type, const void* w, int64_t n, int64_t k, const void* xf, int rows, float* out,
                            int64_t ldo, const float* bias, int sms, cudaStream_t stream);
// Round 52: the weights of s (one type, the same x: a layer's Q, K and V) in one launch, token row r of
// segment g at s.out[g] + r · s.rows[g] (+ its bias). Where gemv_mma_segs_supports (every weight
// alone would take the launch shape of them all), each output has the bits a launch of its weight
// alone gives it.
bool gemv_mma_segs_supports(TensorType type, const GemvSegs& s, int64_t k, int sms);
cudaError_t launch_gemv_mma_segs(TensorType type, const GemvSegs& s, int64_t k, const void* xf, int rows, int sms,
                                 cudaStream_t stream);
// out[r · n + o] = silu(gate_o · x_r) · (up_o · x_r): a block's 16 gate rows, then its 16 up rows, so
// that up never goes to memory; the bits of the two launches followed by swiglu_kernel.
cudaError_t launch_gemv_mma_swiglu(TensorType type, const void* gate, const void* up, int64_t n, int64_t k, const void* xf,
                                   int rows, float* out, int sms, cudaStream_t stream);

}  // namespace vellum::cuda
