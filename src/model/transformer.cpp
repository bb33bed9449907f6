#include "model/transformer.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace vellum::model {

using backend::Tensor;
using backend::Weight;

Transformer::Transformer(const gguf::GgufFile& file, backend::Backend& backend)
    : file_(file), backend_(backend), hp_(read_hparams(file.metadata())) {
  const uint64_t dim = hp_.dim, q = hp_.q_dim(), kv = hp_.kv_dim(), ffn = hp_.ffn, hd = hp_.head_dim;
  token_embd_ = bind("token_embd.weight", {dim, hp_.vocab == 0 ? 0 : hp_.vocab});
  if (hp_.vocab == 0) hp_.vocab = static_cast<uint32_t>(token_embd_.rows);
  output_norm_ = bind("output_norm.weight", {dim});
  output_ = bind("output.weight", {dim, hp_.vocab}, false);
  if (!output_.present()) output_ = token_embd_;  // tied embeddings
  if (const auto* freqs = file.find_tensor("rope_freqs.weight")) {
    if (freqs->type != TensorType::F32) throw_error("rope_freqs.weight: expected F32");
    bind("rope_freqs.weight", {hp_.rope.dims / 2});  // checks the shape
    // Read from the file, not the bound weight: its data may be in device memory.
    const auto* p = reinterpret_cast<const float*>(file.tensor_data(*freqs).data());
    hp_.rope.freq_factors.assign(p, p + hp_.rope.dims / 2);
  }
  layers_.resize(hp_.layers);
  for (uint32_t l = 0; l < hp_.layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    LayerWeights& L = layers_[l];
    L.attn_norm = bind(p + "attn_norm.weight", {dim});
    L.wq = bind(p + "attn_q.weight", {dim, q});
    L.wk = bind(p + "attn_k.weight", {dim, kv});
    L.wv = bind(p + "attn_v.weight", {dim, kv});
    L.wo = bind(p + "attn_output.weight", {q, dim});
    if (hp_.qkv_bias) {
      L.bq = bind(p + "attn_q.bias", {q});
      L.bk = bind(p + "attn_k.bias", {kv});
      L.bv = bind(p + "attn_v.bias", {kv});
    }
    if (hp_.qk_norm) {
      L.q_norm = bind(p + "attn_q_norm.weight", {hd});
      L.k_norm = bind(p + "attn_k_norm.weight", {hd});
    }
    L.ffn_norm = bind(p + "ffn_norm.weight", {dim});
    L.gate = bind(p + "ffn_gate.weight", {dim, ffn});
    L.up = bind(p + "ffn_up.weight", {dim, ffn});
    L.down = bind(p + "ffn_down.weight", {ffn, dim});
  }
}

Weight Transformer::bind(const std::string& name, std::vector<uint64_t> shape, bool required) {
  const gguf::TensorInfo* t = file_.find_tensor(name);
  if (t == nullptr) {
    if (required) throw_error("{}: missing tensor {} (architecture {})", file_.source(), name, hp_.arch_name);
    return {};
  }
  if (shape.size() == 2 && shape[1] == 0) shape[1] = t->shape.size() == 2 ? t->shape[1] : 0;  // vocab from the tensor
  if (t->shape != shape) {
    std::string want = "[";
    for (size_t i = 0; i < shape.size(); ++i) want += (i ? ", " : "") + std::to_string(shape[i]);
    throw_error("{}: tensor {} has shape {}, expected {}]", file_.source(), name, t->shape_string(), want);
  }
  if (shape.size() == 1 && t->type != TensorType::F32) {
    throw_error("{}: tensor {} is {}, expected F32", file_.source(), name, tensor_type_name(t->type));
  }
  const int64_t rows = shape.size() == 2 ? static_cast<int64_t>(shape[1]) : 1;
  return backend_.upload_weight(name, t->type, static_cast<int64_t>(shape[0]), rows, file_.tensor_data(*t));
}

std::vector<float> Transformer::forward(const engine::Batch& batch) {
  const std::span<const float> logits = forward(batch, {}).logits;
  return {logits.begin(), logits.end()};
}

Transformer::StepOutput Transformer::forward(const engine::Batch& batch, std::span<const int32_t> keep,
                                             std::span<const backend::RowDraw> draws,
                                             std::span<const backend::LogitEdit> edits, std::span<const uint32_t> edit_rows,
                                             std::span<const int32_t> logprobs) {
  auto& be = backend_;
  batch.validate(be.kv_blocks());
  for (int32_t token : batch.tokens) {
    if (token < 0 || static_cast<uint32_t>(token) >= hp_.vocab) throw_error("token id {} is outside the vocabulary ({})", token, hp_.vocab);
  }
  const int64_t n = static_cast<int64_t>(batch.size());
  if (n == 0) return {};
  const int64_t m = static_cast<int64_t>(batch.logit_rows.size());
  if (!keep.empty() && keep.size() != batch.logit_rows.size()) {
    throw_error("forward: {} keep entries for {} logit rows", keep.size(), m);
  }
  int top_k = 0;  // the largest k asked
  bool draw = false;
  for (const int32_t k : keep) {
    if (k < kDraw || k > backend::Backend::kMaxTopK || (k > 0 && static_cast<uint32_t>(k) >= hp_.vocab)) {
      throw_error("forward: keep {} for a logit row (0 whole, 1 argmax, 2..{} top-k below the vocabulary of {}, {} drawn)",
                  k, backend::Backend::kMaxTopK, hp_.vocab, kDraw);
    }
    top_k = std::max(top_k, k >= 2 ? k : 0);
    draw = draw || k == kDraw;
  }
  if (!logprobs.empty() && logprobs.size() != keep.size()) {
    throw_error("forward: {} logprobs entries for {} logit rows", logprobs.size(), keep.size());
  }
  bool stats = false;  // some reduced row reports logprobs
  for (size_t i = 0; i < logprobs.size(); ++i) {
    const int32_t n = logprobs[i];
    if (n < -1 || n > backend::Backend::kMaxTopK) {
      throw_error("forward: logprobs {} for a logit row (-1, or 0..{})", n, backend::Backend::kMaxTopK);
    }
    if (n >= 0 && keep[i] != 0) {  // its alternatives (a vocabulary of fewer tokens has them all)
      stats = true;
      top_k = std::max(top_k, static_cast<int>(std::min<uint32_t>(static_cast<uint32_t>(std::max(n, 1)), hp_.vocab)));
    }
  }
  if (draw && draws.size() != keep.size()) {
    throw_error("forward: {} draws for {} logit rows with rows drawn on the backend", draws.size(), keep.size());
  }

  std::vector<backend::StepSequence> seqs;
  std::vector<int32_t> tables;
  for (const auto& s : batch.sequences) {
    seqs.push_back({s.token_begin, s.token_count, s.n_past, static_cast<uint32_t>(tables.size()),
                    static_cast<uint32_t>(s.block_table.size())});
    tables.insert(tables.end(), s.block_table.begin(), s.block_table.end());
  }
  // Rows not drawn get a harmless draw: draw_rows takes every row (drawn ones read theirs).
  std::vector<backend::RowDraw> all_draws;
  if (draw) {
    all_draws.assign(draws.begin(), draws.end());
    for (size_t i = 0; i < keep.size(); ++i) {
      if (keep[i] != kDraw) all_draws[i] = {};
    }
  }
  backend::check_logit_edits(edits, edit_rows, static_cast<size_t>(m), hp_.vocab);
  be.begin_step({batch.tokens, batch.positions, batch.slot_mapping, seqs, tables, all_draws, edits, edit_rows});

  const int64_t dim = hp_.dim, qd = hp_.q_dim(), kvd = hp_.kv_dim(), ffn = hp_.ffn;
  Tensor x = be.scratch(n, dim), h = be.scratch(n, dim), q = be.scratch(n, qd), k = be.scratch(n, kvd),
         v = be.scratch(n, kvd), attn = be.scratch(n, qd), o = be.scratch(n, dim), g = be.scratch(n, ffn),
         u = be.scratch(n, ffn);
  const backend::AttentionShape shape{hp_.heads, hp_.kv_heads, hp_.head_dim,
                                      1.0f / std::sqrt(static_cast<float>(hp_.head_dim))};
  be.embed(token_embd_, x);
  // Fused ops (backend.h) where two steps share data: the residual add that ends a block with the
  // norm that starts the next, Q/K/V from one normed input, gate/up with SwiGLU, RoPE with the KV store.
  be.rms_norm(x, layers_.front().attn_norm, hp_.rms_eps, h);
  using MatmulOut = backend::Backend::MatmulOut;
  const auto qkv_of = [&](const LayerWeights& L) {
    return std::array<MatmulOut, 3>{MatmulOut{&L.wq, q, hp_.qkv_bias ? &L.bq : nullptr},
                                    MatmulOut{&L.wk, k, hp_.qkv_bias ? &L.bk : nullptr},
                                    MatmulOut{&L.wv, v, hp_.qkv_bias ? &L.bv : nullptr}};
  };
  // The Q/K/V launch may do RoPE and the K/V store (expect_rope), unless q and k are normed first.
  const auto hint = [&](uint32_t layer) {
    if (!hp_.qk_norm) be.expect_rope(layer, q, k, v, hp_.head_dim, hp_.rope);
  };
  hint(0);
  be.matmul_multi(h, qkv_of(layers_.front()));
  for (const LayerWeights& L : layers_) {
    const uint32_t layer = static_cast<uint32_t>(&L - layers_.data());
    if (hp_.qk_norm) {
      be.rms_norm(q, L.q_norm, hp_.rms_eps, q);
      be.rms_norm(k, L.k_norm, hp_.rms_eps, k);
    }
    be.rope_attention(layer, q, k, v, hp_.head_dim, hp_.rope, shape, attn);
    // The rest of the layer with the next layer's norm and Q/K/V (one fused op: backend.h).
    const bool last = layer + 1 == layers_.size();
    const std::array<MatmulOut, 3> next = last ? std::array<MatmulOut, 3>{} : qkv_of(layers_[layer + 1]);
    backend::Backend::LayerTail tail;
    tail.wo = &L.wo, tail.ffn_norm = &L.ffn_norm, tail.gate = &L.gate, tail.up = &L.up, tail.down = &L.down;
    tail.next_norm = last ? nullptr : &layers_[layer + 1].attn_norm;
    tail.next_qkv = last ? std::span<const MatmulOut>{} : std::span<const MatmulOut>(next);
    tail.eps = hp_.rms_eps;
    if (!last) hint(layer + 1);
    be.layer_tail(attn, x, h, o, g, u, tail);
  }
  StepOutput result;
  if (m > 0) {
    Tensor last = be.scratch(m, dim), normed = be.scratch(m, dim), out = be.scratch(m, hp_.vocab);
    be.gather_rows(x, batch.logit_rows, last);
    be.rms_norm(last, output_norm_, hp_.rms_eps, normed);
    be.matmul(output_, normed, out);
    if (!edit_rows.empty()) be.edit_logits(out);
    std::vector<int32_t> full;  // logit rows copied back whole
    bool greedy = false;
    for (int64_t i = 0; i < m; ++i) {
      const int32_t k = keep.empty() ? 0 : keep[static_cast<size_t>(i)];
      if (k == 0) full.push_back(static_cast<int32_t>(i));
      greedy = greedy || k == 1;
    }
    result.argmax.assign(static_cast<size_t>(m), -1);
    if (greedy) {
      be.argmax_rows(out, result.argmax);  // all rows: cheaper on a device than gathering the greedy ones
      for (int64_t i = 0; i < m; ++i) {
        if (keep[static_cast<size_t>(i)] != 1) result.argmax[static_cast<size_t>(i)] = -1;
      }
    }
    if (draw) {  // all rows again
      result.drawn.assign(static_cast<size_t>(m), -1);
      be.draw_rows(out, all_draws, result.drawn);
      for (int64_t i = 0; i < m; ++i) {
        if (keep[static_cast<size_t>(i)] != kDraw) result.drawn[static_cast<size_t>(i)] = -1;
      }
    }
    if (top_k > 0) {  // all rows again; each sampled row reads its first keep[i] candidates
      result.top_k = top_k;
      result.top_values.resize(static_cast<size_t>(m * top_k));
      result.top_ids.resize(static_cast<size_t>(m * top_k));
      be.top_k_rows(out, top_k, result.top_values, result.top_ids);
    }
    if (stats) {  // logprobs of reduced rows: their normalizers, and the logits of tokens chosen here
      // Only the rows asking: gathered first when others share the step.
      std::vector<int32_t> asking, picks;
      for (int64_t i = 0; i < m; ++i) {
        const auto u = static_cast<size_t>(i);
        if (logprobs[u] < 0 || keep[u] == 0) continue;
        asking.push_back(static_cast<int32_t>(i));
        picks.push_back(keep[u] == 1 ? result.argmax[u] : keep[u] == kDraw ? result.drawn[u] : 0);  // top-k: unused
      }
      const auto n = static_cast<int64_t>(asking.size());
      Tensor rows = out;
      if (n < m) {
        rows = be.scratch(n, hp_.vocab);
        be.gather_rows(out, asking, rows);
      }
      std::vector<double> z(asking.size());
      std::vector<float> v(asking.size());
      be.log_normalizers(rows, z);
      be.pick_values(rows, picks, v);
      result.log_z.assign(static_cast<size_t>(m), std::numeric_limits<double>::quiet_NaN());
      result.token_logit.assign(static_cast<size_t>(m), std::numeric_limits<float>::quiet_NaN());
      for (size_t j = 0; j < asking.size(); ++j) {
        const auto i = static_cast<size_t>(asking[j]);
        result.log_z[i] = z[j];
        if (keep[i] == 1 || keep[i] == kDraw) result.token_logit[i] = v[j];
      }
    }
    const size_t floats = full.size() * hp_.vocab;
    if (logits_buf_.size() < floats) logits_buf_.resize(floats);  // grows only: pages stay mapped
    if (static_cast<int64_t>(full.size()) == m) {
      be.read(out, logits_buf_.data());
    } else if (!full.empty()) {
      Tensor rows = be.scratch(static_cast<int64_t>(full.size()), hp_.vocab);
      be.gather_rows(out, full, rows);
      be.read(rows, logits_buf_.data());
    }
    result.logits = std::span<const float>(logits_buf_.data(), floats);
  }
  be.release_scratch();
  return result;
}

}  // namespace vellum::model
