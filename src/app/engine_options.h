#pragma once
// The engine settings every front end shares (vellum run, serve, bench, proof and the public API):
// model file, device, threads, context, KV pool, batching. One definition of the flags, so that
// `vellum proof --a "--block-size 32 --no-prefix-cache"` means what it means everywhere.

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace vellum::app {

struct EngineOptions {
  std::string model;                      // GGUF file
  std::string device = "auto";            // cpu | cuda | cuda:N | auto
  unsigned threads = 0;                   // CPU threads (0: all cores)
  uint32_t context = 0;                   // per-sequence context (0: the model's, at most 4096)
  uint32_t block_size = 16;               // KV block size in tokens
  uint32_t kv_cache_mib = 0;              // KV pool in MiB (0: by GPU utilization, or on the CPU
                                          // context × min(max_num_seqs, 8) tokens)
  double gpu_memory_utilization = 0.9;    // fraction of device memory for weights + activations + KV
  std::string kv_cache_dtype = "auto";    // f32 | f16 | bf16 | auto (the backend's: GPU f16, CPU f32)
  uint32_t max_num_batched_tokens = 512;  // tokens per forward step
  uint32_t max_num_seqs = 64;             // running sequences at most
  uint32_t max_prefill_chunk = 0;         // prompt tokens per sequence per step (0: the budget)
  bool prefix_caching = true;
  bool deterministic = false;             // batch-invariant GPU kernels (the CPU backend always is)
  bool whole_logits = false;              // copy every sampled row back (EngineConfig::reduce_logits off)
  uint32_t dense_weight_cache_mib = 0;    // CUDA: BF16 copies of quantized weights for many-row matmuls (0: off)

  // Throws vellum::Error naming the flag of an out-of-range value.
  void validate() const;
};

// Adds the flags above to `cmd` (the model flag is -m/--model, required when `model_required`).
// `batch_aliases` false leaves out -b/--batch-size (vellum bench uses -b for concurrent sequences).
void add_engine_options(CLI::App& cmd, EngineOptions& options, bool model_required = true,
                        bool batch_aliases = true);

// Applies a flag string such as "--block-size 32 --no-prefix-cache -t 2" on top of `base`; throws
// vellum::Error naming an unknown flag or a bad value.
EngineOptions parse_engine_flags(const std::string& flags, EngineOptions base);

// "device=cpu threads=2 ctx=4096 block=16 budget=512 seqs=64 prefix-cache=on": for logs and reports.
std::string describe(const EngineOptions& options);

}  // namespace vellum::app
