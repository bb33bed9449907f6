#pragma once
// The CUDA backend: weights, activations and the KV block pool in device memory, every op a kernel
// on one stream (cuda_kernels.h). Matmul: fused dequantize-GEMV for up to kMaxGemvRows token rows,
// cuBLAS above (F32: SGEMM; other types: BF16 tensor-core GEMM on dequantized weight tiles).
// Step metadata (tokens, positions, slots, block tables) goes up once per step from pinned memory;
// decode-only steps replay CUDA graphs (cuda_graphs.h).
// Compiled only with the CUDA toolkit (VELLUM_HAVE_CUDA); see docs/cuda.md.

#include <memory>
#include <vector>

#include "backend/backend.h"

namespace vellum::backend {

class CudaBackend final : public Backend {
 public:
  // Throws vellum::Error when the device does not exist or cannot be initialised.
  explicit CudaBackend(int device = 0);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override;

  Weight upload_weight(const std::string& name, TensorType type, int64_t cols, int64_t rows,
                       std::span<const uint8_t> bytes) override;
  Tensor scratch(int64_t rows, int64_t cols) override;
  void release_scratch() override;
  void init_kv(const kv::KvLayout& layout, uint32_t num_blocks) override;
  uint32_t kv_blocks() const override;
  void read(const Tensor& t, float* host) override;
  double device_wait_seconds() const override;  // from a step's last launch to its results on the host
  std::string activity_report() const override;  // steps, graph replays / early launches / captures, host ms a step
  void argmax_rows(const Tensor& x, std::span<int32_t> out) override;  // on the device (argmax.cu)
  void top_k_rows(const Tensor& x, int k, std::span<float> values, std::span<int32_t> ids) override;  // topk.cu
  void draw_rows(const Tensor& x, std::span<const RowDraw> draws, std::span<int32_t> out) override;  // row_draw.cu
  void edit_logits(Tensor x) override;  // logit_edits.cu
  void log_normalizers(const Tensor& x, std::span<double> out) override;                       // log_normalizer.cu
  void pick_values(const Tensor& x, std::span<const int32_t> cols, std::span<float> out) override;  // log_normalizer.cu

  void begin_step(const StepInfo& step) override;

  void embed(const Weight& table, Tensor out) override;
  void rms_norm(const Tensor& x, const Weight& gain, float eps, Tensor out) override;
  void matmul(const Weight& w, const Tensor& x, Tensor out, const Weight* bias) override;
  void rope(Tensor x, uint32_t head_dim, const RopeConfig& rope) override;
  void store_kv(uint32_t layer, const Tensor& k, const Tensor& v) override;
  void attention(uint32_t layer, const Tensor& q, const AttentionShape& shape, Tensor out) override;
  void swiglu(const Tensor& gate, const Tensor& up, Tensor out) override;
  void add(const Tensor& a, const Tensor& b, Tensor out) override;
  void gather_rows(const Tensor& x, std::span<const int32_t> rows, Tensor out) override;
  void copy_blocks(std::span<const std::pair<int32_t, int32_t>> pairs) override;
  // Fused ops (docs/cuda.md, round 5): one kernel each at batch 1 (add_rms_norm: any batch); the
  // Backend defaults where a shape or type does not fit the fused kernels.
  void add_rms_norm(Tensor x, const Tensor& delta, const Weight& gain, float eps, Tensor out) override;
  void matmul_multi(const Tensor& x, std::span<const MatmulOut> outs) override;
  void matmul_swiglu(const Weight& gate, const Weight& up, const Tensor& x, Tensor out, Tensor up_out) override;
  void rope_store_kv(uint32_t layer, Tensor q, Tensor k, const Tensor& v, uint32_t head_dim, const RopeConfig& rc) override;
  void rope_attention(uint32_t layer, Tensor q, Tensor k, const Tensor& v, uint32_t head_dim, const RopeConfig& rc,
                      const AttentionShape& shape, Tensor out) override;
  void layer_tail(const Tensor& attn, Tensor x, Tensor h, Tensor o, Tensor g, Tensor u, const LayerTail& t) override;
  // F32, F16 or BF16 K/V (16-bit: converted on store, read into f32 math); F16 by default.
  bool supports_kv_type(TensorType type) const override;
  TensorType default_kv_type() const override { return TensorType::F16; }
  std::optional<MemoryInfo> memory_info() const override;  // cudaMemGetInfo on this device

  // --- for tests and benchmarks ---
  void write(Tensor t, const float* host);
  void fill(Tensor t, float value);  // e.g. NaN, to prove an op writes every element
  // Block `block` of the pool as raw f32 (layout: kv/kv_layout.h).
  std::vector<float> read_kv_block(int32_t block);
  void synchronize();
  size_t weight_bytes() const;  // GGUF bytes of the uploaded weights
  // Rows at or below which matmul uses the GEMV kernels for every type (cuBLAS above); by default
  // 1 for F32/F16/BF16 and 2 for quantized weights. The check sets 8 to test the GEMV path.
  void set_gemv_max_rows(int rows);
  // Batch-1 Q8_0/Q4_K/Q6_K matmul on int8 dot products with x quantized per 32 (default on; off:
  // the f32 GEMV on the exact dequantized weights).
  void set_int8_gemv(bool on);
  // Q8_0/Q4_0/Q5_0/Q4_K/Q5_K/Q6_K matmul of 2+ rows on int8 tensor cores with x quantized per 32
  // (mmq.h; default on; off: the GEMV up to set_gemv_max_rows, dequantize + cuBLAS above).
  void set_mmq(bool on);
  // Rows up to which mmq is used (default cuda::kMmqMaxRows; the check sets more to test it).
  void set_mmq_max_rows(int64_t rows);
  // Q8_0/Q4_K/Q6_K matmul of min_rows..max_rows token rows on bf16 tensor cores, the weights
  // dequantized once a block (dq_mma.h). Default: Q4_K / Q6_K at 17..128 token rows, Q8_0 at 17..64
  // (faster there end to end, docs/cuda.md round 15); true forces it for every supported weight at
  // min_rows..max_rows (default 9..256), false turns it off.
  void set_dq_mma(bool on);
  void set_dq_mma_rows(int64_t min_rows, int64_t max_rows);
  // Which dq_mma kernel Q4_K / Q6_K take (0 round 11's, 1 / 2 round 15's register-A kernel, 2 the
  // default; dq_mma.h; 3 / 4 the bulk-copy kernels of rounds 26 / 28, dq_tma.h, wherever dq_mma runs).
  void set_dq_rs(int kernel);
  // The bulk-copy kernels for Q8_0 / Q4_K / Q6_K matmuls: 0 off, 1 (default) at 33..1 024 token
  // rows, 2 at 33 rows and more.
  void set_dq_tma(int mode);
  // Round 33: matmul_multi's quantized weights that take the register-A bulk-copy kernel (a layer's
  // Q, K and V) as one launch (default on; VELLUM_CUDA_DQ_GROUP=0 turns it off at construction).
  void set_dq_tma_group(bool on);
  int64_t dq_tma_group_calls() const;  // matmul_multi calls that took one grouped launch (checks)
  // Many-row quantized SwiGLUs whose gate and up took whole waves + a last wave of smaller tiles
  // (two grouped launches; with set_dq_tma_group off they take one launch each).
  int64_t dq_wave_split_calls() const;
  // Round 36: a many-row quantized SwiGLU as one launch whose tiles hold gate and up rows side by side
  // and write silu(gate)·up in bf16 (default on; VELLUM_CUDA_DQ_SWIGLU=0 turns it off at
  // construction). Its f32 rows, made on demand, are those bf16 rows widened.
  void set_dq_tma_swiglu(bool on);
  // Round 37 (default on since round 38): the fused SwiGLU's last wave as 256-token tiles split two
  // ways in K (Q8_0 included) instead of 128-token tiles (VELLUM_CUDA_DQ_CUT_SPLIT=0: off).
  void set_dq_swiglu_split_tail(bool on);
  int64_t dq_tma_swiglu_calls() const;  // SwiGLUs that took it (checks)
  // The bulk-copy kernels' token tile (64 / 128 / 256) and the dequantizing kernels' K split; 0 lets
  // the plan choose (default; VELLUM_CUDA_DQ_TMA_BT, VELLUM_CUDA_DQ_MMA_SPLITS).
  void set_dq_tma_plan(int token_tile, int splits);
  int dq_rs() const;
  // Token rows (2.. up to 8) up to which Q8_0/Q4_K/Q6_K matmuls take the many-row int8 GEMV instead
  // of mmq (default 8, Q8_0 4; this sets both).
  void set_int8_gemv_max_rows(int rows);
  // 4..8 token rows of Q8_0 / Q4_K / Q6_K on int8 tensor cores (gemv_mma.h; default on, never in the
  // deterministic mode); off: the int8 rows GEMV (Q8_0: up to 4 rows, then mmq), which gives every
  // row its batch-1 bits.
  void set_gemv_mma(bool on);
  // Round 52: at 2-16 token rows on the int8 rows kernels, Q/K/V of one type in one launch and gate/up
  // with the SwiGLU in the launch (default on; the same bits as the launches one by one).
  void set_rows_fused(bool on);
  // Whether a batch-1 int8 matmul of x would read the int8 copy its producer wrote (a norm, or a
  // one-row attention) instead of quantizing x (for the checks).
  bool has_int8_copy(const Tensor& x) const;
  // Round 19: a batch-1 layer's output projection, feed-forward and next Q/K/V as one persistent
  // kernel on Q4_K/Q6_K weights (layer_kernel.h; the same bits as the ops it replaces). Default off
  // (slower so far, docs/cuda.md round 19); VELLUM_CUDA_LAYER_KERNEL=1 turns it on at construction.
  void set_layer_kernel(bool on);
  int64_t layer_kernel_calls() const;  // layer_tail calls that took the kernel (checks)
  // Round 43 (default on; VELLUM_CUDA_ROW_NORM=0 turns it off at construction): a one-row layer
  // tail's two norms carried by the GEMVs around them instead of two norm kernels (gemv_kernels.h,
  // RowNormOut / RowNormIn; not the same bits as the norm kernel's path, within its bounds).
  void set_row_norm(bool on);
  int64_t row_norm_calls() const;  // layer_tail calls that took it (checks)
  int64_t rope_row_calls() const;      // rope_attention calls that took the one-row kernel (checks)
  // Round 34: many-row rope_attention whose rows all take the warpgroup prefill attention runs
  // launch_rope_kv_rows (q rotated into a 16-bit copy; q and k left as they were) and the attention
  // on that copy, writing its output's bf16 copy for the output projection (the same bits as
  // rope_store_kv + attention + the conversion). Default on; VELLUM_CUDA_ROPE_ROWS=0 turns it off.
  void set_rope_rows(bool on);
  int64_t rope_rows_calls() const;  // rope_attention calls that took that path (checks)
  // Round 37 (opt-in): expect_rope's hint lets the next grouped Q/K/V launch rotate q into the
  // 16-bit copy and store the rotated k and v in its end (the f32 q, k, v as before), and that path
  // then leaves out its rope_kv_rows launch: the same bits. Off by default (round 38: slower on an
  // H200); VELLUM_CUDA_QKV_ROPE=1 turns it on at construction.
  void expect_rope(uint32_t layer, const Tensor& q, const Tensor& k, const Tensor& v, uint32_t head_dim, const RopeConfig& rc) override;
  void set_qkv_rope(bool on);
  int64_t qkv_rope_calls() const;  // rope_attention calls whose RoPE the Q/K/V launch had done (checks)
  // Round 34: many-row layer tails add the output and down projections into x inside the register-A
  // dequantizing GEMM (no o) and the norms after them write only their bf16 copy (f32 rows on
  // demand): the same bits. Default on; VELLUM_CUDA_RESIDUAL_ROWS=0 turns it off.
  void set_residual_rows(bool on);
  int64_t residual_rows_calls() const;  // matmuls that added into x that way (checks)
  int64_t gemv_pair_calls() const;     // batch-1 matmul_multi calls that took one pair launch (checks)
  // Round 52's fused 2-16-row launches (set_rows_fused; checks): matmul_multi / matmul_swiglu calls
  // fused, those of them that quantized x first, and norms that wrote the next one's int8 copy.
  struct RowsFusedStats {
    int64_t calls = 0, quantized = 0, norm_copies = 0;
    int64_t attn_copies = 0;  // round 53: attention launches that wrote the output projection's int8 rows
  };
  RowsFusedStats rows_fused_stats() const;
  // Batch invariance (default off; cost in docs/cuda.md, round 9): every matmul row gets the bits
  // the batch-1 GEMV gives it (int8 or f32 GEMV kernels over any number of rows), and attention
  // takes its split path for every row. Norms and element-wise ops are per row already.
  void set_deterministic(bool on);
  // Round 7 (default on; VELLUM_CUDA_BF16_ACT=0 turns it off at construction): at 2+ rows on the
  // bf16 cuBLAS path the norms write the bf16 copy the next GEMM reads, and same-shape BF16 weight
  // pairs (K/V) run as one strided-batched GEMM. Off: round 6's path.
  void set_bf16_activations(bool on);
  // With bf16 activations: same-shape BF16 weight pairs as one batched GEMM (default on).
  void set_gemm_pairs(bool on);
  // With bf16 activations (default on, VELLUM_CUDA_SWIGLU_ROWS=0 turns it off; docs/cuda.md round 7):
  // the many-row SwiGLU on bf16 gate/up GEMM outputs, writing the bf16 copy the down projection
  // reads; gate/up as one batched GEMM below 1 024 rows.
  void set_swiglu_rows(bool on);
  // With the many-row SwiGLU: its f32 rows written only when an op reads them (default on).
  void set_lazy_swiglu(bool on);
  // CUDA graphs for decode-only steps (default on; VELLUM_CUDA_GRAPHS=0 turns them off at
  // construction): cuda_graphs.h. Off: every op is launched as it is called.
  void set_cuda_graphs(bool on);
  // Decode steps of at most this many rows go through graphs (default 256; VELLUM_CUDA_GRAPH_ROWS).
  void set_graph_max_rows(int rows);
  // Sequences that add at least this many query rows in a step (prefill, verify) take the
  // tensor-core attention kernel when the pool is F16/BF16 (docs/cuda.md, round 5); 0: never.
  void set_attention_tc_rows(int rows);
  // The deterministic mode's attention on the tensor-core kernel for every row, decode included, in
  // spans of cuda::kDetSpanTiles tiles of 64 positions (round 24; VELLUM_CUDA_DET_ATTN_TC=1). Off by
  // default: prefill gains 1.2-1.8x, decode keeps 0.89-1.0x of the split path (docs/cuda.md, round 24).
  void set_det_attention_tc(bool on);
  // Programmatic dependent launch between the kernels of a decode graph (default on on sm_90;
  // VELLUM_CUDA_PDL=0 turns it off at construction): backend/cuda/pdl.cuh.
  void set_programmatic_launch(bool on);
  // A decode step's graph launched as soon as its inputs are uploaded, while the ops are recorded
  // (StepGraphs::launch_early; default on, VELLUM_CUDA_EARLY_LAUNCH=0 turns it off at construction).
  void set_early_launch(bool on);
  struct GraphStats {
    int64_t captures = 0, replays = 0, eager_fallbacks = 0, programmatic_edges = 0, evictions = 0;
    int64_t early_hits = 0, early_misses = 0;
    double capture_seconds = 0;  // host time spent capturing and instantiating
  };
  GraphStats graph_stats() const;
  // Quantized weights dequantized ahead on the side stream (right guesses) or in line, and the
  // switch for it (default on; VELLUM_CUDA_DEQUANT_AHEAD=0 at construction): backend/cuda/dequant_ahead.h.
  struct DequantAheadStats {
    uint64_t hits = 0, misses = 0;
  };
  DequantAheadStats dequant_ahead_stats() const;
  void set_dequant_ahead(bool on);
  // Dense weight copies (round 21, opt-in): quantized weights uploaded from now on also keep a BF16
  // copy, up to `bytes` in all (weights in upload order; the token embedding table never, since only
  // embed reads it). Matmuls that would dequantize a weight for cuBLAS each step (prefill, many-row
  // decode) read its copy instead; the GEMVs of a few rows still read the quantized bytes, so
  // batch-1 decode keeps its speed. Memory for speed: llama3-8b's Q4_K_M takes 14 112 MiB of copies.
  // Default 0 (off); VELLUM_CUDA_DENSE_CACHE_MIB sets it at construction (for the benches).
  void set_dense_weight_cache(uint64_t bytes);
  struct DenseCacheStats {
    uint64_t weights = 0, bytes = 0;
  };
  DenseCacheStats dense_cache_stats() const;

 private:
  void matmul_multi_rows(const Tensor& x, std::span<const MatmulOut> outs);
  bool matmul_multi_dq(const Tensor& x, std::span<const MatmulOut> outs);
  void matmul_swiglu_rows(const Weight& gate, const Weight& up, const Tensor& x, Tensor out);
  void matmul_swiglu_rows_f16(const Weight& gate, const Weight& up, const Tensor& x, Tensor out);
  void matmul_swiglu_dq(const Weight& gate, const Weight& up, const Tensor& x, Tensor out);
  void matmul_swiglu_fused(const Weight& gate, const Weight& up, const Tensor& x, Tensor out);
  void layer_tail_rows(const Tensor& attn, Tensor x, Tensor h, Tensor o, Tensor g, Tensor u, const LayerTail& t);
  bool layer_tail_row(const Tensor& attn, Tensor x, Tensor h, Tensor g, const LayerTail& t);
  bool matmul_multi_int8_rows(const Tensor& x, std::span<const MatmulOut> outs);
  bool matmul_swiglu_int8_rows(const Weight& gate, const Weight& up, const Tensor& x, Tensor out);
  bool matmul_add_rows(const Weight& w, const Tensor& a, Tensor x);
  void norm_rows16(Tensor x, const Weight& gain, float eps, Tensor h);
  bool rope_attention_rows(uint32_t layer, Tensor q, Tensor k, const Tensor& v, uint32_t head_dim, const RopeConfig& rc,
                           const AttentionShape& shape, Tensor out);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vellum::backend
