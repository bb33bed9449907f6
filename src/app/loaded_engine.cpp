#include "app/loaded_engine.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "app/kv_sizing.h"
#include "backend/backend_factory.h"
#include "core/error.h"
#include "kv/kv_config.h"

namespace vellum::app {

std::unique_ptr<LoadedEngine> LoadedEngine::load(const EngineOptions& options) {
  options.validate();
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<LoadedEngine> le(new LoadedEngine());
  le->options_ = options;
  le->file_ = std::make_unique<gguf::GgufFile>(gguf::GgufFile::open(options.model));
  le->tokenizer_ = std::make_unique<tokenizer::Tokenizer>(tokenizer::Tokenizer::from_gguf(*le->file_));
  le->backend_ = backend::make_backend({options.device, options.threads, options.deterministic,
                                        uint64_t(options.dense_weight_cache_mib) << 20});
  le->model_ = std::make_unique<model::Transformer>(*le->file_, *le->backend_);
  const auto& hp = le->model_->hparams();

  engine::EngineConfig& ec = le->config_;
  ec.max_seq_len = options.context != 0 ? options.context : std::min<uint32_t>(hp.context_train, 4096);
  if (ec.max_seq_len == 0) throw_error("{}: the model states no context length; give -c", options.model);
  ec.block_size = options.block_size;
  ec.prefix_caching = options.prefix_caching;
  ec.reduce_logits = !options.whole_logits;
  ec.scheduler.max_num_batched_tokens = options.max_num_batched_tokens;
  ec.scheduler.max_num_seqs = options.max_num_seqs;
  ec.scheduler.max_prefill_chunk = options.max_prefill_chunk;
  kv::KvLayout layout = le->model_->kv_layout(options.block_size);
  const TensorType kv_type = options.kv_cache_dtype == "auto" ? le->backend_->default_kv_type()
                             : options.kv_cache_dtype == "f16" ? TensorType::F16
                             : options.kv_cache_dtype == "bf16" ? TensorType::BF16
                                                                : TensorType::F32;
  if (!le->backend_->supports_kv_type(kv_type)) {
    throw_error("--kv-cache-dtype {}: the {} backend stores the KV cache in f32 only", options.kv_cache_dtype,
                le->backend_->name());
  }
  for (auto& l : layout.layers) l.type = kv_type;
  ec.kv_type = kv_type;
  const auto mem = le->backend_->memory_info();
  if (options.kv_cache_mib > 0) {
    ec.num_blocks = kv::KvConfig::from_memory(layout, uint64_t(options.kv_cache_mib) << 20, ec.max_seq_len).num_blocks;
  } else if (mem) {  // a device backend: what --gpu-memory-utilization leaves after the weights
    const uint64_t one = kv::blocks_for_tokens(ec.max_seq_len, layout.block_size) * layout.bytes_per_block();
    const uint64_t budget = gpu_kv_budget(options.gpu_memory_utilization, mem->total, mem->free,
                                          activation_reserve_bytes(hp, options.max_num_batched_tokens), one);
    const uint64_t per_context = kv::blocks_for_tokens(ec.max_seq_len, layout.block_size);
    ec.num_blocks = static_cast<uint32_t>(useful_kv_blocks(
        kv::KvConfig::from_memory(layout, budget, ec.max_seq_len).num_blocks, options.max_num_seqs, per_context));
  } else {
    const uint64_t tokens = uint64_t(ec.max_seq_len) * std::min<uint32_t>(options.max_num_seqs, 8);
    ec.num_blocks = kv::KvConfig::from_tokens(layout, tokens, ec.max_seq_len).num_blocks;
  }
  for (uint32_t id = 0; id < le->tokenizer_->vocab_size(); ++id) {
    if (le->tokenizer_->is_eog(static_cast<int32_t>(id))) le->eog_.push_back(static_cast<int32_t>(id));
  }
  le->engine_ = std::make_unique<engine::Engine>(*le->model_, *le->backend_, ec, *le->tokenizer_, le->eog_);
  le->load_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return le;
}

LoadedEngine::~LoadedEngine() { engine_.reset(); }

std::string LoadedEngine::model_name() const {
  const std::string name = file_->metadata().get_or<std::string>("general.name", "");
  if (!name.empty()) return name;
  return std::filesystem::path(options_.model).stem().string();
}

std::string LoadedEngine::chat_template() const {
  return file_->metadata().get_or<std::string>("tokenizer.chat_template", "");
}

uint64_t LoadedEngine::kv_bytes_per_block() const {
  return model_->kv_layout(config_.block_size, config_.kv_type).bytes_per_block();
}

std::string LoadedEngine::summary() const {
  const auto& hp = model_->hparams();
  const kv::KvLayout layout = model_->kv_layout(config_.block_size, config_.kv_type);
  const uint64_t kv_tokens = uint64_t(config_.num_blocks) * config_.block_size;
  return fmt::format(
      "{} ({}: {} layers, dim {}, vocab {}) on {}; context {}; KV {} blocks × {} tokens = {} tokens ({}, {}); "
      "budget {} tokens/step, {} seqs, prefix cache {}; loaded in {:.2f} s",
      model_name(), hp.arch_name, hp.layers, hp.dim, hp.vocab, backend_->name(), config_.max_seq_len,
      config_.num_blocks, config_.block_size, kv_tokens, kv::format_bytes(layout.bytes_per_block() * config_.num_blocks),
      tensor_type_name(config_.kv_type),
      config_.scheduler.max_num_batched_tokens, config_.scheduler.max_num_seqs, config_.prefix_caching ? "on" : "off",
      load_seconds_);
}

}  // namespace vellum::app
