#pragma once
// A plain float64 forward of the llama / qwen2 / qwen3 decoder, written for the tests and
// independently of the fast path (model/transformer.cpp + backend/cpu): no paging, no batching, no
// SIMD, no activation quantization; one sequence, its whole history kept contiguously, every
// formula spelled out as in the papers / ggml's definitions. Weights are read from the GGUF file and
// dequantized with quant/ (the same bytes the fast path reads), then widened to double.
//
// The architecture is given by RefConfig (what the test wrote into the file), not read back
// through model/hparams, so a mistake in reading hyper-parameters shows up as a disagreement.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "quant/quant.h"

namespace vellum::testref {

struct RefConfig {
  std::string arch = "llama";  // llama | qwen2 (QKV bias, NeoX RoPE) | qwen3 (Q/K RMSNorm, NeoX RoPE)
  uint32_t dim = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, vocab = 0;
  uint32_t context = 4096;
  uint32_t rope_dims = 0;  // rotated dimensions per head (<= head_dim)
  double rope_base = 10000.0;
  std::string scaling = "none";  // none | linear | yarn
  double factor = 1.0;
  uint32_t original_context = 0;  // yarn
  double beta_fast = 32.0, beta_slow = 1.0, attn_factor = 1.0;
  bool freq_factors = false;  // Llama 3 style rope_freqs.weight
  bool tied = false;          // output = token_embd
  double eps = 1e-5;

  bool neox() const { return arch != "llama"; }
  bool qkv_bias() const { return arch == "qwen2"; }
  bool qk_norm() const { return arch == "qwen3"; }
};

// A GGUF tensor as a double matrix [rows][cols] (cols = innermost dimension).
struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<double> v;
  const double* row(int64_t r) const { return v.data() + r * cols; }
};

inline Mat load(const gguf::GgufFile& f, const std::string& name) {
  const gguf::TensorInfo* t = f.find_tensor(name);
  if (t == nullptr) throw std::runtime_error("reference: missing tensor " + name);
  Mat m;
  m.cols = static_cast<int64_t>(t->shape[0]);
  m.rows = t->shape.size() > 1 ? static_cast<int64_t>(t->shape[1]) : 1;
  const auto bytes = f.tensor_data(*t);
  const uint64_t rb = row_bytes(t->type, static_cast<uint64_t>(m.cols));
  std::vector<float> tmp(static_cast<size_t>(m.cols));
  m.v.resize(static_cast<size_t>(m.rows * m.cols));
  for (int64_t r = 0; r < m.rows; ++r) {
    quant::dequantize_row(t->type, bytes.data() + r * rb, tmp.data(), m.cols);
    std::copy(tmp.begin(), tmp.end(), m.v.begin() + r * m.cols);
  }
  return m;
}

// The relative RMS error that rounding x to 8 bits per block of 32 (d = amax/127, as the CPU
// backend and llama.cpp's Q8_0 do) introduces: each element is off by a uniform amount in
// ±d/2, variance d²/12, so the expected squared error is Σ_blocks 32·d²/12, relative to Σ x².
inline double q8_rounding_rel2(const std::vector<double>& x) {
  double err = 0, sig = 0;
  for (size_t b = 0; b < x.size(); b += 32) {
    double amax = 0;
    const size_t e = std::min(x.size(), b + 32);
    for (size_t i = b; i < e; ++i) amax = std::max(amax, std::fabs(x[i]));
    const double d = amax / 127.0;
    err += double(e - b) * d * d / 12.0;
  }
  for (double v : x) sig += v * v;
  return sig > 0 ? err / sig : 0.0;
}

class ReferenceModel {
 public:
  ReferenceModel(const gguf::GgufFile& f, RefConfig c) : c_(std::move(c)) {
    embd_ = load(f, "token_embd.weight");
    out_norm_ = load(f, "output_norm.weight");
    out_ = c_.tied ? embd_ : load(f, "output.weight");
    if (c_.freq_factors) freqs_ = load(f, "rope_freqs.weight");
    for (uint32_t l = 0; l < c_.layers; ++l) {
      const std::string p = "blk." + std::to_string(l) + ".";
      Layer L;
      L.attn_norm = load(f, p + "attn_norm.weight");
      L.wq = load(f, p + "attn_q.weight");
      L.wk = load(f, p + "attn_k.weight");
      L.wv = load(f, p + "attn_v.weight");
      L.wo = load(f, p + "attn_output.weight");
      if (c_.qkv_bias()) {
        L.bq = load(f, p + "attn_q.bias");
        L.bk = load(f, p + "attn_k.bias");
        L.bv = load(f, p + "attn_v.bias");
      }
      if (c_.qk_norm()) {
        L.qn = load(f, p + "attn_q_norm.weight");
        L.kn = load(f, p + "attn_k_norm.weight");
      }
      L.ffn_norm = load(f, p + "ffn_norm.weight");
      L.gate = load(f, p + "ffn_gate.weight");
      L.up = load(f, p + "ffn_up.weight");
      L.down = load(f, p + "ffn_down.weight");
      layers_.push_back(std::move(L));
    }
  }

  // Logits of every position of `tokens` (positions 0…n-1), row after row. Also accumulates, over
  // every matrix product, the mean relative squared error that 8-bit activation rounding would add
  // (see q8_rounding_rel2), in q8_rel2_sum().
  std::vector<double> forward(const std::vector<int32_t>& tokens) {
    const size_t n = tokens.size();
    const uint32_t D = c_.dim, H = c_.heads, KV = c_.kv_heads, hd = c_.head_dim;
    std::vector<std::vector<double>> x(n);
    for (size_t t = 0; t < n; ++t) x[t].assign(embd_.row(tokens[t]), embd_.row(tokens[t]) + D);
    q8_rel2_sum_ = 0;
    n_tokens_ = n;
    for (const Layer& L : layers_) {
      std::vector<std::vector<double>> q(n), k(n), v(n);
      for (size_t t = 0; t < n; ++t) {
        const auto h = rms_norm(x[t], L.attn_norm.v);
        q[t] = matvec(L.wq, h, c_.qkv_bias() ? &L.bq : nullptr);
        k[t] = matvec(L.wk, h, c_.qkv_bias() ? &L.bk : nullptr);
        v[t] = matvec(L.wv, h, c_.qkv_bias() ? &L.bv : nullptr);
        if (c_.qk_norm()) {
          for (uint32_t i = 0; i < H; ++i) norm_head(q[t], i * hd, L.qn.v);
          for (uint32_t i = 0; i < KV; ++i) norm_head(k[t], i * hd, L.kn.v);
        }
        for (uint32_t i = 0; i < H; ++i) rope(q[t], i * hd, t);
        for (uint32_t i = 0; i < KV; ++i) rope(k[t], i * hd, t);
      }
      for (size_t t = 0; t < n; ++t) {
        // causal grouped-query attention over positions 0…t
        std::vector<double> att(size_t(H) * hd, 0.0);
        for (uint32_t h = 0; h < H; ++h) {
          const uint32_t g = h / (H / KV);
          std::vector<double> s(t + 1);
          double mx = -INFINITY;
          for (size_t j = 0; j <= t; ++j) {
            double dot = 0;
            for (uint32_t d = 0; d < hd; ++d) dot += q[t][h * hd + d] * k[j][g * hd + d];
            s[j] = dot / std::sqrt(double(hd));
            mx = std::max(mx, s[j]);
          }
          double z = 0;
          for (auto& e : s) z += (e = std::exp(e - mx));
          for (size_t j = 0; j <= t; ++j) {
            for (uint32_t d = 0; d < hd; ++d) att[h * hd + d] += s[j] / z * v[j][g * hd + d];
          }
        }
        const auto o = matvec(L.wo, att, nullptr);
        for (uint32_t i = 0; i < D; ++i) x[t][i] += o[i];
        const auto h2 = rms_norm(x[t], L.ffn_norm.v);
        const auto g = matvec(L.gate, h2, nullptr), u = matvec(L.up, h2, nullptr);
        std::vector<double> a(c_.ffn);
        for (uint32_t i = 0; i < c_.ffn; ++i) a[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];  // SwiGLU
        const auto dn = matvec(L.down, a, nullptr);
        for (uint32_t i = 0; i < D; ++i) x[t][i] += dn[i];
      }
    }
    std::vector<double> logits;
    for (size_t t = 0; t < n; ++t) {
      const auto l = matvec(out_, rms_norm(x[t], out_norm_.v), nullptr);
      logits.insert(logits.end(), l.begin(), l.end());
    }
    return logits;
  }

  // Σ over the matrix products of one forward of the mean (over tokens) relative squared rounding
  // error of their inputs; the logits of a network whose every matmul input carries such an
  // independent error are off by about sqrt(this) relative to their RMS.
  double q8_rel2_sum() const { return n_tokens_ ? q8_rel2_sum_ / double(n_tokens_) : 0.0; }

 private:
  struct Layer {
    Mat attn_norm, wq, wk, wv, wo, bq, bk, bv, qn, kn, ffn_norm, gate, up, down;
  };

  std::vector<double> rms_norm(const std::vector<double>& x, const std::vector<double>& w) const {
    double ss = 0;
    for (double e : x) ss += e * e;
    const double s = 1.0 / std::sqrt(ss / double(x.size()) + c_.eps);
    std::vector<double> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * s * w[i];
    return y;
  }

  void norm_head(std::vector<double>& x, size_t off, const std::vector<double>& w) const {
    std::vector<double> h(x.begin() + off, x.begin() + off + c_.head_dim);
    h = rms_norm(h, w);
    std::copy(h.begin(), h.end(), x.begin() + off);
  }

  // y[o] = Σ_i W[o][i] x[i] (+ b[o])
  std::vector<double> matvec(const Mat& w, const std::vector<double>& x, const Mat* b) {
    q8_rel2_sum_ += q8_rounding_rel2(x);
    std::vector<double> y(static_cast<size_t>(w.rows));
    for (int64_t o = 0; o < w.rows; ++o) {
      double s = 0;
      for (int64_t i = 0; i < w.cols; ++i) s += w.row(o)[i] * x[static_cast<size_t>(i)];
      y[static_cast<size_t>(o)] = s + (b ? b->v[static_cast<size_t>(o)] : 0.0);
    }
    return y;
  }

  // Rotation angle of pair i at position p, and the cos/sin magnitude, per ggml's definitions:
  // theta_i = p · base^(-2i/dims) / freq_factor_i; linear scaling divides it by `factor`; YaRN
  // blends the interpolated (÷factor) and extrapolated angle with a ramp over the pair index between
  // the dimensions where `beta_fast` and `beta_slow` rotations fit the original context, and scales
  // cos/sin by attn_factor · (1 + 0.1 ln factor).
  void rope(std::vector<double>& x, size_t off, size_t pos) const {
    const uint32_t half = c_.rope_dims / 2;
    const double dims = c_.rope_dims;
    double mscale = 1.0, low = 0, high = 0;
    const bool yarn = c_.scaling == "yarn" && c_.factor != 1.0;
    if (yarn) {
      auto corr_dim = [&](double rotations) {
        return dims * std::log(c_.original_context / (rotations * 2 * M_PI)) / (2 * std::log(c_.rope_base));
      };
      low = std::max(0.0, std::floor(corr_dim(c_.beta_fast)));
      high = std::min(dims - 1, std::ceil(corr_dim(c_.beta_slow)));
      mscale = c_.attn_factor * (1.0 + 0.1 * std::log(c_.factor));
    }
    for (uint32_t i = 0; i < half; ++i) {
      double theta = double(pos) * std::pow(c_.rope_base, -2.0 * i / dims);
      if (c_.freq_factors) theta /= freqs_.v[i];
      if (c_.scaling == "linear") theta /= c_.factor;
      if (yarn) {
        const double y = (i - low) / std::max(0.001, high - low);
        const double ramp = 1.0 - std::min(1.0, std::max(0.0, y));  // 1: keep the extrapolated angle
        theta = theta / c_.factor * (1 - ramp) + theta * ramp;
      }
      const size_t a = off + (c_.neox() ? i : 2 * i), b = off + (c_.neox() ? i + half : 2 * i + 1);
      const double x0 = x[a], x1 = x[b], cs = std::cos(theta) * mscale, sn = std::sin(theta) * mscale;
      x[a] = x0 * cs - x1 * sn;
      x[b] = x0 * sn + x1 * cs;
    }
  }

  RefConfig c_;
  Mat embd_, out_norm_, out_, freqs_;
  std::vector<Layer> layers_;
  double q8_rel2_sum_ = 0;
  uint64_t n_tokens_ = 0;
};

}  // namespace vellum::testref
