#include "app/engine_options.h"

#include <CLI/CLI.hpp>

#include "core/error.h"

namespace vellum::app {

void EngineOptions::validate() const {
  if (block_size == 0 || block_size > 1024) throw_error("--block-size {} must be in [1, 1024]", block_size);
  if (max_num_batched_tokens == 0) throw_error("--max-num-batched-tokens must be positive");
  if (max_num_seqs == 0) throw_error("--max-num-seqs must be positive");
  if (!(gpu_memory_utilization > 0.0 && gpu_memory_utilization <= 1.0)) {
    throw_error("--gpu-memory-utilization {} must be in (0, 1]", gpu_memory_utilization);
  }
  if (kv_cache_dtype != "auto" && kv_cache_dtype != "f32" && kv_cache_dtype != "f16" && kv_cache_dtype != "bf16") {
    throw_error("--kv-cache-dtype '{}': expected f32, f16, bf16 or auto", kv_cache_dtype);
  }
  if (device != "cpu" && device != "cuda" && device != "auto" && device.rfind("cuda:", 0) != 0) {
    throw_error("--device '{}': expected cpu, cuda, cuda:N or auto", device);
  }
}

void add_engine_options(CLI::App& cmd, EngineOptions& o, bool model_required, bool batch_aliases) {
  auto* m = cmd.add_option("-m,--model", o.model, "GGUF model file");
  if (model_required) m->required();
  cmd.add_option("--device", o.device, "Compute device: cpu, cuda, cuda:N or auto")->capture_default_str();
  cmd.add_option("-t,--threads", o.threads, "CPU threads (0: all cores)");
  cmd.add_option("-c,--ctx-size", o.context, "Context length per sequence (0: the model's, at most 4096)");
  cmd.add_option("--block-size", o.block_size, "KV cache block size in tokens")->capture_default_str();
  cmd.add_option("--kv-cache-memory", o.kv_cache_mib,
                 "KV cache size in MiB (0: on a GPU by --gpu-memory-utilization, on the CPU room for "
                 "ctx-size × min(max-num-seqs, 8) tokens)");
  cmd.add_option("--gpu-memory-utilization", o.gpu_memory_utilization,
                 "Fraction of GPU memory for weights, activations and the KV cache, in (0, 1]")
      ->capture_default_str();
  cmd.add_option("--kv-cache-dtype", o.kv_cache_dtype, "KV cache element type: f32, f16, bf16 or auto (GPU f16, CPU f32)")
      ->capture_default_str();
  cmd.add_option(batch_aliases ? "-b,--max-num-batched-tokens,--batch-size" : "--max-num-batched-tokens",
                 o.max_num_batched_tokens,
                 "Token budget of one forward step")
      ->capture_default_str();
  cmd.add_option("--max-num-seqs", o.max_num_seqs, "Sequences running at once")->capture_default_str();
  cmd.add_option("--max-prefill-chunk", o.max_prefill_chunk,
                 "Prompt tokens per sequence per step (0: the whole budget)");
  cmd.add_flag("!--no-prefix-cache", o.prefix_caching, "Disable automatic prefix caching");
  cmd.add_flag("--deterministic", o.deterministic,
               "Batch-invariant GPU kernels: a sequence gets the same tokens whatever runs beside it "
               "(the CPU backend always does; on a GPU slower from ~8 sequences on)");
  cmd.add_option("--dense-weight-cache", o.dense_weight_cache_mib,
                 "CUDA: keep BF16 copies of quantized weights, up to this many MiB, for prefill and large decode "
                 "batches (no dequantization each step; batch-1 decode still reads the quantized weights; "
                 "llama3-8b needs ~14 100). 0: off");
  cmd.add_flag("--whole-logits", o.whole_logits,
               "Copy every sampled row's logits back to the host, also greedy and plain top-k rows that the "
               "backend otherwise reduces to their best candidates (the same tokens, slower; for comparisons)");
}

EngineOptions parse_engine_flags(const std::string& flags, EngineOptions base) {
  CLI::App app{"engine flags"};
  app.set_help_flag();
  add_engine_options(app, base, false);
  try {
    app.parse(flags, false);
  } catch (const CLI::ParseError& e) {
    throw_error("engine flags \"{}\": {}", flags, e.what());
  }
  base.validate();
  return base;
}

std::string describe(const EngineOptions& o) {
  return fmt::format("device={} threads={} ctx={} block={} budget={} seqs={} prefix-cache={}{}{}{}", o.device,
                     o.threads, o.context, o.block_size, o.max_num_batched_tokens, o.max_num_seqs,
                     o.prefix_caching ? "on" : "off", o.deterministic ? " deterministic" : "",
                     o.whole_logits ? " whole-logits" : "",
                     o.dense_weight_cache_mib > 0 ? fmt::format(" dense-weight-cache={}MiB", o.dense_weight_cache_mib) : "");
}

}  // namespace vellum::app
