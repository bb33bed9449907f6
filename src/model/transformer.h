#pragma once
// A decoder-only transformer bound to a backend: hyper-parameters from GGUF, weights uploaded (or
// used in place) and checked against the architecture's shapes, and one forward pass over a Batch
// for every supported architecture (Llama, Qwen2, Qwen3): what differs is flags in HParams.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "backend/backend.h"
#include "engine/batch.h"
#include "gguf/gguf_file.h"
#include "kv/kv_layout.h"
#include "model/hparams.h"

namespace vellum::model {

struct LayerWeights {
  backend::Weight attn_norm, wq, wk, wv, wo, bq, bk, bv, q_norm, k_norm;
  backend::Weight ffn_norm, gate, up, down;
};

class Transformer {
 public:
  // Binds `file`'s tensors (which must outlive the Transformer) on `backend`. Throws vellum::Error
  // naming a missing tensor, a wrong shape or an unsupported type.
  Transformer(const gguf::GgufFile& file, backend::Backend& backend);

  const HParams& hparams() const { return hp_; }
  // The KV block layout this model needs (every layer alike today).
  kv::KvLayout kv_layout(uint32_t block_size, TensorType kv_type = TensorType::F32) const {
    return kv::KvLayout::uniform(hp_.layers, hp_.kv_heads, hp_.head_dim, kv_type, block_size);
  }
  backend::Backend& backend() { return backend_; }

  // Runs the batch; returns logits for batch.logit_rows, row after row (rows × vocab).
  std::vector<float> forward(const engine::Batch& batch);

  // The same step when some logit rows are only needed for their first maximum (greedy sampling
  // with nothing applied to the logits): argmax_only[i] != 0 for such a logit row i. Those rows are
  // reduced on the backend and never copied back.
  struct StepOutput {
    std::vector<float> logits;    // the other rows, packed in logit-row order (count × vocab)
    std::vector<int32_t> argmax;  // per logit row: its first maximum where asked, -1 elsewhere
  };
  StepOutput forward(const engine::Batch& batch, std::span<const uint8_t> argmax_only);

 private:
  backend::Weight bind(const std::string& name, std::vector<uint64_t> shape, bool required = true);

  const gguf::GgufFile& file_;
  backend::Backend& backend_;
  HParams hp_;
  backend::Weight token_embd_, output_norm_, output_;
  std::vector<LayerWeights> layers_;
};

}  // namespace vellum::model
