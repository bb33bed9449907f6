#pragma once
// A model loaded and running: the GGUF file, its tokenizer, a backend, the bound transformer and the
// threaded engine, built from EngineOptions in one place for every front end. Members are declared
// in dependency order, so destruction stops the engine before anything it uses goes away.

#include <memory>
#include <string>
#include <vector>

#include "app/engine_options.h"
#include "backend/backend.h"
#include "engine/engine.h"
#include "gguf/gguf_file.h"
#include "model/transformer.h"
#include "tokenizer/tokenizer.h"

namespace vellum::app {

class LoadedEngine {
 public:
  // Opens, validates and binds the model, sizes the KV pool and starts the engine thread. Throws
  // vellum::Error naming the problem (bad file, unknown architecture, a pool that cannot hold one
  // context, an unavailable device).
  static std::unique_ptr<LoadedEngine> load(const EngineOptions& options);
  ~LoadedEngine();

  engine::Engine& engine() { return *engine_; }
  const tokenizer::Tokenizer& tokenizer() const { return *tokenizer_; }
  const gguf::GgufFile& file() const { return *file_; }
  const model::HParams& hparams() const { return model_->hparams(); }
  backend::Backend& backend() { return *backend_; }
  const EngineOptions& options() const { return options_; }
  const engine::EngineConfig& config() const { return config_; }
  const std::vector<int32_t>& eog_tokens() const { return eog_; }

  uint32_t context() const { return config_.max_seq_len; }
  // Bytes of one KV block as the pool stores it (every layer's K and V in the pool's element type).
  uint64_t kv_bytes_per_block() const;
  // The model's name for APIs: general.name, else the file name without directory and extension.
  std::string model_name() const;
  // tokenizer.chat_template, or empty.
  std::string chat_template() const;
  double load_seconds() const { return load_seconds_; }
  // One line for logs: architecture, size, context, KV pool and the settings that matter.
  std::string summary() const;

 private:
  LoadedEngine() = default;

  EngineOptions options_;
  std::unique_ptr<gguf::GgufFile> file_;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer_;
  std::unique_ptr<backend::Backend> backend_;
  std::unique_ptr<model::Transformer> model_;
  engine::EngineConfig config_;
  std::vector<int32_t> eog_;
  std::unique_ptr<engine::Engine> engine_;
  double load_seconds_ = 0;
};

}  // namespace vellum::app
