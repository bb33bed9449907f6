#pragma once
// How much device memory the KV pool gets under --gpu-memory-utilization (vLLM's rule): the
// fraction F of the device's total memory, less what is already in use once the weights are loaded
// (cudaMemGetInfo: weights, the CUDA context, other processes) and less an estimate of the
// activation scratch and workspaces that the first forward steps will allocate.

#include <cstdint>

#include "model/hparams.h"

namespace vellum::app {

// Bytes the forward steps will allocate beyond the weights and the KV pool (an upper estimate):
// f32 activations of a max_num_batched_tokens step, one BF16-dequantized weight (cuBLAS path for
// quantized weights), and a fixed 512 MiB for the attention workspace (256 MiB) and cuBLAS.
uint64_t activation_reserve_bytes(const model::HParams& hp, uint32_t max_num_batched_tokens);

// F × total − (total − free) − reserve, in bytes. Throws vellum::Error naming every number when the
// result is below `one_context_bytes` (one max-length sequence) or F is outside (0, 1].
uint64_t gpu_kv_budget(double utilization, uint64_t total, uint64_t free, uint64_t reserve,
                       uint64_t one_context_bytes);

// The most blocks worth holding: kUsefulContextsPerSeq full contexts for each of max_num_seqs
// sequences (the running set plus room for cached prefixes). A budget beyond that only grows the
// host-side block bookkeeping: a tiny model on a large GPU would otherwise get millions of blocks.
constexpr uint64_t kUsefulContextsPerSeq = 4;
uint64_t useful_kv_blocks(uint64_t budget_blocks, uint32_t max_num_seqs, uint64_t blocks_per_context);

}  // namespace vellum::app
