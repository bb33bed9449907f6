#pragma once
// Quantized weights times bf16 activations for prefill-sized row counts, built the way Hopper GEMMs
// are: roles by warpgroup instead of every thread doing everything. One thread streams each
// 64-element K stage (the x tile in wgmma's 128-byte swizzle, the weight rows' raw 16-byte pieces)
// into a shared-memory ring with the bulk tensor copy engine, completing on mbarriers; no block
// barrier in the K walk (round 15's dq_mma: ~1 500 cycles a stage, latency-bound). Q8_0, Q4_K and
// Q6_K. Plans and results go through dq_mma.h's DqMmaPlan:
// - rs 4 (round 28; the backend's default at 33..1 024 token rows): two warpgroups each dequantize
//   exactly their own wgmma A fragments (dq_weights.cuh: dq_mma's values) and multiply from
//   registers, one stage in flight; f32 or bf16 out.
// - rs 3 (round 26; opt-in): a group of warps dequantizes each stage into a swizzled bf16 A tile
//   and two warpgroups multiply with both operands in shared memory.
// Plain C++17 interface (host side: cuda_backend.cpp); kernels: dq_tma.cu.

#include <cstdint>

#include <cuda_runtime.h>

#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/dq_mma.h"
#include "core/tensor_type.h"

namespace vellum::cuda {

// Q8_0, Q4_K and Q6_K, k a multiple of 256, and a driver that encodes tensor maps.
bool dq_tma_supports(TensorType type, int64_t k);
// `kind` 3: round 26's kernel (A tiles dequantized by warps of their own), 4: round 28's (each
// multiplying warpgroup dequantizes its own register A fragments). Tiles of 128 weight rows x BT
// tokens, one block a multiprocessor, K split to fill one wave when the tiles do not. Kind 3: BT
// 256, or 192 where that wastes less of the last wave and of the last token tile (128 up to 128
// rows). Kind 4: 64 up to 64 rows, 128 up to 128 rows and for small weights (n·k ≤ 4096²) up to
// 512, else 256. `bt` forces the token tile (kind 4: 64 / 128 / 256; kind 3: 128 / 192 / 256),
// `splits` > 0 the split. `type`: Q8_0's small weights take 256-token tiles above 256 rows (its
// dequantization costs a 128-token stage more: round 33).
DqMmaPlan dq_tma_plan(int64_t n, int64_t k, int64_t m, int sms, int bt = 0, int splits = 0, int kind = 3,
                      TensorType type = TensorType::Q4_K);
// As launch_dq_mma (x bf16, rows k apart, 16-byte aligned; out f32, rows ldo apart).
cudaError_t launch_dq_tma(TensorType type, const void* w, int64_t n, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan,
                          float* ws, int32_t* counters, float* out, int64_t ldo, const float* bias, cudaStream_t stream);
// The register-A kernel stores its tile through shared memory, 16 bytes a store (round 32); true:
// each value from the accumulators as before (the same bits; VELLUM_CUDA_DQ_TMA_DIRECT_STORE=1).
void set_dq_tma_direct_store(bool on);
bool dq_tma_direct_store();
// Round 35: the adding store (DqSeg::add) as one bulk f32 reduction in L2 a token row, so the block
// reads no x (the default); false: x read by the block as in round 34. The same bits either way (x +
// o rounded once; the bulk add flushes subnormals, as the f32 atomics do: tma.cuh).
// VELLUM_CUDA_DQ_BULK_ADD=0 turns it off.
void set_dq_tma_bulk_add(bool on);
bool dq_tma_bulk_add();
// The same with out in bf16 (rounded from the f32 sums + bias), for plan.rs 4 only.
cudaError_t launch_dq_tma_bf16(TensorType type, const void* w, int64_t n, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan,
                               float* ws, int32_t* counters, void* out, int64_t ldo, const float* bias, cudaStream_t stream);


// Round 33: several weights of one K times the same x in one register-A launch (a layer's Q, K and
// V), each weight's row tiles after the previous one's. One type, or Q4_K with Q6_K.
constexpr int kMaxDqSegs = 3;
struct DqSeg {
  TensorType type;
  const void* w;  // device layout (dequant.cuh), n rows
  int64_t n;
  void* out;  // f32 (or bf16), rows ldo apart
  int64_t ldo;
  const float* bias;  // or null
  // Round 34: out += the product (+ bias), f32 out only (a residual stream: x += o without o). Not
  // with the direct store (set_dq_tma_direct_store).
  bool add = false;
};
bool dq_tma_group_supports(const DqSeg* segs, int count, int64_t k);
// The plan of one weight with all the segments' row tiles (kind 4; bt, splits as dq_tma_plan).
DqMmaPlan dq_tma_group_plan(const DqSeg* segs, int count, int64_t k, int64_t m, int sms, int bt = 0, int splits = 0);
cudaError_t launch_dq_tma_group(const DqSeg* segs, int count, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan, float* ws,
                                int32_t* counters, bool out_bf16, cudaStream_t stream);
// Round 37 (opt-in; VELLUM_CUDA_QKV_ROPE=1): RoPE and the K/V store in a grouped launch's end. Segments 0, 1
// and 2 are a layer's Q, K and V (f32 out, stored as before); each tile (128 rows: one head of
// head_dim 128, rotary half 64) then also goes out as q rotated into q16 [rows][q_cols] (the pool's 16-bit
// type), k rotated and v into their pool slots: rope_kv_rows_kernel's arithmetic on the same f32
// values with its cos/sin values (launch_rope_table), so the same bits as launch_rope_kv_rows after
// the plain launch.
struct DqRope {
  void* q16 = nullptr;
  int64_t q_cols = 0;
  const float2* cs = nullptr;  // the step's table: cs[r·half + i]
  int head_dim = 0, half = 0, interleaved = 0;
  KvPoolView kv;  // the layer's; F16 or BF16
  const int64_t* slots = nullptr;
};
// The segments' and the heads' shapes (the pointers are checked at the launch).
bool dq_rope_supports(const DqSeg* segs, int count, const DqRope& rope);
cudaError_t launch_dq_tma_group_rope(const DqSeg* segs, int count, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan, float* ws,
                                     int32_t* counters, const DqRope& rope, cudaStream_t stream);
// What launch_dq_tma_group (or launch_dq_tma's register-A kernel) last refused, "" if nothing: for
// error messages.
const char* dq_tma_last_problem();

// A group whose 256-token tiles fill some whole waves and leave a short last one, cut in two
// launches (round 33): the main one's tiles fill the waves exactly; the rest of the rows (a cut
// segment's later rows, then the later segments) go as 128-token tiles in at most one wave (the
// same sums: bit for bit). At 512 rows, llama3-8b's gate and up (448 tiles, 3.4 waves) take 3 waves
// and a wave of half-size tiles instead of 4 waves. main_count 0: no such cut (no whole wave, the
// plan's K split, or a tail too large). K unsplit in both.
struct DqWaveSplit {
  DqSeg main[kMaxDqSegs], tail[kMaxDqSegs];
  int main_count = 0, tail_count = 0;
  DqMmaPlan main_plan, tail_plan;
};
DqWaveSplit dq_tma_wave_split(const DqSeg* segs, int count, int64_t k, int64_t m, int sms, bool out_bf16);

// Round 36: a SwiGLU's gate and up (n x k each, one type) in one register-A launch whose block y
// multiplies gate rows 64y.. in one warpgroup and the same up rows in the other, and whose end
// writes silu(gate)·up in bf16 (rows ldo apart, 16-byte aligned for vector stores): the gate and up
// sums rounded to bf16 and swiglu16_kernel's arithmetic, so the same bits as two launch_dq_tma_bf16
// of the same token tile and K split and launch_swiglu_bf16. Gate and up are not written. n % 8 == 0.
bool dq_tma_swiglu_supports(TensorType type, int64_t n, int64_t k);
// `like`'s token tile and K split (the unfused launches' plan, so the same sums) over n's 64-row tiles.
DqMmaPlan dq_tma_swiglu_plan(int64_t n, int64_t m, const DqMmaPlan& like);
cudaError_t launch_dq_tma_swiglu(TensorType type, const void* gate, const void* up, int64_t n, int64_t k, const void* x, int64_t m,
                                 const DqMmaPlan& plan, float* ws, int32_t* counters, void* out, int64_t ldo, cudaStream_t stream);
// dq_tma_wave_split for the fused launch: rows [0, main_rows) as whole waves of 256-token tiles, the
// rest (tail_gate / tail_up / tail_out: the pointers advanced by main_rows) as 128-token tiles in at
// most one wave, or (split_tail, round 37; the backend's default since round 38) as 256-token tiles with a two-way K split in at
// most one wave (tail_plan.splits 2: its launch needs the K split's scratch; other sums than `like`'s
// in those rows). main_rows 0: no cut (`like` not 256-token tiles unsplit, no whole wave, or a tail
// too large). out: bf16.
struct DqSwigluCut {
  int64_t main_rows = 0;
  DqMmaPlan main_plan, tail_plan;
  const void *tail_gate = nullptr, *tail_up = nullptr;
  void* tail_out = nullptr;
};
DqSwigluCut dq_tma_swiglu_cut(TensorType type, const void* gate, const void* up, void* out, int64_t n, int64_t k, int64_t m, int sms,
                              const DqMmaPlan& like, bool split_tail = false);

}  // namespace vellum::cuda
