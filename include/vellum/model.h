#pragma once
// vellum public API: a loaded model with its engine thread (continuous batching, paged KV cache,
// prefix sharing). Thread-safe: any thread may call generate() and read its own streams.
// Errors (a bad file, an invalid option or request) are thrown as std::runtime_error whose message
// names the problem.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vellum/options.h"
#include "vellum/stream.h"

namespace vellum {

class Model {
 public:
  static std::unique_ptr<Model> open(const ModelOptions& options);
  ~Model();  // stops the engine; unfinished streams end with FinishReason::Aborted
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  // Generates from text (encoded with the model's tokenizer) or from token ids.
  Stream generate(const std::string& prompt, const GenerateOptions& options);
  Stream generate_tokens(std::vector<int32_t> prompt, const GenerateOptions& options);

  std::vector<int32_t> tokenize(const std::string& text, bool add_bos) const;
  std::string detokenize(const std::vector<int32_t>& tokens) const;

  std::string name() const;     // general.name, else the file name
  uint32_t context() const;     // tokens per sequence
  uint32_t vocab_size() const;
  std::string summary() const;  // one line for logs

  struct Impl;

 private:
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vellum
