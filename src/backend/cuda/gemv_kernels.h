#pragma once
// Batch-1 matmul (decode GEMV) kernels and launchers (gemv_kernels.cu). One launch covers the
// concatenated rows of up to kMaxGemvSegs weights of one type that read the same x (Q, K and V), or
// the gate and up rows of a SwiGLU feed-forward with silu(gate)·up in the epilogue. A row's result
// does not depend on how it is launched (alone, in a group, in a SwiGLU pair): every row is
// reduced in the same order, so the fused ops equal the unfused ones bit for bit.
// Plain C++17 interface shared with the host code.

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "core/tensor_type.h"

namespace vellum::cuda {

inline constexpr int kMaxGemvSegs = 3;
// Output rows 0..rows[0]-1 go to out[0] from w[0], the next rows[1] to out[1] from w[1], ...
struct GemvSegs {
  const void* w[kMaxGemvSegs] = {};
  float* out[kMaxGemvSegs] = {};
  const float* bias[kMaxGemvSegs] = {};
  int64_t rows[kMaxGemvSegs] = {};
  int count = 0;
  void add(const void* wp, int64_t n, float* o, const float* b) {
    w[count] = wp, rows[count] = n, out[count] = o, bias[count] = b;
    ++count;
  }
};

// x (f32) times every segment's weight; any type kernel_supports (exact dequantized values).
cudaError_t launch_gemv1(TensorType type, const GemvSegs& segs, int64_t k, const float* x, cudaStream_t stream);
// out[o] = silu(gate_o · x) · (up_o · x), o < n; gate and up of one type.
cudaError_t launch_gemv1_swiglu(TensorType type, const void* gate, const void* up, int64_t n, int64_t k, const float* x,
                                float* out, cudaStream_t stream);

// Deterministic mode (round 9): `rows` x rows (k floats apart, 16-byte aligned) through
// launch_gemv1's arithmetic, so every row gets the bits a batch-1 launch gives it. Any type
// launch_gemv1 takes.
cudaError_t launch_gemv1_rows(TensorType type, const void* w, int64_t n, int64_t k, const float* x, int rows, float* out,
                              int64_t ldo, const float* bias, cudaStream_t stream);

// The int8 path (Q8_0, Q4_K, Q6_K): x quantized to int8 per 32 elements (scale amax/127) into a
// buffer of q8_bytes(k) (16-byte aligned), then __dp4a against the weight's integers.
bool int8_gemv_supports(TensorType type, int64_t k);
size_t q8_bytes(int64_t k);
// The scale pairs of an int8 copy of k values (after its k bytes, rounded up to 16).
const float2* q8_scales(const void* q8, int64_t k);
cudaError_t launch_quantize_q8(const float* x, int64_t k, void* q8, cudaStream_t stream);
// Round 43: a batch-1 RMSNorm carried by the GEMVs on either side of it, so that it is no kernel of
// its own on the decode chain. rms_norm(x)·W = s·((x ⊙ gain)·W) with s = 1/sqrt(Σx²/k + eps): the
// projection that ends a residual branch (output projection, down) writes x += W·a and, for each
// block of 32 rows it owns, the int8 copy of z = x ⊙ gain (q8_bytes layout, as launch_quantize_q8
// writes) and the block's Σx² (RowNormOut). The projections that read the norm (Q/K/V, gate/up)
// take z's copy as their int8 x and multiply each dot product by s, summed from those partials in
// a fixed order (RowNormIn; SwiGLU: both products before silu).
struct RowNormOut {
  const float* gain = nullptr;
  void* z_q8 = nullptr;       // q8_bytes(n)
  float* partial = nullptr;   // n / 32 floats
};
struct RowNormIn {
  const float* partial = nullptr;  // null: no norm (s = 1, the plain launch)
  float eps = 0.0f;
};
// Whether launch_gemv_i8_norm_out takes a weight of n rows of k (n % 32 == 0, the int8 path).
bool gemv_norm_out_supports(TensorType type, int64_t n, int64_t k);
// x (n floats) += w·a for a's int8 copy q8 (k columns), with no's copy and partials of the new x.
cudaError_t launch_gemv_i8_norm_out(TensorType type, const void* w, int64_t n, int64_t k, const void* q8, float* x,
                                    const RowNormOut& no, cudaStream_t stream);
// Knob (measurements, checks; VELLUM_CUDA_ROW_NORM_R): weight rows a warp of
// launch_gemv_i8_norm_out's 32-row blocks. 0 = the measured default by type (Q4_K/Q6_K 1, Q8_0 2);
// Q4_K/Q6_K take 1 or 2, Q8_0 1, 2 or 4 (other values: the default).
void set_gemv_norm_out_rows(int r);
// Round 48: launch_gemv_i8_norm_out sends a shape the staged producer takes (gemv_norm_out_staged.h)
// there: by default Q4_K / Q6_K with 4 rows a warp, Q8_0 never. Knob (VELLUM_CUDA_NORM_OUT_STAGED,
// measurements and checks): 1, 2, 4 or 8 rows a warp for every type, 0 = the register producers
// only, −1 = the environment's value again (unset: the default).
void set_gemv_norm_out_staged(int rows);

// `nin` (RowNormIn): the x copy is z's and every output is s·(w·z) (+ bias), s from nin's partials.
cudaError_t launch_gemv_i8(TensorType type, const GemvSegs& segs, int64_t k, const void* q8, cudaStream_t stream,
                           const RowNormIn& nin = {});
// Two launches of one x as one (round 29): a Q4_K and a Q6_K launch (either order) whose default
// variants are one weight row a warp (Q4_K_M's Q/K and V), each row's bits as in its own launch
// (since round 46 the Q4_K part runs 2 rows of 1 pass a warp).
bool gemv_i8_pair_supports(TensorType ta, const GemvSegs& a, TensorType tb, const GemvSegs& b, int64_t k);
cudaError_t launch_gemv_i8_pair(TensorType ta, const GemvSegs& a, TensorType tb, const GemvSegs& b, int64_t k, const void* q8,
                                cudaStream_t stream, const RowNormIn& nin = {});
cudaError_t launch_gemv_i8_swiglu(TensorType type, const void* gate, const void* up, int64_t n, int64_t k,
                                  const void* q8, float* out, cudaStream_t stream, const RowNormIn& nin = {});
// Whether a RowNormIn launch of this type takes the default kernels (not a persistent knob variant).
bool gemv_norm_in_supports(TensorType type, int64_t k);
// 2..kMaxI8Rows token rows (round 8): x rows quantized into q8 rows q8_bytes(k) apart, then one
// launch that reads each weight row once for all of them; row b of out (leading dimension ldo) gets
// exactly the bits a batch-1 launch gives that row. More rows (deterministic mode) run in groups
// of kMaxI8Rows, each reading the weights again (from L2 when the groups' blocks run together),
// or, from a row count where it wins (by type), on int8 tensor cores with the same bits (rows_mma.h,
// round 22).
inline constexpr int kMaxI8Rows = 8;
// Token rows (more than kMaxI8Rows) from which launch_gemv_i8_rows takes rows_mma: 0 = never, -1 =
// the measured default by type (Q8_0 16, Q4_K 16, Q6_K 32). The checks compare both paths.
void set_rows_mma_min_rows(int rows);
cudaError_t launch_quantize_q8_rows(const float* x, int64_t ldx, int rows, int64_t k, void* q8, cudaStream_t stream);
// ws: gemv_i8_rows_ws_floats(type, n, k, rows, sms) floats of partial sums when that is not 0 (the
// deterministic rows split over lane positions on `sms` multiprocessors), else may be null.
size_t gemv_i8_rows_ws_floats(TensorType type, int64_t n, int64_t k, int rows, int sms);
cudaError_t launch_gemv_i8_rows(TensorType type, const void* w, int64_t n, int64_t k, const void* q8, int rows, float* out,
                                int64_t ldo, const float* bias, float* ws, int sms, cudaStream_t stream);
// Round 52: the rows GEMV over several weights of one type that read the same x (a layer's Q, K and
// V; token row r of segment g at segs.out[g] + r · segs.rows[g]), or a SwiGLU pair (out[r · n + o] =
// silu(gate_o · x_r) · (up_o · x_r), a warp holding both rows of its outputs), in one launch. Every
// output keeps its batch-1 bits, as launch_gemv_i8_rows's, for the row counts this supports (not
// those launch_gemv_i8_rows sends to rows_mma).
bool gemv_i8_rows_fused_supports(TensorType type, int64_t k, int rows);
// Segments: every one but the last a multiple of 4 rows (a warp's rows lie in one).
bool gemv_i8_rows_segs_supports(TensorType type, const GemvSegs& segs, int64_t k, int rows);
cudaError_t launch_gemv_i8_rows_segs(TensorType type, const GemvSegs& segs, int64_t k, const void* q8, int rows, cudaStream_t stream);
cudaError_t launch_gemv_i8_rows_swiglu(TensorType type, const void* gate, const void* up, int64_t n, int64_t k, const void* q8,
                                       int rows, float* out, cudaStream_t stream);
// Bench knob (vellum_cuda_check's GEMV timings, not thread-safe): 0 = the default int8 kernel
// choice (Q8_0: the one-shot kernel since round 12). Q8_0: 1 / 2 / 4 = the persistent kernel with that many rows a warp (SwiGLU at least 2),
// 11 / 12 / 14 = the same with x staged in shared memory (an experiment), -1 = round 5's one-shot
// kernel. Q4_K / Q6_K (round 7's kernel): -1 / 2 / 4 / 8 = 1 row a warp with 1 / 2 / 4 / 8 passes of
// loads in flight, 21 / 22 / 24 = 2 rows a warp with 1 / 2 / 4. Every variant gives the same bits.
// The environment variable VELLUM_CUDA_GEMV_I8_VARIANT sets the initial value (experiments only).
void set_gemv_i8_variant(int v);
// Bench knob for F16/BF16 weights with f32 x: 0 = the persistent kernel (round 7) for SwiGLU pairs
// only, 1 = for every launch, 4 = every launch with four chunks a lane in flight instead of two,
// -1 = round 5's one-shot kernel everywhere. VELLUM_CUDA_GEMV16 sets the initial value.
void set_gemv16_variant(int v);

}  // namespace vellum::cuda
