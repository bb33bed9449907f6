// vellum::Model (include/vellum/model.h) on top of app::LoadedEngine: the same loading path and
// engine as `vellum run` and `vellum serve`, behind a pimpl so public headers stay internal-free.

#include "app/loaded_engine.h"
#include "core/error.h"
#include "engine/api/public_stream_impl.h"
#include "vellum/model.h"

namespace vellum {

struct Model::Impl {
  std::unique_ptr<app::LoadedEngine> loaded;
};

namespace {

app::EngineOptions to_engine_options(const ModelOptions& o) {
  app::EngineOptions e;
  e.model = o.model;
  e.device = o.device;
  e.threads = o.threads;
  e.context = o.context;
  e.block_size = o.block_size;
  e.kv_cache_mib = o.kv_cache_mib;
  e.max_num_batched_tokens = o.max_num_batched_tokens;
  e.max_num_seqs = o.max_num_seqs;
  e.max_prefill_chunk = o.max_prefill_chunk;
  e.prefix_caching = o.prefix_caching;
  return e;
}

engine::Request to_request(std::vector<int32_t> prompt, const GenerateOptions& o) {
  engine::Request r;
  r.prompt = std::move(prompt);
  r.sampling.temperature = o.temperature;
  r.sampling.top_k = o.top_k;
  r.sampling.top_p = o.top_p;
  r.sampling.min_p = o.min_p;
  r.sampling.seed = o.seed;
  r.sampling.repetition_penalty = o.repetition_penalty;
  r.sampling.presence_penalty = o.presence_penalty;
  r.sampling.frequency_penalty = o.frequency_penalty;
  r.sampling.logit_bias = o.logit_bias;
  r.max_tokens = o.max_tokens;
  r.min_tokens = o.min_tokens;
  r.n = o.n;
  r.stop_token_ids = o.stop_token_ids;
  r.ignore_eos = o.ignore_eos;
  r.logprobs = o.logprobs;
  return r;
}

}  // namespace

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

std::unique_ptr<Model> Model::open(const ModelOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->loaded = app::LoadedEngine::load(to_engine_options(options));
  return std::unique_ptr<Model>(new Model(std::move(impl)));
}

Stream Model::generate(const std::string& prompt, const GenerateOptions& options) {
  std::vector<int32_t> ids = impl_->loaded->tokenizer().encode(prompt, options.add_bos);
  if (ids.empty()) throw_error("the prompt encodes to no tokens");
  engine::GenerationOptions go;
  go.stop = options.stop;
  go.strip_leading_space = prompt.empty();  // SentencePiece's dummy prefix only at the start of the text
  auto& eng = impl_->loaded->engine();
  return Stream(std::make_unique<Stream::Impl>(eng, eng.submit(to_request(std::move(ids), options), go)));
}

Stream Model::generate_tokens(std::vector<int32_t> prompt, const GenerateOptions& options) {
  engine::GenerationOptions go;
  go.stop = options.stop;
  auto& eng = impl_->loaded->engine();
  return Stream(std::make_unique<Stream::Impl>(eng, eng.submit(to_request(std::move(prompt), options), go)));
}

std::vector<int32_t> Model::tokenize(const std::string& text, bool add_bos) const {
  return impl_->loaded->tokenizer().encode(text, add_bos);
}

std::string Model::detokenize(const std::vector<int32_t>& tokens) const {
  const uint32_t vocab = vocab_size();
  for (int32_t t : tokens) {
    if (t < 0 || static_cast<uint32_t>(t) >= vocab) throw_error("token {} is outside the vocabulary ({})", t, vocab);
  }
  return impl_->loaded->tokenizer().decode(tokens);
}

std::string Model::name() const { return impl_->loaded->model_name(); }
uint32_t Model::context() const { return impl_->loaded->context(); }
uint32_t Model::vocab_size() const { return static_cast<uint32_t>(impl_->loaded->tokenizer().vocab_size()); }
std::string Model::summary() const { return impl_->loaded->summary(); }

}  // namespace vellum
