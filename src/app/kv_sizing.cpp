#include "app/kv_sizing.h"

#include <algorithm>

#include "core/error.h"
#include "kv/kv_config.h"

namespace vellum::app {

uint64_t activation_reserve_bytes(const model::HParams& hp, uint32_t max_num_batched_tokens) {
  // Per token: residual, norm output, attention output and projections, Q/K/V, gate/up/down, logits.
  const uint64_t per_token = 4ull * hp.dim + hp.q_dim() + 2ull * hp.kv_dim() + 3ull * hp.ffn + hp.vocab;
  const uint64_t activations = uint64_t(max_num_batched_tokens) * per_token * sizeof(float);
  const uint64_t bf16_weight = uint64_t(std::max(hp.ffn, hp.vocab)) * hp.dim * 2;
  return activations + bf16_weight + (512ull << 20);
}

uint64_t gpu_kv_budget(double utilization, uint64_t total, uint64_t free, uint64_t reserve,
                       uint64_t one_context_bytes) {
  if (!(utilization > 0.0 && utilization <= 1.0)) {
    throw_error("--gpu-memory-utilization {} must be in (0, 1]", utilization);
  }
  const uint64_t used = total > free ? total - free : 0;
  const uint64_t allowed = static_cast<uint64_t>(utilization * static_cast<double>(total));
  const uint64_t budget = allowed > used + reserve ? allowed - used - reserve : 0;
  if (budget < one_context_bytes) {
    throw_error(
        "--gpu-memory-utilization {}: {} of the device's {} leaves {} for the KV cache after {} in use (weights, "
        "context) and {} reserved for activations, but one context needs {}: raise --gpu-memory-utilization, "
        "lower -c, use --kv-cache-dtype f16, or give --kv-cache-memory",
        utilization, kv::format_bytes(allowed), kv::format_bytes(total), kv::format_bytes(budget),
        kv::format_bytes(used), kv::format_bytes(reserve), kv::format_bytes(one_context_bytes));
  }
  return budget;
}

uint64_t useful_kv_blocks(uint64_t budget_blocks, uint32_t max_num_seqs, uint64_t blocks_per_context) {
  return std::min(budget_blocks, kUsefulContextsPerSeq * max_num_seqs * blocks_per_context);
}

}  // namespace vellum::app
