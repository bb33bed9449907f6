// vellum gguf synth: a random-weight model with the shapes of a real architecture.

#include <cstdio>

#include "cli/command.h"
#include "core/error.h"
#include "model/synthetic_model.h"

namespace vellum::cli {
namespace {

struct SynthArgs {
  std::string preset;
  model::SynthOptions options;
  std::string arch;
  uint32_t dim = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, vocab = 0, context = 0;
  float rope_base = 0.0f;
  std::string vocab_path;
  bool tied = false, untied = false;
};

const CommandRegistration registration("gguf", [](CLI::App& parent) {
  auto a = std::make_shared<SynthArgs>();
  std::string presets;
  for (const auto& n : model::synthetic_preset_names()) presets += (presets.empty() ? "" : ", ") + n;
  CLI::App* cmd = parent.add_subcommand("synth", "Write a random-weight model of a real architecture's shape");
  cmd->add_option("--preset", a->preset, "Shape preset: " + presets);
  cmd->add_option("--arch", a->arch, "Architecture: llama, qwen2, qwen3 (overrides the preset)");
  cmd->add_option("--dim", a->dim, "Embedding width");
  cmd->add_option("--layers", a->layers, "Transformer blocks");
  cmd->add_option("--heads", a->heads, "Attention heads");
  cmd->add_option("--kv-heads", a->kv_heads, "Key/value heads");
  cmd->add_option("--head-dim", a->head_dim, "Head size (default dim/heads)");
  cmd->add_option("--ffn", a->ffn, "Feed-forward width");
  cmd->add_option("--vocab-size", a->vocab, "Vocabulary size when no --vocab is given");
  cmd->add_option("-c,--context", a->context, "Context length");
  cmd->add_option("--rope-base", a->rope_base, "RoPE frequency base");
  cmd->add_flag("--tied", a->tied, "Share the output matrix with the token embedding");
  cmd->add_flag("--untied", a->untied, "Write a separate output matrix");
  cmd->add_option("--vocab", a->vocab_path, "GGUF whose tokenizer.* metadata (and vocab size) to use");
  cmd->add_option("-t,--type", a->options.type, "Weight type: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K, Q4_K_M, …");
  cmd->add_option("-o,--output", a->options.output_path, "GGUF file to write")->required();
  cmd->add_option("--seed", a->options.seed, "Random seed");
  cmd->add_option("--threads", a->options.threads, "Threads (default: all)");
  cmd->callback([a] {
    model::SyntheticShape s = a->preset.empty() ? model::synthetic_preset("tiny") : model::synthetic_preset(a->preset);
    if (!a->arch.empty()) s.arch = a->arch;
    if (a->dim) s.dim = a->dim;
    if (a->layers) s.layers = a->layers;
    if (a->heads) s.heads = a->heads;
    if (a->kv_heads) s.kv_heads = a->kv_heads;
    if (a->dim || a->heads) s.head_dim = 0;  // re-derived from dim/heads unless given
    if (a->head_dim) s.head_dim = a->head_dim;
    if (a->ffn) s.ffn = a->ffn;
    if (a->vocab) s.vocab = a->vocab;
    if (a->context) s.context = a->context;
    if (a->rope_base > 0) s.rope_base = a->rope_base;
    if (a->tied && a->untied) throw_error("--tied and --untied exclude each other");
    if (a->tied) s.tied_embeddings = true;
    if (a->untied) s.tied_embeddings = false;
    model::SynthOptions o = a->options;
    o.shape = s;
    if (!a->vocab_path.empty()) o.vocab_path = a->vocab_path;
    const auto out = model::write_synthetic_model(o);
    std::printf("wrote %s: %s, dim %u, %u layers, %u heads (%u kv, head %u), ffn %u, vocab %u, context %u, %s\n",
                o.output_path.c_str(), out.arch.c_str(), out.dim, out.layers, out.heads, out.kv_heads, out.head_dim,
                out.ffn, out.vocab, out.context, o.type.c_str());
  });
});

}  // namespace
}  // namespace vellum::cli
