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

  // The same step when some logit rows are needed only in part: keep[i] for logit row i is 0 for the
  // whole row, 1 for its first maximum (greedy sampling with nothing applied to the logits), k >= 2
  // for its k best candidates (top-k sampling with nothing applied before the cut; k at most
  // Backend::kMaxTopK and below the vocabulary), kDraw for a token drawn from its softmax on the
  // backend (Backend::draw_rows with draws[i]: sampling without top-k, min-p and top-p cut there). The partial rows are
  // reduced on the backend and never copied back (a 128k-token vocabulary is 0.5 MB a row). An
  // empty keep: every row whole. `draws` is empty or has an entry per logit row (read where keep[i]
  // is kDraw).
  static constexpr int32_t kDraw = -1;
  struct StepOutput {
    // The whole rows, packed in logit-row order (count × vocab). Points into a buffer the model
    // reuses (no page faults on a fresh 65 MB vector every step at 128 rows of a 128k vocabulary):
    // valid until the next forward.
    std::span<const float> logits;
    std::vector<int32_t> argmax;  // per logit row: its first maximum where keep is 1, -1 elsewhere
    std::vector<int32_t> drawn;   // per logit row: its drawn token where keep is kDraw, -1 elsewhere
    // Rows with keep[i] = k >= 2: their candidates (Backend::top_k_rows) at [i·top_k, i·top_k + k),
    // top_k being the largest k asked (0 when none was).
    int top_k = 0;
    std::vector<float> top_values;
    std::vector<int32_t> top_ids;
    // Reduced rows asking for logprobs (NaN elsewhere): the row's log normalizer, and for argmax and
    // drawn rows the chosen token's logit.
    std::vector<double> log_z;
    std::vector<float> token_logit;
  };
  // `edits` / `edit_rows` (backend/logit_edits.h, empty for none): logit edits applied on the
  // backend to the logit rows before any of them is reduced or copied back.
  // `logprobs` (empty, or per logit row: -1, or the alternatives 0..kMaxTopK a reduced row reports):
  // such rows also get their log normalizer (log_z), the logit of the token chosen on the backend
  // (token_logit, argmax and drawn rows) and that many best candidates (the whole vocabulary when
  // it is smaller).
  StepOutput forward(const engine::Batch& batch, std::span<const int32_t> keep,
                     std::span<const backend::RowDraw> draws = {}, std::span<const backend::LogitEdit> edits = {},
                     std::span<const uint32_t> edit_rows = {}, std::span<const int32_t> logprobs = {});

 private:
  backend::Weight bind(const std::string& name, std::vector<uint64_t> shape, bool required = true);

  const gguf::GgufFile& file_;
  backend::Backend& backend_;
  HParams hp_;
  backend::Weight token_embd_, output_norm_, output_;
  std::vector<LayerWeights> layers_;
  std::vector<float> logits_buf_;  // host logits of the last step (StepOutput::logits)
};

}  // namespace vellum::model
