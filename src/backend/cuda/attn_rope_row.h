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

// Positions a block covers (256 threads: 8 warps of 16 positions); the blocks of a query head are
// one thread block cluster of up to 8 (the portable cluster size).
inline constexpr int kRopeRowSpan = 128;
// Padded positions (AttnParams::max_splits × kAttnSplit) the kernel takes: 8 slices. Decode graphs
// pad a one-row step's positions to a power of two of at least 256 (2 slices), and from 2 048 on
// round 17's long kernel takes the row; longer rows keep the unfused path.
inline constexpr int kRopeRowMaxPositions = 8 * kRopeRowSpan;

// The step's raw (unrotated) k and v rows (f32, kv_heads × head_dim each), its position and slot
// (device step inputs), and the RoPE frequencies. AttnParams::q holds the raw q row.
struct RopeRowInputs {
  const float* k = nullptr;
  const float* v = nullptr;
  const int32_t* position = nullptr;
  const int64_t* slot = nullptr;
  RopeParams rope;
  // Measurement only (VELLUM_CUDA_ROPE_ATTN_DBG, read by the launch; results wrong): 1 leaves right
  // after the programmatic wait, so that a step measures what the kernel's work after it costs; 2
  // spins 2 µs there first (what a step charges for time spent after the wait).
  int dbg = 0;
};

// Whether the kernel takes this one-row launch: an F16/BF16 pool of 64 or 128 dims with aligned
// rows, at most kRopeRowMaxPositions padded positions, not the deterministic mode, and the fusion
// switched on (VELLUM_CUDA_ROPE_ATTN=0 turns it off for whole programs: measurements).
bool attn_rope_row_takes(const AttnParams& p, const RopeParams& rope);

// Row 0 of the step: p.q raw, p.out (and p.out_q8 when set) written; p.part_acc, part_ml and
// counters unused. V is held in registers (2 blocks an SM) while the device holds every cluster of
// the launch at once, else in shared memory (3 blocks an SM; round 49); VELLUM_CUDA_ROPE_ATTN_VSMEM=0
// / 1 forces either (measurements).
cudaError_t launch_attention_rope_row(const AttnParams& p, const RopeRowInputs& in, cudaStream_t stream);
// The clusters of p's launch (slices × heads) the current device holds at once, V in shared
// memory or in registers (cudaOccupancyMaxActiveClusters; -1 if it fails): below p.heads, the
// launch runs in more than one wave.
int attn_rope_row_max_clusters(const AttnParams& p, bool v_smem);

}  // namespace vellum::cuda
