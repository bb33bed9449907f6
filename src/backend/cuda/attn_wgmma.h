// The tensor-core prefill attention on warpgroup MMA (wgmma, sm_90a; round 27): what
// launch_attention_tc runs for 16-bit pools with 128 dims in the default mode. The same rows,
// masking and online softmax as attn_tc_kernel (attention.cu), with S = Q·Kᵀ and O += P·V as
// wgmma instead of mma.sync (see attn_wgmma.cu).
#pragma once

#include <cstdint>

#include "backend/cuda/attention.h"

namespace vellum::cuda {

// Whether the wgmma kernel takes this launch (F16/BF16 pool, 128 dims, no deterministic spans) and
// it is switched on (set_attn_wg; VELLUM_CUDA_ATTN_WG=0 turns it off for whole programs).
bool attn_wg_takes(const AttnParams& p);
void set_attn_wg(bool on);
bool attn_wg_on();
// K/V positions a block stages per step: 128 (the default) or 64 (VELLUM_CUDA_ATTN_WG_KV; a
// measurement knob, as VELLUM_CUDA_ATTN_WG_PP=0 (no turns) and VELLUM_CUDA_ATTN_WG_STAGES=3).
void set_attn_wg_kv(int positions);
int attn_wg_kv();
// Who copies K/V for blocks of two heads: 0 every thread (round 27), 1 a copying warpgroup with
// cp.async (round 31), 2 one warp driving the bulk tensor copy engine (round 39), -1 the default
// (2 where the pool's layout allows it, else 1); VELLUM_CUDA_ATTN_WG_WS sets it for whole programs.
// attn_wg_launches counts the launches that each copier took.
void set_attn_wg_copier(int copier);
int64_t attn_wg_launches(int copier);
// Checks only: every block's K/V stages start as NaN, so rows the copier leaves unwritten show.
void set_attn_wg_poison(bool on);

cudaError_t launch_attention_wg(const AttnParams& p, const AttnTile* tiles, int n_tiles, cudaStream_t stream);

}  // namespace vellum::cuda
