#pragma once
// The CPU backend: every op on a fork-join thread pool, weights used in place from the memory-mapped
// GGUF file, KV blocks in one host allocation. Each output element is computed by one thread in an
// order fixed by tensor shapes and absolute positions only, so results are bitwise identical for any
// batch composition, chunk size, block size and thread count (DESIGN.md, batch invariance).

#include <memory>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu/cpu_matmul.h"
#include "core/thread_pool.h"

namespace vellum::backend {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(unsigned threads = 0);
  std::string name() const override { return "cpu"; }
  unsigned threads() const { return pool_.size(); }

  Weight upload_weight(const std::string& name, TensorType type, int64_t cols, int64_t rows,
                       std::span<const uint8_t> bytes) override;
  Tensor scratch(int64_t rows, int64_t cols) override;
  void release_scratch() override;
  void init_kv(const kv::KvLayout& layout, uint32_t num_blocks) override;
  uint32_t kv_blocks() const override { return num_blocks_; }
  void read(const Tensor& t, float* host) override;
  // On the rows in place (no copy of a 128k-wide row per token), a row per task.
  void argmax_rows(const Tensor& x, std::span<int32_t> out) override;
  void top_k_rows(const Tensor& x, int k, std::span<float> values, std::span<int32_t> ids) override;
  void draw_rows(const Tensor& x, std::span<const RowDraw> draws, std::span<int32_t> out) override;

  void edit_logits(Tensor x) override;
  void log_normalizers(const Tensor& x, std::span<double> out) override;
  void pick_values(const Tensor& x, std::span<const int32_t> cols, std::span<float> out) override;
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
  // Fused: one activation quantization and one fork/join for all products (same bits as unfused).
  void matmul_multi(const Tensor& x, std::span<const MatmulOut> outs) override;
  void matmul_swiglu(const Weight& gate, const Weight& up, const Tensor& x, Tensor out, Tensor up_out) override;

  // Direct access for tests: the K (kv = 0) or V (kv = 1) row of one KV slot.
  const float* kv_slot(uint32_t layer, int kv, int64_t slot) const;

 private:
  float* kv_row(uint32_t layer, int kv, int64_t slot);

  ThreadPool pool_;
  cpu::CpuMatmul matmul_;
  std::vector<std::unique_ptr<float[]>> scratch_;
  kv::KvLayout layout_;
  size_t block_floats_ = 0;                             // f32 elements per block
  std::vector<size_t> k_offset_, v_offset_;             // per layer, in floats inside a block
  uint32_t num_blocks_ = 0;
  std::vector<float> kv_;
  // The current step (copied: the caller's spans need not outlive begin_step).
  std::vector<int32_t> tokens_, positions_, block_tables_;
  std::vector<LogitEdit> edits_;
  std::vector<uint32_t> edit_rows_;
  std::vector<int64_t> slots_;
  std::vector<StepSequence> sequences_;
};

}  // namespace vellum::backend
