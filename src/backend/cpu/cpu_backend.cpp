#include "backend/cpu/cpu_backend.h"

#include "backend/rope_angles.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include "backend/cpu/cpu_kernels.h"
#include "backend/logit_rows.h"
#include "core/error.h"
#include "core/half.h"
#include "quant/quant.h"

namespace vellum::backend {

using cpu::dot_f32;

namespace {

// Row `r` of a weight as f32 (a copy for non-f32 types).
const float* weight_row(const Weight& w, int64_t r, float* buffer) {
  const size_t bytes = row_bytes(w.type, static_cast<uint64_t>(w.cols));
  const auto* src = static_cast<const uint8_t*>(w.data) + static_cast<size_t>(r) * bytes;
  if (w.type == TensorType::F32) return reinterpret_cast<const float*>(src);
  quant::dequantize_row(w.type, src, buffer, w.cols);
  return buffer;
}

}  // namespace

CpuBackend::CpuBackend(unsigned threads) : pool_(threads) {}

Weight CpuBackend::upload_weight(const std::string& name, TensorType type, int64_t cols, int64_t rows,
                                 std::span<const uint8_t> bytes) {
  const uint64_t expected = row_bytes(type, static_cast<uint64_t>(cols)) * static_cast<uint64_t>(rows);
  if (bytes.size() != expected) throw_error("weight {}: {} bytes, expected {}", name, bytes.size(), expected);
  if (type != TensorType::F32 && !quant::can_dequantize(type)) {
    throw_error("weight {}: type {} is not supported by the CPU backend", name, tensor_type_name(type));
  }
  if (type == TensorType::F32 && reinterpret_cast<uintptr_t>(bytes.data()) % alignof(float) != 0) {
    throw_error("weight {}: f32 data is not 4-byte aligned", name);
  }
  return Weight{name, type, cols, rows, bytes.data()};
}

Tensor CpuBackend::scratch(int64_t rows, int64_t cols) {
  const size_t n = static_cast<size_t>(std::max<int64_t>(1, rows * cols));
  scratch_.push_back(std::make_unique<float[]>(n));
  return Tensor{scratch_.back().get(), rows, cols};
}

void CpuBackend::release_scratch() { scratch_.clear(); }

void CpuBackend::init_kv(const kv::KvLayout& layout, uint32_t num_blocks) {
  layout.validate();
  k_offset_.clear();
  v_offset_.clear();
  for (uint32_t l = 0; l < layout.layers.size(); ++l) {
    const auto& shape = layout.layers[l];
    if (shape.type != TensorType::F32) {
      throw_error("CPU backend: KV type {} is not supported (F32 only)", tensor_type_name(shape.type));
    }
    if (shape.head_dim_k != shape.head_dim_v) throw_error("CPU backend: K and V head sizes differ in layer {}", l);
    k_offset_.push_back(layout.k_offset(l) / sizeof(float));
    v_offset_.push_back(layout.v_offset(l) / sizeof(float));
  }
  layout_ = layout;
  num_blocks_ = num_blocks;
  block_floats_ = layout.bytes_per_block() / sizeof(float);
  kv_.assign(block_floats_ * num_blocks, 0.0f);
}

void CpuBackend::read(const Tensor& t, float* host) { std::memcpy(host, t.data, t.elements() * sizeof(float)); }

void CpuBackend::argmax_rows(const Tensor& x, std::span<int32_t> out) {
  if (out.size() != static_cast<size_t>(x.rows)) throw_error("argmax_rows: {} outputs for {} rows", out.size(), x.rows);
  pool_.parallel_for(x.rows, [&](int64_t begin, int64_t end, unsigned) {
    for (int64_t r = begin; r < end; ++r) out[static_cast<size_t>(r)] = first_max(x.data + r * x.cols, x.cols);
  });
}

void CpuBackend::top_k_rows(const Tensor& x, int k, std::span<float> values, std::span<int32_t> ids) {
  check_top_k_args(x.rows, x.cols, k, kMaxTopK, values.size(), ids.size());
  pool_.parallel_for(x.rows, [&](int64_t begin, int64_t end, unsigned) {
    std::vector<int32_t> order;
    for (int64_t r = begin; r < end; ++r) {
      top_k_of_row(x.data + r * x.cols, x.cols, k, values.data() + r * k, ids.data() + r * k, order);
    }
  });
}

void CpuBackend::draw_rows(const Tensor& x, std::span<const RowDraw> draws, std::span<int32_t> out) {
  check_draw_args(x.rows, draws, out.size());
  pool_.parallel_for(x.rows, [&](int64_t begin, int64_t end, unsigned) {
    DrawScratch scratch;
    for (int64_t r = begin; r < end; ++r) {
      out[static_cast<size_t>(r)] = draw_of_row(x.data + r * x.cols, x.cols, draws[static_cast<size_t>(r)], scratch);
    }
  });
}

void CpuBackend::log_normalizers(const Tensor& x, std::span<double> out) {
  if (out.size() != static_cast<size_t>(x.rows)) throw_error("log_normalizers: {} outputs for {} rows", out.size(), x.rows);
  pool_.parallel_for(x.rows, [&](int64_t begin, int64_t end, unsigned) {
    for (int64_t r = begin; r < end; ++r) out[static_cast<size_t>(r)] = log_normalizer(x.data + r * x.cols, x.cols);
  });
}

void CpuBackend::pick_values(const Tensor& x, std::span<const int32_t> cols, std::span<float> out) {
  check_pick_args(x.rows, x.cols, cols, out.size());
  for (size_t r = 0; r < cols.size(); ++r) out[r] = x.data[static_cast<int64_t>(r) * x.cols + cols[r]];
}

void CpuBackend::edit_logits(Tensor x) {
  check_logit_edits(edits_, edit_rows_, static_cast<size_t>(x.rows), x.cols);
  for (size_t r = 0; r + 1 < edit_rows_.size(); ++r) {
    float* row = x.data + static_cast<int64_t>(r) * x.cols;
    for (uint32_t i = edit_rows_[r]; i < edit_rows_[r + 1]; ++i) row[edits_[i].token] = apply_logit_edit(row[edits_[i].token], edits_[i]);
  }
}

void CpuBackend::begin_step(const StepInfo& step) {
  edits_.assign(step.edits.begin(), step.edits.end());
  edit_rows_.assign(step.edit_rows.begin(), step.edit_rows.end());
  tokens_.assign(step.tokens.begin(), step.tokens.end());
  positions_.assign(step.positions.begin(), step.positions.end());
  slots_.assign(step.slot_mapping.begin(), step.slot_mapping.end());
  sequences_.assign(step.sequences.begin(), step.sequences.end());
  block_tables_.assign(step.block_tables.begin(), step.block_tables.end());
}

void CpuBackend::embed(const Weight& table, Tensor out) {
  pool_.parallel_for(static_cast<int64_t>(tokens_.size()), [&](int64_t begin, int64_t end, unsigned) {
    for (int64_t i = begin; i < end; ++i) {
      const int32_t id = tokens_[static_cast<size_t>(i)];
      float* dst = out.data + i * out.cols;
      const float* row = weight_row(table, id, dst);
      if (row != dst) std::memcpy(dst, row, static_cast<size_t>(out.cols) * sizeof(float));
    }
  });
}

void CpuBackend::rms_norm(const Tensor& x, const Weight& gain, float eps, Tensor out) {
  const int64_t group = gain.cols;
  const float* g = static_cast<const float*>(gain.data);
  const auto dot = cpu::dot_f32_for(cpu::active_isa());
  pool_.parallel_for(x.rows, [&](int64_t begin, int64_t end, unsigned) {
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t c0 = 0; c0 < x.cols; c0 += group) {
        const float* src = x.data + r * x.cols + c0;
        float* dst = out.data + r * out.cols + c0;
        const float mean = dot(src, src, group) / static_cast<float>(group);  // sum_squares_f32
        const float scale = 1.0f / std::sqrt(mean + eps);
        for (int64_t i = 0; i < group; ++i) dst[i] = src[i] * scale * g[i];
      }
    }
  });
}

void CpuBackend::matmul(const Weight& w, const Tensor& x, Tensor out, const Weight* bias) {
  const float* b = bias != nullptr ? static_cast<const float*>(bias->data) : nullptr;
  if (cpu::CpuMatmul::supported(w.type, w.cols)) {
    matmul_.run(pool_, w, x, out, b, cpu::active_isa());
    return;
  }
  // Types without a kernel: dequantize each weight row, then the reference f32 dot.
  // Parallel over output features: each thread dequantizes a weight row once and applies it to
  // every token row, so one output element is always one dot product in one fixed order.
  pool_.parallel_for(w.rows, [&](int64_t begin, int64_t end, unsigned) {
    std::vector<float> buffer(static_cast<size_t>(w.cols));
    for (int64_t o = begin; o < end; ++o) {
      const float* row = weight_row(w, o, buffer.data());
      for (int64_t r = 0; r < x.rows; ++r) {
        float v = dot_f32(x.data + r * x.cols, row, w.cols);
        if (b != nullptr) v += b[o];
        out.data[r * out.cols + o] = v;
      }
    }
  }, 4);
}

void CpuBackend::matmul_multi(const Tensor& x, std::span<const MatmulOut> outs) {
  std::vector<const Weight*> ws;
  std::vector<cpu::MatmulJob> jobs;
  for (const MatmulOut& o : outs) {
    ws.push_back(o.w);
    jobs.push_back({o.w, o.out, o.bias != nullptr ? static_cast<const float*>(o.bias->data) : nullptr});
  }
  if (!cpu::CpuMatmul::can_share(ws, cpu::active_isa())) return Backend::matmul_multi(x, outs);
  matmul_.run_many(pool_, x, jobs, cpu::active_isa());
}

void CpuBackend::matmul_swiglu(const Weight& gate, const Weight& up, const Tensor& x, Tensor out, Tensor up_out) {
  const Weight* ws[] = {&gate, &up};
  if (!cpu::CpuMatmul::can_share(ws, cpu::active_isa()) || gate.rows != up.rows) {
    return Backend::matmul_swiglu(gate, up, x, out, up_out);
  }
  const cpu::MatmulJob jobs[] = {{&gate, out, nullptr}, {&up, up_out, nullptr}};
  matmul_.run_many(pool_, x, jobs, cpu::active_isa(), /*swiglu=*/true);
}

void CpuBackend::rope(Tensor x, uint32_t head_dim, const RopeConfig& rope) {
  const uint32_t half = rope.dims / 2;
  const int64_t heads = x.cols / head_dim;
  const RopeAngles angles = rope_angles(rope);
  pool_.parallel_for(x.rows, [&](int64_t begin, int64_t end, unsigned) {
    std::vector<float> cos_t(half), sin_t(half);
    for (int64_t r = begin; r < end; ++r) {
      const double pos = positions_[static_cast<size_t>(r)];
      for (uint32_t i = 0; i < half; ++i) {
        const double theta = pos * angles.inv_freq[i];
        cos_t[i] = static_cast<float>(std::cos(theta) * angles.magnitude);
        sin_t[i] = static_cast<float>(std::sin(theta) * angles.magnitude);
      }
      for (int64_t h = 0; h < heads; ++h) {
        float* v = x.data + r * x.cols + h * head_dim;
        for (uint32_t i = 0; i < half; ++i) {
          const uint32_t a = rope.order == RopeOrder::Interleaved ? 2 * i : i;
          const uint32_t b = rope.order == RopeOrder::Interleaved ? 2 * i + 1 : i + half;
          const float x0 = v[a], x1 = v[b];
          v[a] = x0 * cos_t[i] - x1 * sin_t[i];
          v[b] = x0 * sin_t[i] + x1 * cos_t[i];
        }
      }
    }
  });
}

float* CpuBackend::kv_row(uint32_t layer, int kv, int64_t slot) {
  const int64_t block = slot / layout_.block_size, offset = slot % layout_.block_size;
  const auto& shape = layout_.layers[layer];
  const size_t row = size_t(shape.n_kv_heads) * shape.head_dim_k;
  return kv_.data() + static_cast<size_t>(block) * block_floats_ + (kv == 0 ? k_offset_[layer] : v_offset_[layer]) +
         static_cast<size_t>(offset) * row;
}

const float* CpuBackend::kv_slot(uint32_t layer, int kv, int64_t slot) const {
  return const_cast<CpuBackend*>(this)->kv_row(layer, kv, slot);
}

void CpuBackend::store_kv(uint32_t layer, const Tensor& k, const Tensor& v) {
  const size_t row_bytes_f32 = static_cast<size_t>(k.cols) * sizeof(float);
  for (size_t i = 0; i < slots_.size(); ++i) {
    std::memcpy(kv_row(layer, 0, slots_[i]), k.data + i * static_cast<size_t>(k.cols), row_bytes_f32);
    std::memcpy(kv_row(layer, 1, slots_[i]), v.data + i * static_cast<size_t>(v.cols), row_bytes_f32);
  }
}

void CpuBackend::attention(uint32_t layer, const Tensor& q, const AttentionShape& shape, Tensor out) {
  // One work item per (query row, KV head): the group of query heads that share the KV head read
  // each K/V row once. Each head sees its context in position order with the operations of
  // dot_f32 / axpy_f32 (cpu_kernels.h), so the bits depend on nothing but the row's own history.
  struct Item {
    uint32_t seq, row, position;
  };
  std::vector<Item> rows;
  for (uint32_t s = 0; s < sequences_.size(); ++s) {
    const auto& seq = sequences_[s];
    for (uint32_t t = 0; t < seq.q_count; ++t) rows.push_back({s, seq.q_begin + t, seq.n_past + t});
  }
  const uint32_t group = shape.heads / shape.kv_heads, hd = shape.head_dim;
  const cpu::AttentionKernels kern = cpu::attention_kernels_for(cpu::active_isa());
  const int64_t units = static_cast<int64_t>(rows.size()) * shape.kv_heads;
  // Causal rows differ in cost (a row attends to its whole history), so units are handed out
  // dynamically rather than as fixed contiguous halves.
  std::atomic<int64_t> next{0};
  auto work = [&](int64_t, int64_t, unsigned) {
    std::vector<float> scores;
    std::vector<const float*> kp, vp;
    for (int64_t u; (u = next.fetch_add(1, std::memory_order_relaxed)) < units;) {
      const Item& item = rows[static_cast<size_t>(u / shape.kv_heads)];
      const uint32_t kvh = static_cast<uint32_t>(u % shape.kv_heads), h0 = kvh * group;
      const auto& seq = sequences_[item.seq];
      const int32_t* table = block_tables_.data() + seq.table_begin;
      const uint32_t n_ctx = item.position + 1;  // causal: positions 0 … own position
      kp.resize(n_ctx);
      vp.resize(n_ctx);
      for (uint32_t p = 0; p < n_ctx; ++p) {
        const int64_t slot = int64_t(table[p / layout_.block_size]) * layout_.block_size + p % layout_.block_size;
        kp[p] = kv_row(layer, 0, slot) + size_t(kvh) * hd;
        vp[p] = kv_row(layer, 1, slot) + size_t(kvh) * hd;
      }
      scores.resize(size_t(group) * n_ctx);
      const float* qv = q.data + size_t(item.row) * q.cols + size_t(h0) * hd;
      kern.scores(qv, hd, static_cast<int>(group), kp.data(), n_ctx, hd, shape.scale, scores.data(), n_ctx);
      for (uint32_t g = 0; g < group; ++g) {  // softmax weights of head h0 + g
        float* sc = scores.data() + size_t(g) * n_ctx;
        float max_score = -INFINITY;
        for (uint32_t p = 0; p < n_ctx; ++p) max_score = std::max(max_score, sc[p]);
        float sum = 0.0f;
        for (uint32_t p = 0; p < n_ctx; ++p) {
          sc[p] = std::exp(sc[p] - max_score);
          sum += sc[p];
        }
        const float inv = 1.0f / sum;
        for (uint32_t p = 0; p < n_ctx; ++p) sc[p] *= inv;
      }
      float* o = out.data + size_t(item.row) * out.cols + size_t(h0) * hd;
      kern.values(scores.data(), n_ctx, static_cast<int>(group), vp.data(), n_ctx, hd, o, hd);
    }
  };
  if (units < 2) {
    work(0, 0, 0);
  } else {
    pool_.parallel_for(std::min<int64_t>(units, pool_.size()), work);
  }
}

void CpuBackend::swiglu(const Tensor& gate, const Tensor& up, Tensor out) {
  pool_.parallel_for(static_cast<int64_t>(gate.elements()), [&](int64_t begin, int64_t end, unsigned) {
    cpu::swiglu_f32(gate.data + begin, up.data + begin, out.data + begin, end - begin);
  }, 4096);  // small (decode) sizes run inline: a fork costs more than the work
}

void CpuBackend::add(const Tensor& a, const Tensor& b, Tensor out) {
  pool_.parallel_for(static_cast<int64_t>(a.elements()), [&](int64_t begin, int64_t end, unsigned) {
    for (int64_t i = begin; i < end; ++i) out.data[i] = a.data[i] + b.data[i];
  }, 4096);  // small (decode) sizes run inline: a fork costs more than the work
}

void CpuBackend::gather_rows(const Tensor& x, std::span<const int32_t> rows, Tensor out) {
  for (size_t j = 0; j < rows.size(); ++j) {
    std::memcpy(out.data + j * static_cast<size_t>(out.cols), x.data + static_cast<size_t>(rows[j]) * static_cast<size_t>(x.cols),
                static_cast<size_t>(x.cols) * sizeof(float));
  }
}

void CpuBackend::copy_blocks(std::span<const std::pair<int32_t, int32_t>> pairs) {
  const size_t n = block_floats_;
  for (const auto& [src, dst] : pairs) {
    std::memcpy(kv_.data() + static_cast<size_t>(dst) * n, kv_.data() + static_cast<size_t>(src) * n, n * sizeof(float));
  }
}

}  // namespace vellum::backend
