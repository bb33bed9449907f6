#pragma once
// The op interface every compute backend implements (DESIGN.md, "Backend"). A backend owns its
// memory (weights, activations, the KV block pool) and knows only tensors and ops: no requests,
// no scheduling, no models. The model drives it one op at a time; a CUDA backend may record the
// sequence into a graph, a CPU backend runs each op on its thread pool.
//
// Activations are dense row-major f32 matrices (one row per token). Weights keep their GGUF type
// and are used in place where the backend can (the CPU backend reads the memory-mapped file).
// The KV pool is block-major: block b holds, for every layer, K then V for its block_size tokens,
// [layers][K|V][block_size][kv_heads][head_dim], so a block moves as one contiguous copy.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "backend/logit_edits.h"
#include "backend/logit_rows.h"
#include "backend/rope_config.h"
#include "core/tensor_type.h"
#include "kv/kv_layout.h"

namespace vellum::backend {

// A dense f32 matrix [rows][cols] in backend memory.
struct Tensor {
  float* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  size_t elements() const { return static_cast<size_t>(rows * cols); }
};

// A weight in backend memory: `rows` rows of `cols` elements of `type` (a 1-D tensor has rows == 1).
struct Weight {
  std::string name;
  TensorType type = TensorType::F32;
  int64_t cols = 0;
  int64_t rows = 0;
  const void* data = nullptr;
  bool present() const { return data != nullptr; }
};


// What one forward step's ops need beyond tensors: the new tokens, their positions and KV slots,
// and, per sequence, where its queries are and which blocks hold its context.
struct StepSequence {
  uint32_t q_begin = 0, q_count = 0;  // rows of the step's tokens
  uint32_t n_past = 0;                // context tokens before the first new one
  uint32_t table_begin = 0;           // offset of its block table in StepInfo::block_tables
  uint32_t table_size = 0;
};

struct StepInfo {
  std::span<const int32_t> tokens;
  std::span<const int32_t> positions;
  std::span<const int64_t> slot_mapping;
  std::span<const StepSequence> sequences;
  std::span<const int32_t> block_tables;
  // The draws this step's draw_rows will get (one per logit row), or empty: known before the step,
  // so a device backend uploads them with the step's other inputs.
  std::span<const RowDraw> draws = {};
  // The logit edits edit_logits will apply (logit_edits.h: row r's are edits[edit_rows[r],
  // edit_rows[r + 1])), or empty; uploaded with the step's inputs too.
  std::span<const LogitEdit> edits = {};
  std::span<const uint32_t> edit_rows = {};
};

struct AttentionShape {
  uint32_t heads = 0, kv_heads = 0, head_dim = 0;
  float scale = 1.0f;  // usually 1/sqrt(head_dim)
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;

  // --- memory ---
  // A weight from host bytes (`rows` × `cols` of `type`). The bytes outlive the backend (they are
  // the memory-mapped model file), so a host backend may use them in place.
  virtual Weight upload_weight(const std::string& name, TensorType type, int64_t cols, int64_t rows,
                               std::span<const uint8_t> bytes) = 0;
  // Scratch activations; valid until the backend is destroyed or release_scratch() is called.
  virtual Tensor scratch(int64_t rows, int64_t cols) = 0;
  virtual void release_scratch() = 0;
  // The block pool (kv/kv_layout.h: per-layer shapes, block-major). Throws vellum::Error for a
  // layout the backend cannot hold (the CPU backend stores F32 K/V with equal K and V head sizes).
  virtual void init_kv(const kv::KvLayout& layout, uint32_t num_blocks) = 0;
  virtual uint32_t kv_blocks() const = 0;
  // KV element types init_kv accepts, and the one to use when the user names none. The defaults
  // are the host backend's: F32 only.
  virtual bool supports_kv_type(TensorType type) const { return type == TensorType::F32; }
  virtual TensorType default_kv_type() const { return TensorType::F32; }
  // Device memory as the driver reports it now, for sizing the KV pool by a utilization fraction;
  // nullopt for a host backend (its pool is sized by tokens or --kv-cache-memory).
  struct MemoryInfo {
    uint64_t free = 0, total = 0;
  };
  virtual std::optional<MemoryInfo> memory_info() const { return std::nullopt; }
  virtual void read(const Tensor& t, float* host) = 0;
  // Seconds the calling thread has spent blocked until the device finished its work, since
  // construction (a host backend computes in the caller: 0). Step profiles split the forward pass
  // into host work and this wait with it.
  virtual double device_wait_seconds() const { return 0; }
  // One line on what the backend did since construction (a device backend: steps, graph replays
  // and captures), for step profiles; empty when there is nothing to say.
  virtual std::string activity_report() const { return {}; }
  // out[r] = the index of the first maximum of row r, as std::max_element finds it (greedy sampling
  // without copying the rows back). Ends the step like read(). Host rows: backend/logit_rows.h.
  virtual void argmax_rows(const Tensor& x, std::span<int32_t> out) = 0;
  // The k largest logits of each row and their column ids (top-k sampling without copying the rows
  // back), best first in logit_before's order (core/logit_order.h): values[r·k + j], ids[r·k + j].
  // 1 <= k <= min(kMaxTopK, x.cols). Ends the step like read().
  static constexpr int kMaxTopK = 128;
  virtual void top_k_rows(const Tensor& x, int k, std::span<float> values, std::span<int32_t> ids) = 0;
  // out[r] = a token drawn from row r's softmax at draws[r].temperature (> 0) after draws[r]'s min-p
  // and top-p cuts, with the uniform draws[r].u in [0, 1): logit_rows.h's draw_of_row (sampling
  // without top-k, without copying the rows back). Its integer masses make the token independent of
  // the order a backend sums in; a device's exp may differ from the host's in the last bit, which
  // moves a token only where a mass rounds the other way and the cut or the draw lands on that unit.
  // Ends the step like read(). RowDraw: logit_rows.h.
  virtual void draw_rows(const Tensor& x, std::span<const RowDraw> draws, std::span<int32_t> out) = 0;
  // out[r] = logit_rows.h's log_normalizer of row r (logprobs without copying the rows back; a
  // device may sum in another fixed order). Ends the step like read().
  virtual void log_normalizers(const Tensor& x, std::span<double> out) = 0;
  // out[r] = x[r][cols[r]], cols[r] in [0, x.cols) (the logit of a token chosen on the backend).
  // Ends the step like read().
  virtual void pick_values(const Tensor& x, std::span<const int32_t> cols, std::span<float> out) = 0;
  // Applies the step's logit edits (StepInfo::edits) to the logit rows x (row r of x is logit row r),
  // in place, with logit_edits.h's apply_logit_edit: a request's bias, suppressed tokens and
  // penalties, so that its row can still be reduced here. Throws vellum::Error naming the problem
  // for edits that do not fit x (check_logit_edits).
  virtual void edit_logits(Tensor x) = 0;

  // --- step ---
  virtual void begin_step(const StepInfo& step) = 0;

  // --- ops (all f32 activations; `out` may alias an input only where noted) ---
  // out[i] = table[tokens[i]]
  virtual void embed(const Weight& table, Tensor out) = 0;
  // RMSNorm over each consecutive group of gain.cols elements of every row (gain.cols == x.cols for
  // a whole row; head_dim for per-head Q/K norm). out may alias x.
  virtual void rms_norm(const Tensor& x, const Weight& gain, float eps, Tensor out) = 0;
  // out = x · Wᵀ (+ bias): out[r][o] = Σ_i x[r][i] W[o][i]. out must not alias x.
  virtual void matmul(const Weight& w, const Tensor& x, Tensor out, const Weight* bias = nullptr) = 0;
  // In place on each head of x (x.cols = heads × head_dim), at the step's positions.
  virtual void rope(Tensor x, uint32_t head_dim, const RopeConfig& rope) = 0;
  // Writes K and V rows into their slots of `layer`.
  virtual void store_kv(uint32_t layer, const Tensor& k, const Tensor& v) = 0;
  // Causal grouped-query attention of the step's queries over each sequence's KV blocks.
  virtual void attention(uint32_t layer, const Tensor& q, const AttentionShape& shape, Tensor out) = 0;
  // out = silu(gate) * up; out may alias gate.
  virtual void swiglu(const Tensor& gate, const Tensor& up, Tensor out) = 0;
  // out = a + b; out may alias a or b.
  virtual void add(const Tensor& a, const Tensor& b, Tensor out) = 0;
  // out[j] = x[rows[j]]
  virtual void gather_rows(const Tensor& x, std::span<const int32_t> rows, Tensor out) = 0;
  // Copies whole KV blocks (copy-on-write, swap): pairs of (source, destination).
  virtual void copy_blocks(std::span<const std::pair<int32_t, int32_t>> pairs) = 0;

  // --- fused ops ---
  // Each default composes the ops above, so a backend that does not override it computes exactly
  // what the unfused sequence computes. A backend overrides one to save launches, thread-pool
  // barriers or passes over memory; its op checks then hold the fused op to the unfused one.

  // x = x + delta, then out = rms_norm(x) (the residual add that ends a block and the norm that
  // starts the next). out must not alias x or delta.
  virtual void add_rms_norm(Tensor x, const Tensor& delta, const Weight& gain, float eps, Tensor out) {
    add(x, delta, x);
    rms_norm(x, gain, eps, out);
  }
  // Several products of the same activations (Q, K and V): outs[i].out = x · outs[i].wᵀ (+ bias).
  struct MatmulOut {
    const Weight* w = nullptr;
    Tensor out;
    const Weight* bias = nullptr;
  };
  virtual void matmul_multi(const Tensor& x, std::span<const MatmulOut> outs) {
    for (const MatmulOut& o : outs) matmul(*o.w, x, o.out, o.bias);
  }
  // out = silu(x · gateᵀ) * (x · upᵀ): the feed-forward's first half. `up_out` has out's shape and
  // may receive the up projection; out must not alias x.
  virtual void matmul_swiglu(const Weight& gate, const Weight& up, const Tensor& x, Tensor out, Tensor up_out) {
    matmul(gate, x, out);
    matmul(up, x, up_out);
    swiglu(out, up_out, out);
  }
  // The part of a layer between its attention and the next layer's (round 19): o = attn·woᵀ;
  // x += o, h = rms_norm(x, ffn_norm); g = silu(h·gateᵀ)·(h·upᵀ) (u may receive h·upᵀ);
  // o = g·downᵀ; x += o; then, with next_norm, h = rms_norm(x, next_norm) and next_qkv's products
  // of h (the next layer's Q/K/V). o is scratch: a backend may add the two products into x without
  // writing it (the CUDA backend's many-row tail, round 34). For one token row the CUDA backend
  // carries the two norms in the GEMVs around them (round 43, gemv_kernels.h's RowNormOut/In) and
  // has an opt-in one-kernel version (layer_kernel.h).
  struct LayerTail {
    const Weight* wo = nullptr;
    const Weight* ffn_norm = nullptr;
    const Weight* gate = nullptr;
    const Weight* up = nullptr;
    const Weight* down = nullptr;
    const Weight* next_norm = nullptr;  // null after the last layer: only x += o
    std::span<const MatmulOut> next_qkv;
    float eps = 0.0f;
  };
  virtual void layer_tail(const Tensor& attn, Tensor x, Tensor h, Tensor o, Tensor g, Tensor u, const LayerTail& t) {
    matmul(*t.wo, attn, o);
    add_rms_norm(x, o, *t.ffn_norm, t.eps, h);
    matmul_swiglu(*t.gate, *t.up, h, g, u);
    matmul(*t.down, g, o);
    if (t.next_norm == nullptr) {
      add(x, o, x);
      return;
    }
    add_rms_norm(x, o, *t.next_norm, t.eps, h);
    if (!t.next_qkv.empty()) matmul_multi(h, t.next_qkv);
  }
  // RoPE on q and k (in place, at the step's positions), then k and v into their slots of `layer`.
  virtual void rope_store_kv(uint32_t layer, Tensor q, Tensor k, const Tensor& v, uint32_t head_dim,
                             const RopeConfig& rc) {
    rope(q, head_dim, rc);
    rope(k, head_dim, rc);
    store_kv(layer, k, v);
  }
  // Round 37: the next matmul_multi(x, {q, k, v}) is `layer`'s Q/K/V and rope_attention(layer, q, k,
  // v, head_dim, rc, ...) follows it with nothing between that writes them; a backend may do the
  // RoPE and K/V store in the Q/K/V launch (CUDA, many rows). A hint only: rope_attention is still
  // called and gives the same results either way.
  virtual void expect_rope(uint32_t /*layer*/, const Tensor& /*q*/, const Tensor& /*k*/, const Tensor& /*v*/, uint32_t /*head_dim*/,
                           const RopeConfig& /*rc*/) {}
  // A layer's attention from its raw Q/K/V rows: rope_store_kv, then attention of q into out. q and
  // k are the step's scratch and may be left unrotated (the CUDA backend fuses the three for a step
  // of one token row, attn_rope_row.h).
  virtual void rope_attention(uint32_t layer, Tensor q, Tensor k, const Tensor& v, uint32_t head_dim, const RopeConfig& rc,
                              const AttentionShape& shape, Tensor out) {
    rope_store_kv(layer, q, k, v, head_dim, rc);
    attention(layer, q, shape, out);
  }
};

}  // namespace vellum::backend
