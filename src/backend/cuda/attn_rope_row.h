// A layer's attention for a step of one token row (batch-1 decode, round 29): RoPE on the row's q
// and newest k, the newest k and v into their pool slot, and the paged attention over the row's
// context, in one kernel. Unfused, the step runs rope_store_kv's kernel and then a decode kernel
// that writes span partials and merges them in the row's last block: two kernels and a merge on a
// programmatic-launch chain where each kernel's own latency, not its bytes, is the cost.
#pragma once

#include <cstdint>

#include "backend/cuda/attention.h"
#include "backend/cuda/cuda_kernels.h"

namespace vellum::cuda {

// Positions a block covers (512 threads: 16 warps of 8 positions); a row of at most this many
// positions is one block per KV head and ≤ 4-head query group, with no partials to merge.
inline constexpr int kRopeRowSpan = 128;
// Padded positions (AttnParams::max_splits × kAttnSplit) the kernel takes; longer rows keep the
// unfused path (round 17's long kernel from 2 048 on).
inline constexpr int kRopeRowMaxPositions = 2048;

// The step's raw (unrotated) k and v rows (f32, kv_heads × head_dim each), its position and slot
// (device step inputs), and the RoPE frequencies. AttnParams::q holds the raw q row.
struct RopeRowInputs {
  const float* k = nullptr;
  const float* v = nullptr;
  const int32_t* position = nullptr;
  const int64_t* slot = nullptr;
  RopeParams rope;
  // Measurement only (VELLUM_CUDA_ROPE_ATTN_DBG, read by the launch; results wrong): bit 1 leaves
  // right after the programmatic wait, 2 loads no K/V before it, 4 computes no angles, 8 merges no
  // slices (each writes out), 16 skips the scores and the weighted sum, 32 reads no q / k / v after it.
  int dbg = 0;
};

// Whether the kernel takes this one-row launch: an F16/BF16 pool of 64 or 128 dims with aligned
// rows, at most kRopeRowMaxPositions padded positions, not the deterministic mode, and the fusion
// switched on (set_attn_rope_row; VELLUM_CUDA_ROPE_ATTN=0 turns it off for whole programs).
bool attn_rope_row_takes(const AttnParams& p, const RopeParams& rope);
void set_attn_rope_row(bool on);

// Row 0 of the step: p.q raw, p.out (and p.out_q8 when set) written; p.part_acc / part_ml /
// counters as launch_attention's for one row (used when the row spans more than one block).
cudaError_t launch_attention_rope_row(const AttnParams& p, const RopeRowInputs& in, cudaStream_t stream);

}  // namespace vellum::cuda
