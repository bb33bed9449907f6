// vellum_cuda_check: runs every backend op on the GPU and on the CPU backend with the same random
// inputs of realistic sizes and prints a pass/fail table of measured errors against stated bounds.
// GPU outputs are poisoned with NaN before each op, so an element an op fails to write fails the
// check. Matmul is also checked against an f64 reference on the exactly dequantized weights.
// `--bench` adds timings (copy bandwidth, BF16 GEMM, paged decode attention; with --model, decode
// tok/s of a GGUF at batch 1). Exit status 1 when any check fails. See docs/cuda.md.

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "backend/cpu/cpu_backend.h"
#ifdef VELLUM_CHAIN_TRACE
#include <map>

#include "backend/cuda/chain_trace.h"
#endif
#include "backend/cuda/attention.h"
#include "backend/cuda/attn_rope_row.h"
#include "backend/cuda/attn_wgmma.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/gemv_kernels.h"
#include "backend/cuda/gemv_norm_out_staged.h"
#include "backend/cuda/gemv_mma.h"
#include "backend/cuda/layer_kernel.h"
#include "backend/cuda/cuda_util.h"
#include "core/half.h"
#include "backend/cuda/det_mma16.h"
#include "backend/cuda/dq_mma.h"
#include "backend/cuda/dq_tma.h"
#include "backend/cuda/mmq.h"
#include "backend/cuda/row_draw.h"
#include "backend/cuda/rows_mma.h"
#include "backend/cuda/topk.h"
#include "backend/cuda/argmax.h"
#include "core/error.h"
#include "core/logit_order.h"
#include "engine/batch.h"
#include "engine/logprobs.h"
#include "gguf/gguf_file.h"
#include "model/transformer.h"
#include "quant/quant.h"

long wgmma_probe(int blocks);  // wgmma_probe.cu (round 23 experiment)
namespace vellum::cuda_probe {
void cluster_probe();  // cluster_probe.cu (round 45 probe)
void barrier_probe();  // barrier_probe.cu (round 47 probe)
}
long frag_probe(int type, int trials, long& zero_signs);  // frag_probe.cu (round 37)

namespace {

using namespace vellum;
using backend::CpuBackend;
using backend::CudaBackend;
using backend::Tensor;
using backend::Weight;

struct Row {
  std::string name;
  double err;
  double bound;
  bool pass;
  std::string note;
};
std::vector<Row> g_rows;

std::mt19937 g_rng(12345);

std::vector<float> randn(size_t n, float scale = 1.0f) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g_rng);
  return v;
}

// max |got - ref| / max |ref|; NaN (an unwritten, poisoned element) makes it infinite.
double rel_err(const std::vector<float>& got, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    num = std::max(num, std::fabs(double(got[i]) - ref[i]));
    den = std::max(den, std::fabs(ref[i]));
  }
  return den == 0 ? num : num / den;
}
double rel_err(const std::vector<float>& got, const std::vector<float>& ref) {
  return rel_err(got, std::vector<double>(ref.begin(), ref.end()));
}

// max |a - b|; a non-finite element (an unwritten, poisoned one) or a size mismatch: infinite.
double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) return INFINITY;
    d = std::max(d, std::fabs(double(a[i]) - double(b[i])));
  }
  return a.size() == b.size() ? d : INFINITY;
}

// f32 rounded to bf16 (nearest even) and back: what a bf16 copy of the value holds.
float bf16_rounded(float f) {
  if (!std::isfinite(f)) return f;
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
  std::memcpy(&f, &u, 4);
  return f;
}
std::vector<float> bf16_rounded(std::vector<float> v) {
  for (float& f : v) f = bf16_rounded(f);
  return v;
}

void record(const std::string& name, double err, double bound, const std::string& note = "") {
  g_rows.push_back({name, err, bound, err <= bound, note});
  std::fprintf(stderr, "%-44s err %.3g (bound %.0e) %s %s\n", name.c_str(), err, bound, err <= bound ? "PASS" : "FAIL",
               note.c_str());
}

// Both backends with the same tensors.
struct Pair {
  CpuBackend cpu;
  CudaBackend gpu;
  Pair() : cpu(0), gpu(0) {}

  struct T2 {
    Tensor c, g;
  };
  T2 tensor(const std::vector<float>& host, int64_t rows, int64_t cols) {
    T2 t{cpu.scratch(rows, cols), gpu.scratch(rows, cols)};
    std::memcpy(t.c.data, host.data(), host.size() * sizeof(float));
    gpu.write(t.g, host.data());
    return t;
  }
  T2 output(int64_t rows, int64_t cols) {
    T2 t{cpu.scratch(rows, cols), gpu.scratch(rows, cols)};
    std::fill(t.c.data, t.c.data + t.c.elements(), NAN);
    gpu.fill(t.g, NAN);
    return t;
  }
  std::vector<float> get_cpu(const Tensor& t) { return std::vector<float>(t.data, t.data + t.elements()); }
  std::vector<float> get_gpu(const Tensor& t) {
    std::vector<float> v(t.elements());
    gpu.read(t, v.data());
    return v;
  }
  struct W2 {
    Weight c, g;
  };
  W2 weight(const std::string& name, TensorType type, int64_t cols, int64_t rows, const std::vector<uint8_t>& bytes) {
    return {cpu.upload_weight(name, type, cols, rows, bytes), gpu.upload_weight(name, type, cols, rows, bytes)};
  }
  void begin_step(const backend::StepInfo& s) {
    cpu.begin_step(s);
    gpu.begin_step(s);
  }
};

// Host bytes of a random weight of `type` (quantized from normal floats) and its exact f32 values.
struct HostWeight {
  std::vector<uint8_t> bytes;
  std::vector<float> values;
};
HostWeight make_weight(TensorType type, int64_t rows, int64_t cols, float scale = 0.05f) {
  HostWeight w;
  const std::vector<float> src = randn(size_t(rows * cols), scale);
  const size_t rb = row_bytes(type, uint64_t(cols));
  w.bytes.resize(rb * rows);
  w.values.resize(size_t(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    if (type == TensorType::F32) {
      std::memcpy(w.bytes.data() + r * rb, src.data() + r * cols, rb);
    } else {
      quant::quantize_row(type, src.data() + r * cols, w.bytes.data() + r * rb, cols);
    }
    if (type == TensorType::F32) {
      std::memcpy(w.values.data() + r * cols, src.data() + r * cols, rb);
    } else {
      quant::dequantize_row(type, w.bytes.data() + r * rb, w.values.data() + r * cols, cols);
    }
  }
  return w;
}

void check_matmul(Pair& p, TensorType type, int64_t k, int64_t n, const std::vector<int64_t>& batches, bool bias) {
  p.gpu.set_int8_gemv_max_rows(cuda::kMaxI8Rows);  // the many-row int8 GEMV at every size it supports
  const HostWeight hw = make_weight(type, n, k);
  auto w = p.weight("w", type, k, n, hw.bytes);
  std::vector<float> bias_v;
  std::vector<uint8_t> bb;  // outlives the CPU weight, which uses the bytes in place
  Pair::W2 b{};
  if (bias) {
    bias_v = randn(size_t(n));
    bb.resize(bias_v.size() * 4);
    std::memcpy(bb.data(), bias_v.data(), bb.size());
    b = p.weight("b", TensorType::F32, n, 1, bb);
  }
  for (int64_t m : batches) {
   // Batch 1 of Q8_0/Q4_K/Q6_K: the int8 (dp4a) kernel and the f32 one, each checked; 2..8 rows of
   // those: the int8 GEMV over all rows (round 8), mmq and the f32 GEMV; more rows: mmq and the
   // cuBLAS path it replaces. Each mode checked against f64.
   const bool i8 = cuda::int8_gemv_supports(type, k) && m <= cuda::kMaxI8Rows;
   const bool mmq = m >= 2 && cuda::mmq_supports(type, k);
   const bool dq = m >= 2 && cuda::dq_mma_supports(type, k);
   const bool dq_rs = m >= 2 && cuda::dq_mma_rs_supports(type, k);
   const bool dq_tma = m >= 2 && cuda::dq_tma_supports(type, k);
   // 0: int8 GEMV, 1: mmq, 2: the f32 GEMV / cuBLAS path, 3: dq_mma, 4 / 5: dq_mma's register-A
   // kernel (DqMmaPlan::rs 1 / 2), 6 / 7: the bulk-copy kernels (dq_tma.h; rs 3: A tiles dequantized
   // by warps of their own, rs 4: A fragments dequantized by the multiplying warpgroups).
   std::vector<int> modes;
   if (i8) modes.push_back(0);
   if (cuda::int8_gemv_supports(type, k) && m >= 2 && m <= cuda::kMmaRowsMax && cuda::gemv_mma_supports(type, k)) modes.push_back(8);
   if (mmq) modes.push_back(1);
   modes.push_back(2);
   if (dq) modes.push_back(3);
   if (dq_rs) modes.push_back(4), modes.push_back(5);
   if (dq_tma) modes.push_back(6), modes.push_back(7);
   std::vector<float> dq_got;
   const int rs_default = p.gpu.dq_rs();
   for (const int mode : modes) {
    p.gpu.set_int8_gemv(mode == 0 || mode == 8);
    p.gpu.set_gemv_mma(mode == 8);  // mode 0: the rows GEMV, which keeps every row's batch-1 bits
    p.gpu.set_mmq(mode == 1);
    p.gpu.set_dq_mma(mode >= 3 && mode <= 7);
    p.gpu.set_dq_rs(mode >= 4 && mode <= 7 ? mode - 3 : 0);  // mode 3: round 11's kernel
    p.gpu.set_dq_tma(mode >= 3 && mode <= 7 ? 1 : 0);         // modes 0-2, 8: not the bulk-copy kernel the default takes at 33+ rows
    const std::vector<float> xv = randn(size_t(m * k));
    auto x = p.tensor(xv, m, k);
    auto out = p.output(m, n);
    p.cpu.matmul(w.c, x.c, out.c, bias ? &b.c : nullptr);
    p.gpu.matmul(w.g, x.g, out.g, bias ? &b.g : nullptr);
    std::vector<double> ref(size_t(m * n));
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t o = 0; o < n; ++o) {
        double s = bias ? bias_v[o] : 0.0;
        for (int64_t i = 0; i < k; ++i) s += double(xv[r * k + i]) * hw.values[o * k + i];
        ref[r * n + o] = s;
      }
    }
    const bool gemv = m <= cuda::kMaxGemvRows;
    const bool int8 = mode == 0 || mode == 8, mma = mode == 1, dqm = mode >= 3 && mode <= 7;
    // int8: x rounded to 8 bits per 32 elements (expected ~5e-3, like the CPU backend's Q8 path);
    // mmq rounds x the same way, its bound is that rounding (1e-2, twice the expected error).
    // dq_mma: x and the weights (K-quant scales too) in bf16, as the cuBLAS path. F16 weights'
    // GEMM (round 14): only x rounded, to f16 (expected ~3e-4; 1e-3 fails the bf16 path they took
    // before, which rounded x and the weights to bf16: 1.6e-3-2.6e-3).
    const bool f16_gemm = !gemv && type == TensorType::F16;
    const double bound = int8 ? 2e-2 : (mma || dqm) ? 1e-2 : (gemv || type == TensorType::F32 ? 1e-5 : f16_gemm ? 1e-3 : 1e-2);
    const double cpu_err = rel_err(p.get_cpu(out.c), ref);
    const std::string name = fmt::format("matmul {} {}x{} rows {}{} ({})", tensor_type_name(type), n, k, m, bias ? " +bias" : "",
                                         mode == 8 ? "int8 mma rows" : int8 ? "int8 gemv" : mma ? "int8 mma" : mode == 3 ? "dq mma" : mode == 4 ? "dq mma rs" : mode == 5 ? "dq mma rs2" : mode == 6 ? "dq tma" : mode == 7 ? "dq tma rs" : gemv ? "gemv" : (type == TensorType::F32 ? "sgemm" : f16_gemm ? "f16 gemm" : "bf16 gemm"));
    const std::vector<float> got = p.get_gpu(out.g);
    // The register-A kernel multiplies the same bf16 weights, but wgmma's RS form does not round like
    // its SS form (measured: not bit for bit), so the difference is shown, not bounded.
    const std::string vs11 = mode >= 4 && !dq_got.empty() ? fmt::format(" [vs round 11's kernel: max diff {:.2g}]", max_abs_diff(got, dq_got)) : "";
    record(name, rel_err(got, ref), bound, fmt::format("[cpu backend vs f64: {:.2g}]{}", cpu_err, vs11));
    if (mode == 3) dq_got = got;
    if (dqm || mode == 8) {  // K split: partial sums added in a fixed order (dq_mma: whoever arrives last)
      p.gpu.fill(out.g, std::nanf(""));
      p.gpu.matmul(w.g, x.g, out.g, bias ? &b.g : nullptr);
      record(name + " run twice", max_abs_diff(p.get_gpu(out.g), got), 0, "bit for bit");
    }
    if (mode == 0 && m >= 2) {  // every row as a batch-1 launch gives it: bit for bit
      double diff = 0;
      for (int64_t r = 0; r < m; ++r) {
        const std::vector<float> xr(xv.begin() + r * k, xv.begin() + (r + 1) * k);
        auto x1 = p.tensor(xr, 1, k);
        auto o1 = p.output(1, n);
        p.gpu.matmul(w.g, x1.g, o1.g, bias ? &b.g : nullptr);
        const std::vector<float> one = p.get_gpu(o1.g);
        diff = std::max(diff, max_abs_diff(std::vector<float>(got.begin() + r * n, got.begin() + (r + 1) * n), one));
      }
      record(name + " vs each row at batch 1", diff, 0, "bit for bit");
    }
   }
   p.gpu.set_dq_rs(rs_default);
   p.gpu.set_dq_tma(1);
  }
  p.gpu.set_int8_gemv(true);
  p.gpu.set_gemv_mma(true);
  p.gpu.set_mmq(true);
  p.gpu.set_dq_mma(true);
}

// Round 42: gemv_mma's launch shapes (gemv_mma.cu, launch_type) by this device's multiprocessors:
// many short rows (at least 4 blocks of 16 rows an SM), at least one block an SM, and rows of more
// than 16 super-blocks; ragged ends, 4..8 token rows (check_matmul's mode 8, run twice bit for bit),
// and since round 51 2 tiles of 8 (12 / 13 / 16 rows).
void check_gemv_mma_shapes(Pair& p) {
  int sms = 0;
  cuda::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "sms");
  for (TensorType t : {TensorType::Q4_K, TensorType::Q8_0, TensorType::Q6_K}) {
    check_matmul(p, t, 512, int64_t(sms) * 64 + 24, {8, 5, 13}, false);
    check_matmul(p, t, 1024, int64_t(sms) * 16 + 8, {4, 12}, true);
    check_matmul(p, t, 4352, 40, {8, 16}, false);
    p.cpu.release_scratch();
    p.gpu.release_scratch();
  }
}

// Deterministic mode: every row of an M-row matmul must equal, bit for bit, the same row computed
// alone in that mode, for M from 2 to 300 (past 8 rows the int8 and f32 rows kernels run in groups;
// F16/BF16 change schedule at 17 rows). Where the mode's one row is the default batch-1 kernel (all
// but F16/BF16, round 23), it must also equal the default's row. The default mode's difference is
// printed beside it.
void check_batch_invariance(Pair& p, TensorType type, int64_t k, int64_t n) {
  const HostWeight hw = make_weight(type, n, k);
  auto w = p.weight("w", type, k, n, hw.bytes);
  const std::vector<int64_t> counts = {2, 5, 8, 13, 16, 17, 24, 40, 77, 300};
  const int64_t max_m = counts.back();
  const std::vector<float> xv = randn(size_t(max_m * k));
  // Each row alone, in the default mode [0] and the deterministic mode [1].
  std::vector<std::vector<float>> alone[2];
  for (int det = 0; det < 2; ++det) {
    p.gpu.set_deterministic(det == 1);
    for (int64_t r = 0; r < max_m; ++r) {
      auto x1 = p.tensor(std::vector<float>(xv.begin() + r * k, xv.begin() + (r + 1) * k), 1, k);
      auto out1 = p.output(1, n);
      p.gpu.matmul(w.g, x1.g, out1.g, nullptr);
      alone[det].push_back(p.get_gpu(out1.g));
    }
  }
  double diff[2] = {0, 0};
  for (int det = 0; det < 2; ++det) {
    p.gpu.set_deterministic(det == 1);
    for (const int64_t m : counts) {
      auto x = p.tensor(std::vector<float>(xv.begin(), xv.begin() + m * k), m, k);
      auto out = p.output(m, n);
      p.gpu.matmul(w.g, x.g, out.g, nullptr);
      const std::vector<float> a = p.get_gpu(out.g);
      for (int64_t r = 0; r < m; ++r) {
        diff[det] = std::max(diff[det], max_abs_diff(std::vector<float>(a.begin() + r * n, a.begin() + (r + 1) * n), alone[det][size_t(r)]));
      }
    }
  }
  p.gpu.set_deterministic(false);
  double det_one = 0;  // the deterministic mode's one-row results vs the default's
  for (int64_t r = 0; r < max_m; ++r) det_one = std::max(det_one, max_abs_diff(alone[1][size_t(r)], alone[0][size_t(r)]));
  const bool own_batch1 = cuda::det16_supports(type, k);
  record(fmt::format("deterministic {} {}x{}: every row of 2/5/8/13/16/17/24/40/77/300 vs alone", tensor_type_name(type), n, k),
         own_batch1 ? diff[1] : std::max(diff[1], det_one), 0,
         fmt::format("bit for bit [max |diff| in default mode: {:.3g}; deterministic vs default at one row: {:.3g}{}]", diff[0],
                     det_one, own_batch1 ? ", its own tensor-core kernel" : ""));
}

std::vector<double> ref_matmul(const std::vector<float>& x, const HostWeight& w, int64_t n, int64_t k,
                               const std::vector<float>* bias);

// The deterministic mode's F16/BF16 kernels (det_mma16.h, round 23). Every row of an M-row matmul
// (+ bias) against the same row alone (the batch-1 launch), memcmp on every output (outputs start
// as NaN), through both schedules where both take the row count (2-16 rows: the K-part warps and the
// tile ring); widths that end in a short window (1 000), parts of 56 windows (14 336) and of 158
// (40 000: 8 parts, the last shorter); heights that are not a multiple of a tile. The alone rows
// against f64 within the bound of x rounded to the weight's type (F16 1e-3, BF16 1e-2, the bounds of
// the default mode's GEMMs).
void check_det16(Pair& p, TensorType type, int64_t k, int64_t n) {
  const HostWeight hw = make_weight(type, n, k);
  auto w = p.weight("w", type, k, n, hw.bytes);
  std::vector<float> bias_v = randn(size_t(n));
  std::vector<uint8_t> bb(bias_v.size() * 4);
  std::memcpy(bb.data(), bias_v.data(), bb.size());
  auto bias = p.weight("b", TensorType::F32, n, 1, bb);
  const std::vector<int64_t> counts = {2, 9, 16, 17, 40, 300};
  const int64_t max_m = counts.back();
  const std::vector<float> xv = randn(size_t(max_m * k));
  p.gpu.set_deterministic(true);
  std::vector<std::vector<float>> alone;
  double err = 0;
  for (int64_t r = 0; r < max_m; ++r) {
    const std::vector<float> xr(xv.begin() + r * k, xv.begin() + (r + 1) * k);
    auto x1 = p.tensor(xr, 1, k);
    auto out1 = p.output(1, n);
    p.gpu.matmul(w.g, x1.g, out1.g, &bias.g);
    alone.push_back(p.get_gpu(out1.g));
    if (r < 8) err = std::max(err, rel_err(alone.back(), ref_matmul(xr, hw, n, k, &bias_v)));
  }
  size_t differ = 0, total = 0;
  // The first m rows in one matmul, each output against its row alone (poisoned outputs count too).
  const auto run = [&](int64_t m) {
    auto x = p.tensor(std::vector<float>(xv.begin(), xv.begin() + m * k), m, k);
    auto out = p.output(m, n);
    p.gpu.matmul(w.g, x.g, out.g, &bias.g);
    const std::vector<float> a = p.get_gpu(out.g);
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t o = 0; o < n; ++o) {
        const float v = a[size_t(r * n + o)];
        differ += std::memcmp(&v, &alone[size_t(r)][size_t(o)], 4) != 0 || !std::isfinite(v);
      }
    }
    total += a.size();
  };
  for (const int64_t m : counts) {
    for (const int min_rows : {17, 2}) {  // the few-row kernel (up to 16 rows), then the many-row one
      if (min_rows == 17 && m > 16) continue;
      cuda::set_det16_gemm_min_rows(min_rows);
      run(m);
    }
  }
  cuda::set_det16_gemm_min_rows(17);
  // The few-row kernel's other schedules (the same arithmetic) at 1, 9 and 16 rows.
  for (const int v : {1, 2, 3}) {
    cuda::set_det16_gemv_variant(v);
    for (const int64_t m : {1, 9, 16}) run(m);
  }
  cuda::set_det16_gemv_variant(0);
  p.gpu.set_deterministic(false);
  const std::string name = fmt::format("deterministic {} {}x{} + bias (tensor cores)", tensor_type_name(type), n, k);
  record(name + ": rows of 2/9/16 (both kernels), 17/40/300, and 1/9/16 in 3 few-row schedules vs alone", double(differ), 0,
         fmt::format("bit for bit ({} outputs)", total));
  record(name + ": one row vs f64", err, type == TensorType::F16 ? 1e-3 : 1e-2, "x rounded to the weight's type");
}

// The deterministic mode's batch-1 Q/K/V launch (three segments, one with a bias) against one matmul
// each, F16/BF16; segments of different part lengths (heights on both sides of 8 192) split the launch.
void check_det16_multi(Pair& p, TensorType type, const std::vector<int64_t>& ns) {
  const int64_t k = 2048;
  const std::vector<float> xv = randn(size_t(k));
  auto x = p.tensor(xv, 1, k);
  std::vector<HostWeight> hw;
  std::vector<Pair::W2> w;
  std::vector<Pair::T2> fused, single;
  for (const int64_t n : ns) {
    hw.push_back(make_weight(type, n, k));
    w.push_back(p.weight("w", type, k, n, hw.back().bytes));
    fused.push_back(p.output(1, n));
    single.push_back(p.output(1, n));
  }
  const std::vector<float> bias_v = randn(size_t(ns[2]));
  std::vector<uint8_t> bb(bias_v.size() * 4);
  std::memcpy(bb.data(), bias_v.data(), bb.size());
  auto bias = p.weight("b", TensorType::F32, ns[2], 1, bb);
  p.gpu.set_deterministic(true);
  std::vector<backend::Backend::MatmulOut> og;
  for (size_t i = 0; i < ns.size(); ++i) og.push_back({&w[i].g, fused[i].g, i == 2 ? &bias.g : nullptr});
  p.gpu.matmul_multi(x.g, og);
  for (size_t i = 0; i < ns.size(); ++i) p.gpu.matmul(w[i].g, x.g, single[i].g, i == 2 ? &bias.g : nullptr);
  p.gpu.set_deterministic(false);
  size_t differ = 0, total = 0;
  for (size_t i = 0; i < ns.size(); ++i) {
    const auto a = p.get_gpu(fused[i].g), b = p.get_gpu(single[i].g);
    for (size_t j = 0; j < a.size(); ++j) differ += std::memcmp(&a[j], &b[j], 4) != 0 || !std::isfinite(a[j]);
    total += a.size();
  }
  record(fmt::format("deterministic matmul_multi {} {}/{}/{}x2048 (+bias): one launch vs one matmul each", tensor_type_name(type), ns[0], ns[1],
                     ns[2]),
         double(differ), 0, fmt::format("bit for bit ({} outputs)", total));
}

void check_det16_all(Pair& p) {
  check_det16(p, TensorType::BF16, 4096, 1000);
  check_det16(p, TensorType::F16, 1000, 77);
  check_det16(p, TensorType::BF16, 14336, 64);
  check_det16(p, TensorType::F16, 40000, 40);
  check_det16(p, TensorType::BF16, 8, 33);
  check_det16(p, TensorType::BF16, 1280, 8200);  // parts of 32 windows (weights of more than 8 192 rows)
  check_det16_multi(p, TensorType::BF16, {2048, 512, 520});
  check_det16_multi(p, TensorType::F16, {2048, 512, 520});
  check_det16_multi(p, TensorType::BF16, {9000, 512, 520});  // two part lengths: a launch each
}

// The deterministic mode's tensor-core rows (rows_mma, round 22) against its int8 rows GEMV, which
// gives each row its batch-1 bits: every output bit for bit (memcmp), with a bias, on widths that end
// in a short group (Q4_K/Q6_K 1 280) or leave GEMV lanes idle (Q8_0 1 088: 17 chunks), on weight
// heights that are not a multiple of a tile, at every tile shape's row counts. Outputs start as NaN.
void check_rows_mma(Pair& p, TensorType type, int64_t k, int64_t n) {
  const HostWeight hw = make_weight(type, n, k);
  auto w = p.weight("w", type, k, n, hw.bytes);
  const std::vector<float> bias_v = randn(size_t(n));
  std::vector<uint8_t> bb(bias_v.size() * 4);
  std::memcpy(bb.data(), bias_v.data(), bb.size());
  auto bias = p.weight("b", TensorType::F32, n, 1, bb);
  size_t differ = 0, total = 0;
  std::string counts;
  p.gpu.set_deterministic(true);
  for (const int64_t m : {9, 16, 17, 32, 33, 100, 300}) {
    auto x = p.tensor(randn(size_t(m * k)), m, k);
    std::vector<float> got[2];
    for (int mma = 0; mma < 2; ++mma) {
      cuda::set_rows_mma_min_rows(mma == 1 ? 9 : 0);
      auto out = p.output(m, n);
      p.gpu.matmul(w.g, x.g, out.g, &bias.g);
      got[mma] = p.get_gpu(out.g);
    }
    for (size_t i = 0; i < got[0].size(); ++i) {
      differ += std::memcmp(&got[0][i], &got[1][i], 4) != 0 || !std::isfinite(got[1][i]);
    }
    total += got[0].size();
    counts += fmt::format("{}{}", counts.empty() ? "" : "/", m);
  }
  cuda::set_rows_mma_min_rows(-1);
  p.gpu.set_deterministic(false);
  record(fmt::format("deterministic {} {}x{} + bias: tensor-core rows vs rows GEMV, {} rows", tensor_type_name(type), n, k, counts),
         double(differ), 0, fmt::format("bit for bit ({} outputs)", total));
}

// Every shape class of rows_mma: splits of 8 / 4 (few blocks: 200 and 1 000 weight rows), 2 (4 096
// rows at 64 token rows) and none (many blocks).
void check_rows_mma_all(Pair& p) {
  for (TensorType t : {TensorType::Q4_K, TensorType::Q6_K}) {
    check_rows_mma(p, t, 1280, 1000);
    check_rows_mma(p, t, 14336, 200);
  }
  check_rows_mma(p, TensorType::Q4_K, 1280, 4096);
  check_rows_mma(p, TensorType::Q8_0, 1088, 1000);
  check_rows_mma(p, TensorType::Q8_0, 4096, 1000);
}

void check_embed(Pair& p, TensorType type, int64_t vocab, int64_t dim) {
  const HostWeight hw = make_weight(type, vocab, dim);
  auto w = p.weight("embd", type, dim, vocab, hw.bytes);
  std::vector<int32_t> tokens;
  std::uniform_int_distribution<int32_t> d(0, int32_t(vocab - 1));
  for (int i = 0; i < 37; ++i) tokens.push_back(d(g_rng));
  tokens.push_back(int32_t(vocab - 1));
  std::vector<int32_t> pos(tokens.size(), 0);
  p.begin_step({tokens, pos, {}, {}, {}});
  auto out = p.output(int64_t(tokens.size()), dim);
  p.cpu.embed(w.c, out.c);
  p.gpu.embed(w.g, out.g);
  record(fmt::format("embed {} {}x{} ({} tokens)", tensor_type_name(type), vocab, dim, tokens.size()),
         rel_err(p.get_gpu(out.g), p.get_cpu(out.c)), 1e-6);
}

void check_embed_all(Pair& p) {
  for (TensorType t : {TensorType::F32, TensorType::F16, TensorType::BF16, TensorType::Q8_0, TensorType::Q4_K, TensorType::Q6_K,
                       TensorType::Q5_0}) {
    check_embed(p, t, 1000, 2048);
  }
  check_embed(p, TensorType::Q4_K, 1000, 1280);
  check_embed(p, TensorType::Q6_K, 1000, 1280);
}

void check_rms_norm(Pair& p, int64_t rows, int64_t cols, int64_t group, bool in_place) {
  const std::vector<float> xv = randn(size_t(rows * cols), 3.0f);
  std::vector<float> gv = randn(size_t(group));
  std::vector<uint8_t> gb(gv.size() * 4);
  std::memcpy(gb.data(), gv.data(), gb.size());
  auto g = p.weight("gain", TensorType::F32, group, 1, gb);
  auto x = p.tensor(xv, rows, cols);
  auto out = in_place ? x : p.output(rows, cols);
  p.cpu.rms_norm(x.c, g.c, 1e-5f, out.c);
  p.gpu.rms_norm(x.g, g.g, 1e-5f, out.g);
  record(fmt::format("rms_norm {}x{} group {}{}", rows, cols, group, in_place ? " in place" : ""),
         rel_err(p.get_gpu(out.g), p.get_cpu(out.c)), 1e-5);
}

void check_rope(Pair& p, const backend::RopeConfig& rc, const std::string& what, uint32_t head_dim, int64_t heads) {
  const int64_t rows = 41;
  std::vector<int32_t> tokens(rows, 0), pos(rows);
  std::uniform_int_distribution<int32_t> d(0, 32767);
  for (auto& x : pos) x = d(g_rng);
  pos[0] = 0;
  p.begin_step({tokens, pos, {}, {}, {}});
  const std::vector<float> xv = randn(size_t(rows * heads * head_dim));
  auto x = p.tensor(xv, rows, heads * head_dim);
  p.cpu.rope(x.c, head_dim, rc);
  p.gpu.rope(x.g, head_dim, rc);
  record(fmt::format("rope {} head_dim {} x{} heads", what, head_dim, heads), rel_err(p.get_gpu(x.g), p.get_cpu(x.c)), 1e-5);
}

void check_elementwise(Pair& p) {
  const int64_t rows = 37, cols = 14336;
  const auto gv = randn(size_t(rows * cols), 2.0f), uv = randn(size_t(rows * cols), 2.0f);
  auto g = p.tensor(gv, rows, cols), u = p.tensor(uv, rows, cols);
  auto out = p.output(rows, cols);
  p.cpu.swiglu(g.c, u.c, out.c);
  p.gpu.swiglu(g.g, u.g, out.g);
  record(fmt::format("swiglu {}x{}", rows, cols), rel_err(p.get_gpu(out.g), p.get_cpu(out.c)), 1e-5);
  p.cpu.swiglu(g.c, u.c, g.c);
  p.gpu.swiglu(g.g, u.g, g.g);
  record(fmt::format("swiglu {}x{} in place", rows, cols), rel_err(p.get_gpu(g.g), p.get_cpu(g.c)), 1e-5);
  auto a = p.tensor(gv, rows, cols);
  auto o2 = p.output(rows, cols);
  p.cpu.add(a.c, u.c, o2.c);
  p.gpu.add(a.g, u.g, o2.g);
  record(fmt::format("add {}x{}", rows, cols), rel_err(p.get_gpu(o2.g), p.get_cpu(o2.c)), 0);
  p.cpu.add(a.c, u.c, a.c);
  p.gpu.add(a.g, u.g, a.g);
  record(fmt::format("add {}x{} in place", rows, cols), rel_err(p.get_gpu(a.g), p.get_cpu(a.c)), 0);
  const std::vector<int32_t> idx = {5, 0, 36, 5, 17};
  auto gr = p.output(int64_t(idx.size()), cols);
  p.cpu.gather_rows(u.c, idx, gr.c);
  p.gpu.gather_rows(u.g, idx, gr.g);
  record("gather_rows 5 of 37 rows", rel_err(p.get_gpu(gr.g), p.get_cpu(gr.c)), 0);
}

// Greedy rows on the device: argmax_rows against the CPU backend's (std::max_element) on 37 rows of
// a 128k vocabulary, with planted ties (the maximum repeated later, or earlier, in the row) and a
// row whose maximum is the last element. The error is the number of rows that differ.
void check_argmax(Pair& p, int64_t rows = 37, int64_t cols = 128256) {
  std::vector<float> v = randn(size_t(rows * cols), 3.0f);
  for (int64_t r = 0; r < rows; ++r) {
    float* row = v.data() + r * cols;
    const int64_t at = std::max_element(row, row + cols) - row;
    if (r % 3 == 1) row[(at + 7919 * (r + 1)) % cols] = row[at];  // a tie elsewhere in the row
    if (r % 5 == 2) row[cols - 1] = row[at] + 1.0f;               // the last element wins
  }
  auto t = p.tensor(v, rows, cols);
  std::vector<int32_t> gc(rows, -1), gg(rows, -1);
  p.cpu.argmax_rows(t.c, gc);
  p.gpu.argmax_rows(t.g, gg);
  int differ = 0;
  for (int64_t r = 0; r < rows; ++r) differ += gc[r] != gg[r];
  record(fmt::format("argmax_rows {}x{} (ties planted)", rows, cols), double(differ), 0,
         fmt::format("{} of {} rows differ", differ, rows));
}

// Sampled rows on the device (round 18): top_k_rows against the CPU backend's (std::partial_sort in
// logit_before's order, backend/logit_rows.h) on rows of real vocabulary sizes, with planted ties at
// the top and at the k-th place, NaN and -inf in some rows and one constant row (every candidate a
// tie: the first k ids). Values compared as bits, ids exactly; the error is the number of entries
// that differ. The GPU's host vectors are poisoned first.
void check_top_k(Pair& p, int64_t rows, int64_t cols, int k) {
  std::vector<float> v = randn(size_t(rows * cols), 3.0f);
  for (int64_t r = 0; r < rows; ++r) {
    float* row = v.data() + r * cols;
    std::vector<int32_t> order(size_t(cols), 0);
    for (int64_t c = 0; c < cols; ++c) order[size_t(c)] = int32_t(c);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) { return row[a] > row[b]; });
    if (r % 3 == 1) row[(order[0] + 7919 * (r + 1)) % cols] = row[order[0]];                // the maximum twice
    if (r % 3 == 2) row[(order[size_t(k - 1)] + 104729) % cols] = row[order[size_t(k - 1)]];  // a tie at the k-th place
    if (r % 4 == 3) {
      for (int64_t c = r; c < cols; c += 97) row[c] = std::numeric_limits<float>::quiet_NaN();
      for (int64_t c = r + 13; c < cols; c += 89) row[c] = -std::numeric_limits<float>::infinity();
    }
    if (r == rows - 1 && rows > 1) std::fill(row, row + cols, 0.5f);  // all ties
  }
  auto t = p.tensor(v, rows, cols);
  const size_t n = size_t(rows) * size_t(k);
  std::vector<float> cv(n), gv(n, -12345.0f);
  std::vector<int32_t> ci(n), gi(n, -7);
  p.cpu.top_k_rows(t.c, k, cv, ci);
  p.gpu.top_k_rows(t.g, k, gv, gi);
  size_t differ = 0;
  for (size_t i = 0; i < n; ++i) differ += ci[i] != gi[i] || std::memcmp(&cv[i], &gv[i], sizeof(float)) != 0;
  record(fmt::format("top_k_rows {}x{} k {} (ties, NaN, -inf planted)", rows, cols, k), double(differ), 0,
         fmt::format("{} of {} entries differ", differ, n));
}

// Rows drawn on the device (rounds 20-21): draw_rows against the CPU backend's (draw_of_row) on rows
// of real vocabulary sizes at several temperatures, each row with its own cuts (nothing, top-p 0.9,
// min-p 0.05, both, top-p 0.001), u spread over [0, 1) with 0 and the largest double below 1 among
// them, rows with NaN and -inf planted, a row holding +inf, a row all NaN, a constant row, and rows
// in steps of 1/8 (ties at the top-p cut). The masses are integers, so the sums agree whatever the
// order: every token must be the host's. (Only an exp that differs from the host's in the last bit,
// moving a mass by one unit exactly where the cut or the draw lands, could move one.) Each row is
// drawn for 16 values of u.
void check_draw_rows(Pair& p, int64_t rows, int64_t cols) {
  std::vector<float> v = randn(size_t(rows * cols), 3.0f);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < rows; ++r) {
    float* row = v.data() + r * cols;
    if (r % 4 == 3) {
      for (int64_t c = r; c < cols; c += 97) row[c] = nan;
      for (int64_t c = r + 13; c < cols; c += 89) row[c] = -inf;
    }
    if (r % 5 == 4) {
      for (int64_t c = 0; c < cols; ++c) row[c] = std::round(row[c] * 8.0f) / 8.0f;
    }
    if (r == 1 && rows > 4) row[cols / 2] = inf;
    if (r == 2 && rows > 4) std::fill(row, row + cols, nan);
    if (r == rows - 1 && rows > 1) std::fill(row, row + cols, 0.5f);
  }
  auto t = p.tensor(v, rows, cols);
  std::mt19937_64 rng(uint64_t(rows * 1000003 + cols));
  int64_t differ = 0, draws_total = 0, cut = 0;
  constexpr std::pair<float, float> kCuts[] = {{0.0f, 1.0f}, {0.0f, 0.9f}, {0.05f, 1.0f}, {0.05f, 0.9f}, {0.0f, 0.001f}};
  for (int round = 0; round < 16; ++round) {
    std::vector<backend::RowDraw> d(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      const double u = round == 0 ? 0.0 : round == 1 ? std::nextafter(1.0, 0.0) : std::generate_canonical<double, 53>(rng);
      const auto [min_p, top_p] = kCuts[(r + round) % 5];
      d[size_t(r)] = {u, 0.25f + 0.35f * float((r + round) % 6), min_p, top_p};
      cut += min_p > 0.0f || top_p < 1.0f;
    }
    std::vector<int32_t> gc(static_cast<size_t>(rows), -1), gg(static_cast<size_t>(rows), -7);
    p.cpu.draw_rows(t.c, d, gc);
    p.gpu.draw_rows(t.g, d, gg);
    for (int64_t r = 0; r < rows; ++r) {
      ++draws_total;
      differ += gc[size_t(r)] != gg[size_t(r)];
    }
  }
  record(fmt::format("draw_rows {}x{} (temperatures 0.25-2.0; min-p, top-p; NaN, -inf, +inf, ties planted)", rows, cols),
         double(differ), 0, fmt::format("{} draws ({} with a cut): {} differ", draws_total, cut, differ));
}

// Logit edits (round 21): edit_logits against the CPU backend, bit for bit, on rows of real
// vocabulary sizes. Each row but one gets edits of every op combination (bias, suppression,
// repetition penalty, subtraction) on distinct random tokens, the first and last columns among them,
// on logits of both signs, +0, -0 and -inf; the same step's edits are uploaded by both backends'
// begin_step. The error is the number of differing values over the whole rows (untouched ones must
// stay as they were).
void check_edit_logits(Pair& p, int64_t rows, int64_t cols) {
  std::vector<float> v = randn(size_t(rows * cols), 3.0f);
  std::mt19937 rng(uint32_t(rows * 7919 + cols));
  std::vector<backend::LogitEdit> edits;
  std::vector<uint32_t> starts = {0};
  for (int64_t r = 0; r < rows; ++r) {
    float* row = v.data() + r * cols;
    row[0] = 0.0f, row[cols - 1] = -0.0f, row[cols / 2] = -std::numeric_limits<float>::infinity();
    if (r != 1) {
      std::vector<int32_t> tokens = {0, int32_t(cols - 1), int32_t(cols / 2)};
      std::uniform_int_distribution<int32_t> col(0, int32_t(cols - 1));
      for (int i = 0; i < 600; ++i) tokens.push_back(col(rng));
      std::sort(tokens.begin(), tokens.end());
      tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
      std::uniform_real_distribution<float> val(-2.0f, 2.0f), rep(0.5f, 2.0f);
      for (const int32_t t : tokens) {
        backend::LogitEdit e{t, uint32_t(rng() % 16)};
        e.bias = val(rng), e.repetition = rep(rng), e.subtract = val(rng);
        edits.push_back(e);
      }
    }
    starts.push_back(uint32_t(edits.size()));
  }
  auto t = p.tensor(v, rows, cols);
  const std::vector<int32_t> tokens(size_t(rows), 0), pos(size_t(rows), 0);
  p.begin_step({tokens, pos, {}, {}, {}, {}, edits, starts});
  p.cpu.edit_logits(t.c);
  p.gpu.edit_logits(t.g);
  const std::vector<float> c = p.get_cpu(t.c), g = p.get_gpu(t.g);
  size_t differ = 0, changed = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    differ += std::memcmp(&c[i], &g[i], sizeof(float)) != 0;
    changed += std::memcmp(&c[i], &v[i], sizeof(float)) != 0;
  }
  record(fmt::format("edit_logits {}x{} ({} edits: bias, suppression, repetition, subtraction)", rows, cols, edits.size()),
         changed > 0 ? double(differ) : 1.0, 0, fmt::format("{} of {} values differ; {} changed by the edits", differ, c.size(), changed));
}

// Logprobs of reduced rows (round 21): log_normalizers against the CPU's (the same double
// arithmetic summed in another fixed order: relative error bound 1e-12; rows with a NaN, all -inf or
// one value must agree on NaN / the value), pick_values bit for bit.
void check_logprob_rows(Pair& p, int64_t rows, int64_t cols) {
  std::vector<float> v = randn(size_t(rows * cols), 4.0f);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  v[size_t(1 * cols + 5)] = nan;                                      // row 1: a NaN
  std::fill(v.begin() + 2 * cols, v.begin() + 3 * cols, -inf);        // row 2: all -inf
  std::fill(v.begin() + 3 * cols, v.begin() + 4 * cols, -inf);        // row 3: one value
  v[size_t(3 * cols + cols / 2)] = 1.5f;
  for (int64_t c = 0; c < cols; c += 7) v[size_t(4 * cols + c)] = -inf;  // row 4: many -inf
  auto t = p.tensor(v, rows, cols);
  std::vector<double> zc(static_cast<size_t>(rows)), zg(static_cast<size_t>(rows));
  p.cpu.log_normalizers(t.c, zc);
  p.gpu.log_normalizers(t.g, zg);
  double err = 0;
  int64_t mismatch = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const double a = zc[size_t(r)], b = zg[size_t(r)];
    if (std::isnan(a) || std::isnan(b) || std::isinf(a) || std::isinf(b)) {
      mismatch += !(std::isnan(a) && std::isnan(b)) && a != b;
    } else {
      err = std::max(err, std::abs(a - b) / std::max(1.0, std::abs(a)));
    }
  }
  record(fmt::format("log_normalizers {}x{} (NaN, all -inf, one value planted)", rows, cols), mismatch > 0 ? 1.0 : err, 1e-12,
         fmt::format("{} special rows disagree", mismatch));
  std::vector<int32_t> picks(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) picks[size_t(r)] = int32_t((r * 7919 + 13) % cols);
  picks[0] = 0, picks[size_t(rows - 1)] = int32_t(cols - 1);
  std::vector<float> pc(static_cast<size_t>(rows)), pg(static_cast<size_t>(rows), -7.0f);
  p.cpu.pick_values(t.c, picks, pc);
  p.gpu.pick_values(t.g, picks, pg);
  int64_t differ = 0;
  for (int64_t r = 0; r < rows; ++r) differ += std::memcmp(&pc[size_t(r)], &pg[size_t(r)], sizeof(float)) != 0;
  record(fmt::format("pick_values {}x{}", rows, cols), double(differ), 0, fmt::format("{} of {} differ", differ, rows));
}

// Dense weight copies (round 21, CudaBackend::set_dense_weight_cache): a backend holding BF16 copies
// of its quantized weights against one dequantizing them each step (the Pair's): matmul at 40 and
// 512 rows on the cuBLAS path must give the same bits (the same dequantized values, the same GEMM)
// and stay within the bf16 bound of the f64 reference; SwiGLU at 512 rows (gate and up as one
// batched GEMM on the copies) within that bound; the copies exist (not the token embedding table)
// and the cache stops at its budget.
void check_dense_copies(Pair& p) {
  CudaBackend dense(0);
  // Many rows: cuBLAS (not mmq, dq_mma or the bulk-copy kernel the default takes at 33..1 024 rows).
  for (CudaBackend* b : {&p.gpu, &dense}) b->set_mmq(false), b->set_dq_mma(false), b->set_dq_tma(0);
  using T = TensorType;
  for (const T type : {T::Q4_K, T::Q6_K, T::Q8_0}) {
    const int64_t n = 1024, k = 2048;
    const HostWeight hw = make_weight(type, n, k), hu = make_weight(type, n, k);
    dense.set_dense_weight_cache(uint64_t(2 * n * k * 2));  // room for these two, not a third
    const Weight wd = dense.upload_weight("w", type, k, n, hw.bytes), ud = dense.upload_weight("u", type, k, n, hu.bytes);
    const Weight wp = p.gpu.upload_weight("w", type, k, n, hw.bytes), up = p.gpu.upload_weight("u", type, k, n, hu.bytes);
    const auto before = dense.dense_cache_stats();
    (void)dense.upload_weight("over", type, k, n, hw.bytes);  // past the budget: no copy
    (void)dense.upload_weight("token_embd.weight", type, k, n, hw.bytes);
    const auto after = dense.dense_cache_stats();
    record(fmt::format("dense copies {}: made within the budget only", tensor_type_name(type)),
           before.weights == 2 && after.weights == 2 && after.bytes == uint64_t(2 * n * k * 2) ? 0.0 : 1.0, 0,
           fmt::format("{} copies, {} bytes", after.weights, after.bytes));
    for (const int64_t m : {int64_t{40}, int64_t{512}}) {
      const std::vector<float> xv = randn(size_t(m * k));
      Tensor xd = dense.scratch(m, k), xp = p.gpu.scratch(m, k), od = dense.scratch(m, n), op = p.gpu.scratch(m, n);
      dense.write(xd, xv.data());
      p.gpu.write(xp, xv.data());
      dense.matmul(wd, xd, od, nullptr);
      p.gpu.matmul(wp, xp, op, nullptr);
      std::vector<float> gd(size_t(m * n)), gp(size_t(m * n));
      dense.read(od, gd.data());
      p.gpu.read(op, gp.data());
      std::vector<double> ref(size_t(m * n));
      for (int64_t r = 0; r < m; ++r) {
        for (int64_t o = 0; o < n; ++o) {
          double sum = 0;
          for (int64_t i = 0; i < k; ++i) sum += double(xv[r * k + i]) * hw.values[o * k + i];
          ref[r * n + o] = sum;
        }
      }
      const std::string name = fmt::format("matmul {} {}x{} rows {} (dense copy vs dequantized each step)", tensor_type_name(type), n, k, m);
      record(name, max_abs_diff(gd, gp), 0, fmt::format("bit for bit; vs f64 {:.2g} (bound 1e-2)", rel_err(gd, ref)));
      record(name + " vs f64", rel_err(gd, ref), 1e-2);
      if (m == 512) {
        Tensor sd = dense.scratch(m, n), sp = p.gpu.scratch(m, n), sd_up = dense.scratch(m, n), sp_up = p.gpu.scratch(m, n);
        dense.matmul_swiglu(wd, ud, xd, sd, sd_up);
        p.gpu.matmul_swiglu(wp, up, xp, sp, sp_up);
        dense.read(sd, gd.data());
        p.gpu.read(sp, gp.data());
        // The copies are BF16 weights: gate and up in one batched GEMM, so not the bits of two calls.
        std::vector<double> sref(size_t(m * n));
        for (int64_t r = 0; r < m; ++r) {
          for (int64_t o = 0; o < n; ++o) {
            double g = 0, u = 0;
            for (int64_t i = 0; i < k; ++i) {
              g += double(xv[r * k + i]) * hw.values[o * k + i];
              u += double(xv[r * k + i]) * hu.values[o * k + i];
            }
            sref[r * n + o] = g / (1.0 + std::exp(-g)) * u;
          }
        }
        record(fmt::format("matmul_swiglu {} {}x{} rows {} (dense copies) vs f64", tensor_type_name(type), n, k, m),
               rel_err(gd, sref), 1e-2, fmt::format("[dequantized each step vs f64: {:.2g}]", rel_err(gp, sref)));
      }
      dense.release_scratch();
      p.gpu.release_scratch();
    }
  }
  p.gpu.set_mmq(true);
  p.gpu.set_dq_tma(1);
}

// The rows reduced for sampling: argmax, top-k and draws (also alone: --sampling-only).
void check_sampling(Pair& p) {
  check_argmax(p);
  check_argmax(p, 5, 1000);  // one part a row
  check_argmax(p, 3, 32000);
  for (const int k : {1, 2, 40, 128}) check_top_k(p, 37, 128256, k);  // 32 parts, one merge
  check_top_k(p, 5, 151936, 128);  // 38 parts of 128: two merge levels
  check_top_k(p, 6, 32000, 40);
  check_top_k(p, 3, 4096, 40);  // one part: no merge
  check_top_k(p, 2, 300, 128);  // one short part
  check_top_k(p, 4, 4097, 7);   // a one-column last part
  check_draw_rows(p, 37, 128256);  // 32 parts
  check_draw_rows(p, 6, 151936);   // 38 parts, a short last part
  check_draw_rows(p, 6, 32000);
  check_draw_rows(p, 5, 4096);     // one part
  check_draw_rows(p, 5, 300);      // one short part
  check_draw_rows(p, 5, 4097);     // a one-column last part
  check_edit_logits(p, 9, 128256);
  check_edit_logits(p, 3, 300);
  check_logprob_rows(p, 37, 151936);
  check_logprob_rows(p, 6, 300);
}

// ---- fused ops (round 5) -------------------------------------------------------------------------
// Each fused op against the CPU backend (its default composes the unfused ops) within the unfused
// op's bound, and against the unfused GPU ops: the same kernels' arithmetic, so equal bit for bit.

// x · wᵀ (+ bias) in f64 on the exactly dequantized weight.
std::vector<double> ref_matmul(const std::vector<float>& x, const HostWeight& w, int64_t n, int64_t k,
                               const std::vector<float>* bias = nullptr) {
  std::vector<double> r(static_cast<size_t>(n));
  for (int64_t o = 0; o < n; ++o) {
    double s = bias ? (*bias)[o] : 0.0;
    for (int64_t i = 0; i < k; ++i) s += double(x[i]) * w.values[o * k + i];
    r[o] = s;
  }
  return r;
}
double gemv_bound(TensorType t, int64_t k) { return cuda::int8_gemv_supports(t, k) ? 2e-2 : 1e-5; }

// add_rms_norm: residual and normed rows vs the CPU's add + rms_norm; at one row the normed output's
// int8 copy then feeds a Q4_K matmul, which must equal the same matmul on a freshly quantized x.
void check_add_rms_norm(Pair& p, int64_t rows, int64_t cols) {
  const auto xv = randn(size_t(rows * cols), 3.0f), dv = randn(size_t(rows * cols));
  std::vector<float> gv = randn(size_t(cols));
  std::vector<uint8_t> gb(gv.size() * 4);
  std::memcpy(gb.data(), gv.data(), gb.size());
  auto g = p.weight("gain", TensorType::F32, cols, 1, gb);
  auto x = p.tensor(xv, rows, cols), d = p.tensor(dv, rows, cols);
  auto out = p.output(rows, cols);
  p.cpu.add_rms_norm(x.c, d.c, g.c, 1e-5f, out.c);
  p.gpu.add_rms_norm(x.g, d.g, g.g, 1e-5f, out.g);
  const std::string what = fmt::format("add_rms_norm {}x{}", rows, cols);
  std::vector<float> normed = p.get_gpu(out.g);
  if (rows == 1 && cols % 256 == 0) {  // read back above: the int8 copy must survive a read
    const HostWeight hw = make_weight(TensorType::Q4_K, 512, cols);
    auto w = p.weight("w", TensorType::Q4_K, cols, 512, hw.bytes);
    auto m1 = p.output(1, 512), m2 = p.output(1, 512);  // output() fills: the copy is forgotten
    p.gpu.add_rms_norm(x.g, d.g, g.g, 1e-5f, out.g);  // again (x grows by delta once more on both)
    p.cpu.add(x.c, d.c, x.c);
    p.gpu.matmul(w.g, out.g, m1.g, nullptr);           // the norm's int8 copy
    auto again = p.tensor(p.get_gpu(out.g), 1, cols);  // the same values, quantized by the matmul
    p.gpu.matmul(w.g, again.g, m2.g, nullptr);
    record(what + " -> int8 copy -> Q4_K matmul vs quantized by matmul", max_abs_diff(p.get_gpu(m1.g), p.get_gpu(m2.g)), 0,
           "bit for bit");
  }
  record(what + " (residual x)", rel_err(p.get_gpu(x.g), p.get_cpu(x.c)), 0);
  record(what + " (normed)", rel_err(normed, p.get_cpu(out.c)), 1e-5);
}

// pair: the launch must be one pair launch (round 29: a Q4_K and a Q6_K group, gemv_kernels.h).
void check_matmul_multi(Pair& p, const std::vector<TensorType>& types, const std::vector<int64_t>& ns, int64_t k,
                        bool bias, bool pair = false) {
  const std::vector<float> xv = randn(size_t(k));
  auto x = p.tensor(xv, 1, k);
  std::vector<HostWeight> hw;
  std::vector<Pair::W2> w, b;
  std::vector<std::vector<float>> bv;
  std::vector<std::vector<uint8_t>> bb(types.size());
  std::vector<Pair::T2> fused, single;
  std::vector<backend::Backend::MatmulOut> oc, og;
  for (size_t i = 0; i < types.size(); ++i) {
    hw.push_back(make_weight(types[i], ns[i], k));
    w.push_back(p.weight("w", types[i], k, ns[i], hw[i].bytes));
    bv.push_back(randn(size_t(ns[i])));
    bb[i].resize(bv[i].size() * 4);
    std::memcpy(bb[i].data(), bv[i].data(), bb[i].size());
    b.push_back(p.weight("b", TensorType::F32, ns[i], 1, bb[i]));
    fused.push_back(p.output(1, ns[i]));
    single.push_back(p.output(1, ns[i]));
  }
  for (size_t i = 0; i < types.size(); ++i) {
    oc.push_back({&w[i].c, fused[i].c, bias ? &b[i].c : nullptr});
    og.push_back({&w[i].g, fused[i].g, bias ? &b[i].g : nullptr});
  }
  const int64_t pairs = p.gpu.gemv_pair_calls();
  p.gpu.matmul_multi(x.g, og);
  const int64_t paired = p.gpu.gemv_pair_calls() - pairs;
  for (size_t i = 0; i < types.size(); ++i) p.gpu.matmul(w[i].g, x.g, single[i].g, bias ? &b[i].g : nullptr);
  std::string name = "matmul_multi";
  for (size_t i = 0; i < types.size(); ++i) name += fmt::format(" {} {}x{}", tensor_type_name(types[i]), ns[i], k);
  if (bias) name += " +bias";
  // Each weight's error over its own bound, relative to the largest output of the whole launch (one
  // x, weights of one scale): a weight of a few rows alone can have only small outputs by chance
  // (round 46 met 3 rows at 1.21x the bound).
  std::vector<std::vector<double>> refs;
  double den = 0;
  for (size_t i = 0; i < types.size(); ++i) {
    refs.push_back(ref_matmul(xv, hw[i], ns[i], k, bias ? &bv[i] : nullptr));
    for (const double r : refs[i]) den = std::max(den, std::fabs(r));
  }
  double err = 0, same = 0;
  for (size_t i = 0; i < types.size(); ++i) {
    const auto got = p.get_gpu(fused[i].g);
    double abs_err = 0;  // a non-finite (unwritten) output: infinite
    for (size_t j = 0; j < got.size(); ++j) {
      abs_err = std::isfinite(got[j]) ? std::max(abs_err, std::fabs(double(got[j]) - refs[i][j])) : INFINITY;
      if (!std::isfinite(abs_err)) break;
    }
    err = std::max(err, (den > 0 ? abs_err / den : abs_err) / gemv_bound(types[i], k));
    same = std::max(same, max_abs_diff(got, p.get_gpu(single[i].g)));
  }
  record(name + " vs f64 (error / bound)", err, 1, "per weight: int8 bound 2e-2, f32 1e-5, of the launch's largest output");
  record(name + " vs one matmul each", same, 0, "bit for bit");
  if (pair) record(name + ": one pair launch", paired == 1 ? 0 : 1, 0, fmt::format("{} pair launches", paired));
}

void check_matmul_swiglu(Pair& p, TensorType type, int64_t n, int64_t k) {
  const std::vector<float> xv = randn(size_t(k));
  const HostWeight hg = make_weight(type, n, k), hu = make_weight(type, n, k);
  auto g = p.weight("gate", type, k, n, hg.bytes), u = p.weight("up", type, k, n, hu.bytes);
  auto x = p.tensor(xv, 1, k);
  auto out = p.output(1, n), up = p.output(1, n), o2 = p.output(1, n), u2 = p.output(1, n);
  p.gpu.matmul_swiglu(g.g, u.g, x.g, out.g, up.g);
  p.gpu.matmul(g.g, x.g, o2.g, nullptr);
  p.gpu.matmul(u.g, x.g, u2.g, nullptr);
  p.gpu.swiglu(o2.g, u2.g, o2.g);
  const auto rg = ref_matmul(xv, hg, n, k), ru = ref_matmul(xv, hu, n, k);
  std::vector<double> ref(static_cast<size_t>(n));
  for (int64_t o = 0; o < n; ++o) ref[o] = rg[o] / (1.0 + std::exp(-rg[o])) * ru[o];
  const auto got = p.get_gpu(out.g);
  const std::string name = fmt::format("matmul_swiglu {} {}x{}", tensor_type_name(type), n, k);
  // silu(g)·u amplifies the GEMV's relative error by at most ~2-3x on random data
  record(name + " vs f64", rel_err(got, ref), 3 * gemv_bound(type, k));
  record(name + " vs matmul, matmul, swiglu", max_abs_diff(got, p.get_gpu(o2.g)), 0, "bit for bit");
}

// Round 52: 2-16 token rows on the int8 rows kernels (the rows GEMV at 2 rows and in the
// deterministic mode, gemv_mma from 3): matmul_multi's weights of one type in one launch and
// matmul_swiglu's gate/up with the SwiGLU in the launch, against the same calls unfused
// (set_rows_fused(false): a launch a weight, then swiglu_kernel) bit for bit, and against f64.
// Outputs are poisoned (NaN) before each call; the fused path must have run.
void check_rows_fused(Pair& p) {
  using T = TensorType;
  struct Case {
    std::vector<T> types;
    std::vector<int64_t> ns;
    int64_t k, ffn;
  };
  const std::vector<Case> cases = {
      {{T::Q4_K, T::Q4_K, T::Q6_K}, {4096, 1024, 1024}, 4096, 14336},  // llama3-8b Q4_K_M
      {{T::Q8_0, T::Q8_0, T::Q8_0}, {896, 128, 128}, 1024, 4099 / 16 * 16 + 3},  // biases below; a ragged 16-row tile
      {{T::Q6_K, T::Q6_K, T::Q6_K}, {2048, 512, 512}, 2048, 5632},
  };
  for (const Case& c : cases) {
    const int64_t k = c.k;
    std::vector<HostWeight> hw;
    std::vector<Pair::W2> w, b;
    std::vector<std::vector<float>> bv;
    std::deque<std::vector<uint8_t>> bb;
    for (size_t i = 0; i < c.types.size(); ++i) {
      hw.push_back(make_weight(c.types[i], c.ns[i], k));
      w.push_back(p.weight("w", c.types[i], k, c.ns[i], hw[i].bytes));
      bv.push_back(randn(size_t(c.ns[i])));
      bb.emplace_back(bv[i].size() * 4);
      std::memcpy(bb.back().data(), bv[i].data(), bb.back().size());
      b.push_back(p.weight("b", T::F32, c.ns[i], 1, bb.back()));
    }
    const T ft = c.types[0];
    const HostWeight hg = make_weight(ft, c.ffn, k), hu = make_weight(ft, c.ffn, k);
    auto gate = p.weight("gate", ft, k, c.ffn, hg.bytes), up = p.weight("up", ft, k, c.ffn, hu.bytes);
    const bool bias = ft == T::Q8_0;
    // Fresh (poisoned) outputs for the case's weights, appended to dst, as matmul_multi's list.
    const auto multi_outs = [&](std::vector<Pair::T2>& dst, int64_t m) {
      std::vector<backend::Backend::MatmulOut> og;
      for (size_t i = 0; i < c.types.size(); ++i) {
        dst.push_back(p.output(m, c.ns[i]));
        og.push_back({&w[i].g, dst.back().g, bias ? &b[i].g : nullptr});
      }
      return og;
    };
    for (const bool det : {false, true}) {
      p.gpu.set_deterministic(det);
      for (const int64_t m : {2, 3, 5, 8, 12, 16}) {
        if (det && m > 12) continue;
        const std::vector<float> xv = randn(size_t(m * k));
        auto x = p.tensor(xv, m, k);
        // [0] fused, [1] one by one
        std::vector<Pair::T2> outs[2];
        Pair::T2 sw[2] = {p.output(m, c.ffn), p.output(m, c.ffn)}, upo[2] = {p.output(m, c.ffn), p.output(m, c.ffn)};
        int64_t fused_calls = 0;
        for (int u = 0; u < 2; ++u) {
          p.gpu.set_rows_fused(u == 0);
          const auto og = multi_outs(outs[u], m);
          const int64_t before = p.gpu.rows_fused_stats().calls;
          p.gpu.matmul_multi(x.g, og);
          p.gpu.matmul_swiglu(gate.g, up.g, x.g, sw[u].g, upo[u].g);
          if (u == 0) fused_calls = p.gpu.rows_fused_stats().calls - before;
        }
        p.gpu.set_rows_fused(true);
        std::string name = fmt::format("{}rows fused, {} rows:", det ? "deterministic " : "", m);
        for (size_t i = 0; i < c.types.size(); ++i) name += fmt::format(" {} {}x{}", tensor_type_name(c.types[i]), c.ns[i], k);
        name += fmt::format("{}, swiglu {} {}", bias ? " +bias" : "", tensor_type_name(ft), c.ffn);
        // Against f64: each output over the largest of its matmul (one x row, weights of one scale).
        double err = 0, same = 0;
        size_t nonfinite = 0;
        const auto rel_rows = [&](const std::vector<float>& got, const std::vector<double>& ref) {
          double den = 0, e = 0;
          for (const double r : ref) den = std::max(den, std::fabs(r));
          for (size_t j = 0; j < got.size(); ++j) {
            if (!std::isfinite(got[j])) return double(INFINITY);
            e = std::max(e, std::fabs(double(got[j]) - ref[j]));
          }
          return den > 0 ? e / den : e;
        };
        for (size_t i = 0; i < c.types.size(); ++i) {
          const auto got = p.get_gpu(outs[0][i].g), one = p.get_gpu(outs[1][i].g);
          for (const float v : got) nonfinite += !std::isfinite(v);
          same = std::max(same, max_abs_diff(got, one));
          std::vector<double> ref;
          for (int64_t r = 0; r < m; ++r) {
            const auto o = ref_matmul(std::vector<float>(xv.begin() + r * k, xv.begin() + (r + 1) * k), hw[i], c.ns[i], k, bias ? &bv[i] : nullptr);
            ref.insert(ref.end(), o.begin(), o.end());
          }
          err = std::max(err, rel_rows(got, ref) / gemv_bound(c.types[i], k));
        }
        const auto gs = p.get_gpu(sw[0].g), gs1 = p.get_gpu(sw[1].g);
        for (const float v : gs) nonfinite += !std::isfinite(v);
        same = std::max(same, max_abs_diff(gs, gs1));
        std::vector<double> sref;
        for (int64_t r = 0; r < std::min<int64_t>(m, 3); ++r) {  // the f64 SwiGLU of the first rows (time)
          const std::vector<float> xr(xv.begin() + r * k, xv.begin() + (r + 1) * k);
          const auto rg = ref_matmul(xr, hg, c.ffn, k), ru = ref_matmul(xr, hu, c.ffn, k);
          for (int64_t o = 0; o < c.ffn; ++o) sref.push_back(rg[o] / (1.0 + std::exp(-rg[o])) * ru[o]);
        }
        err = std::max(err, rel_err(std::vector<float>(gs.begin(), gs.begin() + sref.size()), sref) / (3 * gemv_bound(ft, k)));
        record(name + " vs f64 (error / bound)", err, 1, "int8 bound 2e-2 of each matmul's largest output; swiglu 3x");
        record(name + " vs one launch each", nonfinite == 0 && fused_calls == 2 ? same : INFINITY, 0,
               fmt::format("bit for bit; {} fused calls of 2, {} outputs not finite", fused_calls, nonfinite));
        // A norm of this shape now writes the int8 copy the fused launches read (the hint the calls
        // above left): h = rms_norm(x + d), then Q/K/V and the SwiGLU of h, against the same with the
        // fusion off (the quantize kernels), bit for bit; the fused calls must not quantize.
        auto x2 = p.tensor(xv, m, k), x3 = p.tensor(xv, m, k);
        auto dl = p.tensor(randn(size_t(m * k)), m, k);
        Pair::T2 h[2] = {p.output(m, k), p.output(m, k)};
        std::vector<Pair::T2> nouts[2];
        Pair::T2 nsw[2] = {p.output(m, c.ffn), p.output(m, c.ffn)};
        const std::vector<float> gain_v = randn(size_t(k));
        std::vector<uint8_t> gain_b(gain_v.size() * 4);
        std::memcpy(gain_b.data(), gain_v.data(), gain_b.size());
        auto gain = p.weight("gain", T::F32, k, 1, gain_b);
        const auto s0 = p.gpu.rows_fused_stats();
        for (int u = 0; u < 2; ++u) {
          p.gpu.set_rows_fused(u == 0);
          const auto og = multi_outs(nouts[u], m);
          p.gpu.add_rms_norm(u == 0 ? x2.g : x3.g, dl.g, gain.g, 1e-5f, h[u].g);
          p.gpu.matmul_multi(h[u].g, og);
          p.gpu.add_rms_norm(u == 0 ? x2.g : x3.g, dl.g, gain.g, 1e-5f, h[u].g);
          p.gpu.matmul_swiglu(gate.g, up.g, h[u].g, nsw[u].g, upo[u].g);
          if (u == 0) p.gpu.set_rows_fused(true);
        }
        const auto s1 = p.gpu.rows_fused_stats();
        double nsame = max_abs_diff(p.get_gpu(h[0].g), p.get_gpu(h[1].g));
        for (size_t i = 0; i < c.types.size(); ++i) nsame = std::max(nsame, max_abs_diff(p.get_gpu(nouts[0][i].g), p.get_gpu(nouts[1][i].g)));
        nsame = std::max(nsame, max_abs_diff(p.get_gpu(nsw[0].g), p.get_gpu(nsw[1].g)));
        const int64_t copies = s1.norm_copies - s0.norm_copies, quantized = s1.quantized - s0.quantized, calls = s1.calls - s0.calls;
        record(name + ": norm's int8 copy vs the quantize kernels", copies == 2 && quantized == 0 && calls == 2 ? nsame : INFINITY, 0,
               fmt::format("bit for bit; {} norm copies of 2, {} of {} fused calls quantized", copies, quantized, calls));
      }
    }
    p.gpu.set_deterministic(false);
    p.cpu.release_scratch();
    p.gpu.release_scratch();
  }
}

// rope_store_kv into layer 0 vs rope, rope, store_kv into layer 1 (GPU, bit for bit), and vs the
// CPU's rope on q and k (f32 pool: stored K/V rows too).
void check_rope_store_kv(Pair& p, const backend::RopeConfig& rc, const std::string& what, uint32_t heads,
                         uint32_t kv_heads, uint32_t hd, TensorType type) {
  const uint32_t bs = 16, blocks = 8;
  const int64_t n = 5;
  const kv::KvLayout layout = kv::KvLayout::uniform(2, kv_heads, hd, TensorType::F32, bs);
  kv::KvLayout gl = layout;
  for (auto& l : gl.layers) l.type = type;
  p.cpu.init_kv(layout, blocks);
  p.gpu.init_kv(gl, blocks);
  std::vector<int32_t> tok(n, 0), pos(n);
  std::vector<int64_t> slots(n);
  std::uniform_int_distribution<int32_t> d(0, 30000);
  for (int64_t i = 0; i < n; ++i) pos[i] = d(g_rng), slots[i] = int64_t(i * 23 + 3) % (blocks * bs);
  p.begin_step({tok, pos, slots, {}, {}});
  const int64_t qc = int64_t(heads) * hd, kc = int64_t(kv_heads) * hd;
  const auto qv = randn(size_t(n * qc)), kh = randn(size_t(n * kc)), vh = randn(size_t(n * kc));
  auto q = p.tensor(qv, n, qc), k = p.tensor(kh, n, kc), v = p.tensor(vh, n, kc);
  auto q2 = p.tensor(qv, n, qc), k2 = p.tensor(kh, n, kc);
  p.cpu.rope_store_kv(0, q.c, k.c, v.c, hd, rc);
  p.gpu.rope_store_kv(0, q.g, k.g, v.g, hd, rc);
  p.gpu.rope(q2.g, hd, rc);
  p.gpu.rope(k2.g, hd, rc);
  p.gpu.store_kv(1, k2.g, v.g);
  const size_t elem = row_bytes(type, 1);
  double same = std::max(max_abs_diff(p.get_gpu(q.g), p.get_gpu(q2.g)), max_abs_diff(p.get_gpu(k.g), p.get_gpu(k2.g)));
  double cpu_kv = 0;
  for (int64_t i = 0; i < n; ++i) {
    const auto blk = p.gpu.read_kv_block(int32_t(slots[i] / bs));
    for (int which = 0; which < 2; ++which) {
      const size_t o0 = (which == 0 ? gl.k_offset(0) : gl.v_offset(0)) / elem + size_t(slots[i] % bs) * kc;
      const size_t o1 = (which == 0 ? gl.k_offset(1) : gl.v_offset(1)) / elem + size_t(slots[i] % bs) * kc;
      const float* c = p.cpu.kv_slot(0, which, slots[i]);
      for (int64_t e = 0; e < kc; ++e) {
        const float a = blk[o0 + e], b = blk[o1 + e];
        same = std::max(same, std::isfinite(a) && std::isfinite(b) ? std::fabs(double(a) - double(b)) : INFINITY);
        cpu_kv = std::max(cpu_kv, std::fabs(double(a) - double(c[e])) / 8.0);  // randn: |x| < ~8
      }
    }
  }
  const std::string name = fmt::format("rope_store_kv {} {}q/{}kv x{}, {} KV", what, heads, kv_heads, hd, tensor_type_name(type));
  record(name + " vs rope, rope, store_kv", same, 0, "q, k, stored K/V bit for bit");
  record(name + " q, k vs cpu", std::max(rel_err(p.get_gpu(q.g), p.get_cpu(q.c)), rel_err(p.get_gpu(k.g), p.get_cpu(k.c))), 1e-5);
  if (type == TensorType::F32) record(name + " stored K/V vs cpu", cpu_kv, 1e-5);
}

void check_fused(Pair& p) {
  for (int64_t rows : {1, 5}) check_add_rms_norm(p, rows, 4096);
  check_add_rms_norm(p, 1, 2048);
  check_add_rms_norm(p, 3, 6000);  // float4s past the row's end in the last register slot
  check_add_rms_norm(p, 1, 1000);  // not a multiple of 32: no int8 copy
  p.cpu.release_scratch();
  p.gpu.release_scratch();
  using T = TensorType;
  check_matmul_multi(p, {T::Q4_K, T::Q4_K, T::Q6_K}, {4096, 1024, 1024}, 4096, false, true);  // Q4_K_M's Q, K, V
  check_matmul_multi(p, {T::Q6_K, T::Q4_K}, {4096, 1000}, 2048, false, true);  // Q6_K first, 1 pass a warp
  check_matmul_multi(p, {T::Q4_K, T::Q6_K, T::Q4_K}, {896, 128, 128}, 1280, true, true);  // biases, a short last group
  check_matmul_multi(p, {T::Q8_0, T::Q8_0, T::Q8_0}, {896, 128, 128}, 1024, true);    // qwen2-like, biases
  check_matmul_multi(p, {T::BF16, T::BF16, T::BF16}, {2048, 512, 512}, 2048, false);
  check_matmul_multi(p, {T::Q6_K, T::Q6_K}, {1000, 3}, 512, false);
  check_matmul_multi(p, {T::F16, T::F32, T::F16}, {300, 64, 64}, 256, true);
  p.cpu.release_scratch();
  p.gpu.release_scratch();
  for (T t : {T::Q4_K, T::Q6_K, T::Q8_0, T::BF16, T::F32, T::Q5_K}) check_matmul_swiglu(p, t, 1000, 2048);
  check_matmul_swiglu(p, T::Q4_K, 14336, 4096);
  check_matmul_swiglu(p, T::Q8_0, 4099, 1024);
  p.cpu.release_scratch();
  p.gpu.release_scratch();
  backend::RopeConfig rc;
  rc.dims = 128;
  rc.base = 500000.0f;
  for (T kt : {T::F32, T::F16}) check_rope_store_kv(p, rc, "interleaved", 32, 8, 128, kt);
  rc.order = backend::RopeOrder::Halves;
  rc.dims = 32;
  for (T kt : {T::F32, T::BF16}) check_rope_store_kv(p, rc, "halves partial 32 of 64", 14, 2, 64, kt);
  p.cpu.release_scratch();
  p.gpu.release_scratch();
}

// ---- the layer kernel (round 19) -----------------------------------------------------------------
// Random weights and norm gains of a layer tail on both backends; the bytes outlive the CPU
// weights, which use them in place.
struct TailHost {
  std::deque<std::vector<uint8_t>> bytes;
  Pair::W2 weight(Pair& p, const char* name, TensorType t, int64_t n, int64_t k) {
    bytes.push_back(make_weight(t, n, k).bytes);
    return p.weight(name, t, k, n, bytes.back());
  }
  Pair::W2 gain(Pair& p, const char* name, int64_t dim) {
    const std::vector<float> gv = randn(size_t(dim));
    bytes.emplace_back(gv.size() * 4);
    std::memcpy(bytes.back().data(), gv.data(), bytes.back().size());
    return p.weight(name, TensorType::F32, dim, 1, bytes.back());
  }
};

// layer_tail on the GPU (one persistent kernel for Q4_K/Q6_K weights at one row) against the same
// op run as its ops (Backend::layer_tail's composition on the same backend): every tensor it writes
// bit for bit, and that the kernel ran (or, for a type it does not take, that it did not). The CPU
// backend's result beside it (int8 activations on both sides: four GEMVs of error, bound 5e-2).
void check_layer_tail(Pair& p, int64_t dim, int64_t qd, int64_t kvd, int64_t ffn, TensorType wo_t, TensorType v_t,
                      TensorType down_t) {
  using T = TensorType;
  TailHost host;
  const auto weight = [&](const char* name, T t, int64_t n, int64_t k) { return host.weight(p, name, t, n, k); };
  const auto gain = [&](const char* name) { return host.gain(p, name, dim); };
  auto wo = weight("wo", wo_t, dim, qd), gate = weight("gate", T::Q4_K, ffn, dim), up = weight("up", T::Q4_K, ffn, dim);
  auto down = weight("down", down_t, dim, ffn), wq = weight("wq", T::Q4_K, qd, dim), wk = weight("wk", T::Q4_K, kvd, dim);
  auto wv = weight("wv", v_t, kvd, dim);
  auto gf = gain("ffn_norm"), gn = gain("attn_norm");
  const std::vector<float> xv = randn(size_t(dim), 3.0f), av = randn(size_t(qd));
  struct Run {
    Pair::T2 x, attn, h, o, g, u, q, k, v;
  };
  const auto run = [&](int which) {  // 0 CPU, 1 GPU ops, 2 GPU layer_tail (3: round 43's row norm, below)
    Run r{p.tensor(xv, 1, dim), p.tensor(av, 1, qd), p.output(1, dim), p.output(1, dim), p.output(1, ffn),
          p.output(1, ffn), p.output(1, qd), p.output(1, kvd), p.output(1, kvd)};
    const bool cpu = which == 0;
    const auto pick = [&](Pair::W2& w) { return cpu ? &w.c : &w.g; };
    const auto t = [&](Pair::T2& x) { return cpu ? x.c : x.g; };
    const backend::Backend::MatmulOut qkv[] = {{pick(wq), t(r.q)}, {pick(wk), t(r.k)}, {pick(wv), t(r.v)}};
    backend::Backend::LayerTail lt;
    lt.wo = pick(wo), lt.ffn_norm = pick(gf), lt.gate = pick(gate), lt.up = pick(up), lt.down = pick(down);
    lt.next_norm = pick(gn), lt.next_qkv = qkv, lt.eps = 1e-5f;
    if (cpu) p.cpu.layer_tail(r.attn.c, r.x.c, r.h.c, r.o.c, r.g.c, r.u.c, lt);
    else if (which == 1) p.gpu.Backend::layer_tail(r.attn.g, r.x.g, r.h.g, r.o.g, r.g.g, r.u.g, lt);
    else p.gpu.layer_tail(r.attn.g, r.x.g, r.h.g, r.o.g, r.g.g, r.u.g, lt);
    return r;
  };
  p.gpu.set_layer_kernel(true);
  p.gpu.set_row_norm(false);  // the kernel is compared with the ops and their norm kernels
  const int64_t calls = p.gpu.layer_kernel_calls();
  Run c = run(0), ops = run(1), fused = run(2);
  const bool took = p.gpu.layer_kernel_calls() == calls + 1;
  p.gpu.set_layer_kernel(false);
  p.gpu.set_row_norm(true);
  const int64_t row_calls = p.gpu.row_norm_calls();
  Run row = run(2);
  const bool row_took = p.gpu.row_norm_calls() == row_calls + 1;
  const bool should = wo_t == T::Q4_K || wo_t == T::Q6_K;
  size_t differ = 0, n = 0;
  for (auto m : {&Run::x, &Run::h, &Run::o, &Run::g, &Run::q, &Run::k, &Run::v}) {
    const auto a = p.get_gpu((ops.*m).g), b = p.get_gpu((fused.*m).g);
    n += a.size();
    for (size_t i = 0; i < a.size(); ++i) differ += std::memcmp(&a[i], &b[i], sizeof(float)) != 0 || std::isnan(b[i]);
  }
  const std::string name = fmt::format("layer_tail wo {} V {} down {} {}/{}/{}/{}", tensor_type_name(wo_t), tensor_type_name(v_t),
                                       tensor_type_name(down_t), dim, qd, kvd, ffn);
  record(name + (should ? " kernel vs ops" : " (not the kernel's types) vs ops"), took == should ? double(differ) : 1.0, 0,
         fmt::format("{} of {} outputs differ (x, h, o, g, q, k, v); kernel {}", differ, n, took ? "ran" : "did not run"));
  double err = 0;
  for (auto m : {&Run::x, &Run::q, &Run::v}) err = std::max(err, rel_err(p.get_gpu((fused.*m).g), p.get_cpu((c.*m).c)));
  record(name + " vs CPU (x, q, v)", err, 5e-2);
  // Round 43: the norms carried by the GEMVs (every type here is theirs). z = x ⊙ gain is quantized
  // where the ops quantize y = s·z, so the bits differ; every tensor the tail defines is within the
  // int8 path's bound of the ops' and the CPU's (h read back materializes the lazy norm).
  double row_err = 0, row_cpu = 0;
  std::string each;
  for (auto m : {&Run::x, &Run::h, &Run::g, &Run::q, &Run::k, &Run::v}) {
    const double e = rel_err(p.get_gpu((row.*m).g), p.get_gpu((ops.*m).g));
    row_err = std::max(row_err, e);
    each += fmt::format(" {:.2g}", e);
  }
  for (auto m : {&Run::x, &Run::q, &Run::v}) row_cpu = std::max(row_cpu, rel_err(p.get_gpu((row.*m).g), p.get_cpu((c.*m).c)));
  record(name + " row norm vs ops (x, h, g, q, k, v)", row_took ? row_err : INFINITY, 2e-2,
         (row_took ? "took the row-norm path; each:" : "did not take the row-norm path; each:") + each);
  record(name + " row norm vs CPU (x, q, v)", row_cpu, 5e-2);
  p.cpu.release_scratch();
  p.gpu.release_scratch();
}

// Round 34: layer_tail at many rows (CudaBackend::layer_tail_rows: the output and down projections
// added into x inside the register-A GEMM, the norms writing only their bf16 copy, h's f32 rows on
// demand) against the same op run as its ops on the GPU: x, h, g, q, k, v bit for bit (h read back
// materializes its f32 rows), and both projections taking the add where that kernel takes them.
// Without a next norm (the last layer): x and the ffn norm's h.
void check_layer_tail_rows(Pair& p, int64_t M, bool last) {
  using T = TensorType;
  const int64_t dim = 4096, qd = 4096, kvd = 1024, ffn = 14336;
  TailHost host;
  const auto weight = [&](const char* name, T t, int64_t n, int64_t k) { return host.weight(p, name, t, n, k); };
  const auto gain = [&](const char* name) { return host.gain(p, name, dim); };
  auto wo = weight("wo", T::Q4_K, dim, qd), gate = weight("gate", T::Q4_K, ffn, dim), up = weight("up", T::Q4_K, ffn, dim);
  auto down = weight("down", T::Q6_K, dim, ffn), wq = weight("wq", T::Q4_K, qd, dim), wk = weight("wk", T::Q4_K, kvd, dim);
  auto wv = weight("wv", T::Q6_K, kvd, dim);
  auto gf = gain("ffn_norm"), gn = gain("attn_norm");
  const std::vector<float> xv = randn(size_t(M * dim), 3.0f), av = randn(size_t(M * qd));
  struct Run {
    Pair::T2 x, attn, h, o, g, u, q, k, v;
  };
  const auto run = [&](int which) {  // 1 GPU ops, 2 GPU layer_tail
    Run r{p.tensor(xv, M, dim), p.tensor(av, M, qd), p.output(M, dim), p.output(M, dim), p.output(M, ffn),
          p.output(M, ffn), p.output(M, qd), p.output(M, kvd), p.output(M, kvd)};
    const backend::Backend::MatmulOut qkv[] = {{&wq.g, r.q.g}, {&wk.g, r.k.g}, {&wv.g, r.v.g}};
    backend::Backend::LayerTail lt;
    lt.wo = &wo.g, lt.ffn_norm = &gf.g, lt.gate = &gate.g, lt.up = &up.g, lt.down = &down.g;
    if (!last) lt.next_norm = &gn.g, lt.next_qkv = qkv;
    lt.eps = 1e-5f;
    if (which == 1) p.gpu.Backend::layer_tail(r.attn.g, r.x.g, r.h.g, r.o.g, r.g.g, r.u.g, lt);
    else p.gpu.layer_tail(r.attn.g, r.x.g, r.h.g, r.o.g, r.g.g, r.u.g, lt);
    return r;
  };
  // No CPU run: at these shapes it made --layer-only outlast its 150-200 s timeouts (calls 3-4); the
  // ops this is compared with bit for bit are checked against the CPU on their own.
  Run ops = run(1);
  std::vector<Pair::T2 Run::*> cmp{&Run::x, &Run::h, &Run::g};
  if (!last) cmp.insert(cmp.end(), {&Run::q, &Run::k, &Run::v});
  // The adding stores with x read by the block and x + o stored, and as bulk reductions in L2
  // (round 35, set_dq_tma_bulk_add).
  const bool bulk_default = cuda::dq_tma_bulk_add();
  for (const bool bulk : {false, true}) {
    cuda::set_dq_tma_bulk_add(bulk);
    const int64_t calls = p.gpu.residual_rows_calls();
    Run fused = run(2);
    const int64_t took = p.gpu.residual_rows_calls() - calls;
    size_t differ = 0, n = 0;
    for (auto m : cmp) {
      const auto a = p.get_gpu((ops.*m).g), b = p.get_gpu((fused.*m).g);
      n += a.size();
      for (size_t i = 0; i < a.size(); ++i) differ += std::memcmp(&a[i], &b[i], sizeof(float)) != 0 || std::isnan(b[i]);
    }
    const std::string name = fmt::format("layer_tail rows {} (Q4_K, Q6_K down){}{}", M, last ? ", last layer" : "",
                                         bulk ? ", bulk adds" : "");
    record(name + ": both projections added into x", double(std::abs(took - 2)), 0, fmt::format("{} of 2", took));
    record(name + " vs its ops", double(differ), 0,
           fmt::format("{} of {} outputs differ ({})", differ, n, last ? "x, h, g" : "x, h, g, q, k, v"));
  }
  cuda::set_dq_tma_bulk_add(bulk_default);
  p.cpu.release_scratch();
  p.gpu.release_scratch();
}

// --layer-trace: where a layer kernel launch spends its time (llama3-8b shapes, Q4_K with Q6_K V and
// down): per event of layer_kernel.h's trace, the time since the block's start, mean over 10
// launches, median and maximum over the blocks (SM cycles at the device's clock rate).
void trace_layer_kernel() {
  using T = TensorType;
  Pair p;
  const int64_t dim = 4096, qd = 4096, kvd = 1024, ffn = 14336;
  const auto weight = [&](const char* name, T t, int64_t n, int64_t k) {
    return p.gpu.upload_weight(name, t, k, n, make_weight(t, n, k).bytes);
  };
  const auto gain = [&](const char* name) {
    const std::vector<float> gv = randn(size_t(dim));
    std::vector<uint8_t> gb(gv.size() * 4);
    std::memcpy(gb.data(), gv.data(), gb.size());
    return p.gpu.upload_weight(name, T::F32, dim, 1, gb);
  };
  const Weight wo = weight("wo", T::Q4_K, dim, qd), gate = weight("gate", T::Q4_K, ffn, dim), up = weight("up", T::Q4_K, ffn, dim);
  const Weight down = weight("down", T::Q6_K, dim, ffn), wq = weight("wq", T::Q4_K, qd, dim), wk = weight("wk", T::Q4_K, kvd, dim);
  const Weight wv = weight("wv", T::Q6_K, kvd, dim), gf = gain("ffn_norm"), gn = gain("attn_norm");
  const auto tensor = [&](int64_t cols) {
    Tensor t = p.gpu.scratch(1, cols);
    const std::vector<float> v = randn(size_t(cols));
    p.gpu.write(t, v.data());
    return t;
  };
  Tensor x = tensor(dim), attn = tensor(qd), h = tensor(dim), o = tensor(dim), g = tensor(ffn), u = tensor(ffn);
  Tensor q = tensor(qd), k = tensor(kvd), v = tensor(kvd);
  p.gpu.set_layer_kernel(true);
  const backend::Backend::MatmulOut qkv[] = {{&wq, q}, {&wk, k}, {&wv, v}};
  backend::Backend::LayerTail lt;
  lt.wo = &wo, lt.ffn_norm = &gf, lt.gate = &gate, lt.up = &up, lt.down = &down, lt.next_norm = &gn, lt.next_qkv = qkv;
  lt.eps = 1e-5f;
  int dev = 0, sms = 0, khz = 0;
  cuda::check(cudaGetDevice(&dev), "cudaGetDevice");
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev);
  const size_t n = size_t(sms) * cuda::kLayerTraceEvents;
  auto* trace = static_cast<unsigned long long*>(cuda::device_alloc(n * 8, "layer trace"));
  std::vector<double> sum(n, 0.0);
  std::vector<unsigned long long> host(n);
  const int reps = 10;
  int64_t unstamped = 0;  // events a launch left unwritten (reset to 0 before each)
  for (int r = 0; r < 3 + reps; ++r) {
    cuda::set_layer_trace(r >= 3 ? trace : nullptr);
    if (r >= 3) cuda::check(cudaMemset(trace, 0, n * 8), "trace reset");
    p.gpu.layer_tail(attn, x, h, o, g, u, lt);
    cuda::check(cudaDeviceSynchronize(), "layer kernel");
    if (r < 3) continue;
    cuda::check(cudaMemcpy(host.data(), trace, n * 8, cudaMemcpyDeviceToHost), "trace");
    for (int b = 0; b < sms; ++b) {
      for (int e = 0; e < cuda::kLayerTraceEvents; ++e) {
        const size_t i = size_t(b) * cuda::kLayerTraceEvents;
        unstamped += host[i + e] == 0;
        sum[i + e] += double(host[i + e] - host[i]);
      }
    }
  }
  cuda::set_layer_trace(nullptr);
  const char* names[cuda::kLayerTraceEvents] = {"start", "wo: x ready", "wo: x built", "wo: rows (warp 0)",
                                               "gate/up: barrier passed", "gate/up: x built", "gate/up: rows (warp 0)",
                                               "down: barrier passed", "down: x built", "down: rows (warp 0)",
                                               "qkv: barrier passed", "qkv: x built", "qkv: rows (warp 0)", "end"};
  std::printf("layer trace (%d blocks, %d launches, %.0f MHz; us since the block's start: median / max over blocks)\n", sms, reps,
              khz / 1e3);
  for (int e = 0; e < cuda::kLayerTraceEvents; ++e) {
    std::vector<double> t;
    for (int b = 0; b < sms; ++b) t.push_back(sum[size_t(b) * cuda::kLayerTraceEvents + e] / reps / (khz / 1e3));
    std::sort(t.begin(), t.end());
    std::printf("  %-28s %8.2f %8.2f\n", names[e], t[t.size() / 2], t.back());
  }
  record("layer trace: every event of every block stamped", double(unstamped), 0, fmt::format("{} unstamped", unstamped));
}

void check_layer_tail_rows_all(Pair& p) {
  check_layer_tail_rows(p, 300, false);
  check_layer_tail_rows(p, 512, false);
  check_layer_tail_rows(p, 512, true);
}

// Round 43's producer alone (launch_gemv_i8_norm_out) at each of its shapes: x must be a plain int8
// launch's x += w·a bit for bit (each row's sum in the same order), z's copy z = x ⊙ gain rounded
// as every int8 copy is (d = amax/127 of its 32, |q·d − z| ≤ d/2, second scale d·Σq), and each
// group's Σx² within 1e-5 of f64.
void check_gemv_norm_out(Pair& p, TensorType type, int64_t n, int64_t k) {
  const HostWeight hw = make_weight(type, n, k);
  auto w = p.weight("w", type, k, n, hw.bytes);
  // The upload (and Q8_0's repack) runs on the backend's non-blocking stream; the launches below
  // use the default stream. Without this, Q8_0 4 096 x 4 096 read a half-repacked weight (calls 2, 5).
  cuda::check(cudaDeviceSynchronize(), "weight upload");
  const std::vector<float> av = randn(size_t(k)), xv = randn(size_t(n), 3.0f), gv = randn(size_t(n));
  const auto dev = [](size_t bytes) { return cuda::device_alloc(bytes, "norm-out check"); };
  auto* a = static_cast<float*>(dev(size_t(k) * 4));
  auto* x0 = static_cast<float*>(dev(size_t(n) * 4));
  auto* x1 = static_cast<float*>(dev(size_t(n) * 4));
  auto* gain = static_cast<float*>(dev(size_t(n) * 4));
  auto* part = static_cast<float*>(dev(size_t(n / 32) * 4));
  void* aq = dev(cuda::q8_bytes(k));
  void* zq = dev(cuda::q8_bytes(n));
  const auto up = [](void* d, const void* h, size_t bytes) { cuda::check(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice), "h2d"); };
  up(a, av.data(), size_t(k) * 4), up(x0, xv.data(), size_t(n) * 4), up(gain, gv.data(), size_t(n) * 4);
  cuda::check(cuda::launch_quantize_q8(a, k, aq, nullptr), "quantize_q8");
  cuda::GemvSegs segs;
  segs.add(w.g.data, n, x0, x0);
  cuda::check(cuda::launch_gemv_i8(type, segs, k, aq, nullptr), "int8 gemv (x += w a)");
  std::vector<float> plain(static_cast<size_t>(n)), got(static_cast<size_t>(n)), sums(static_cast<size_t>(n / 32));
  std::vector<uint8_t> zb(cuda::q8_bytes(n));
  cuda::check(cudaMemcpy(plain.data(), x0, size_t(n) * 4, cudaMemcpyDeviceToHost), "d2h");
  // (rows a warp, staged): the register producers' shapes, then round 48's staged producer's.
  std::vector<std::pair<int, int>> shapes;
  for (const int r : type == TensorType::Q8_0 ? std::vector<int>{2, 4, 1} : std::vector<int>{1, 2}) shapes.emplace_back(r, 0);
  if (cuda::gemv_norm_out_staged_takes(type, n, k)) shapes.insert(shapes.end(), {{1, 1}, {2, 2}, {4, 4}, {8, 8}});
  for (const auto& [r, staged] : shapes) {
    cuda::set_gemv_norm_out_rows(r);
    cuda::set_gemv_norm_out_staged(staged);
    up(x1, xv.data(), size_t(n) * 4);
    cuda::check(cudaMemset(zq, 0xFF, cuda::q8_bytes(n)), "poison");
    cuda::check(cudaMemset(part, 0xFF, size_t(n / 32) * 4), "poison");
    const cuda::RowNormOut no{gain, zq, part};
    cuda::check(cuda::launch_gemv_i8_norm_out(type, w.g.data, n, k, aq, x1, no, nullptr), "int8 gemv (norm out)");
    cuda::check(cudaDeviceSynchronize(), "norm out");
    cuda::check(cudaMemcpy(got.data(), x1, size_t(n) * 4, cudaMemcpyDeviceToHost), "d2h");
    cuda::check(cudaMemcpy(zb.data(), zq, zb.size(), cudaMemcpyDeviceToHost), "d2h");
    cuda::check(cudaMemcpy(sums.data(), part, sums.size() * 4, cudaMemcpyDeviceToHost), "d2h");
    size_t x_differ = 0, z_bad = 0, s_bad = 0;
    for (int64_t i = 0; i < n; ++i) x_differ += std::memcmp(&got[size_t(i)], &plain[size_t(i)], 4) != 0;
    const auto* q = reinterpret_cast<const int8_t*>(zb.data());
    const auto* sc = reinterpret_cast<const float*>(zb.data() + (n + 15) / 16 * 16);
    for (int64_t gi = 0; gi < n / 32; ++gi) {
      double amax = 0, ss = 0;
      int sum_q = 0;
      for (int64_t i = gi * 32; i < gi * 32 + 32; ++i) {
        amax = std::max(amax, std::fabs(double(got[size_t(i)] * gv[size_t(i)])));
        ss += double(got[size_t(i)]) * got[size_t(i)];
        sum_q += q[i];
      }
      const double d = sc[2 * gi], d_sum = sc[2 * gi + 1];
      bool ok = std::fabs(d - amax / 127.0) <= 1e-6 * amax / 127.0 && std::fabs(d_sum - d * sum_q) <= 1e-6 * std::fabs(d * sum_q) + 1e-30;
      for (int64_t i = gi * 32; i < gi * 32 + 32 && ok; ++i) {
        ok = std::fabs(q[i] * d - double(got[size_t(i)] * gv[size_t(i)])) <= 0.5 * d * (1 + 1e-5) + 1e-30;
      }
      z_bad += !ok;
      s_bad += !(std::fabs(sums[size_t(gi)] - ss) <= 1e-5 * ss);
    }
    record(fmt::format("int8 gemv norm out {} {}x{} R {}{}: x vs x += w·a, z copy, Σx²", tensor_type_name(type), n, k, r,
                       staged != 0 ? " staged" : ""),
           z_bad + s_bad == 0 ? double(x_differ) : INFINITY, 0,
           fmt::format("{} x differ in any bit, {} of {} z groups and {} sums wrong", x_differ, z_bad, n / 32, s_bad));
  }
  cuda::set_gemv_norm_out_rows(0);
  cuda::set_gemv_norm_out_staged(-1);
  for (void* d : {static_cast<void*>(a), static_cast<void*>(x0), static_cast<void*>(x1), static_cast<void*>(gain),
                  static_cast<void*>(part), aq, zq}) {
    cuda::device_free(d);
  }
}

// Round 43: a last layer's tail (no next norm) on the row-norm path: x += wo·attn with the ffn
// norm's copy, then x += down·g; h must still be the ffn norm of the middle x (backend.h), which the
// write of x materializes from the lazy norm. Against the ops (Backend::layer_tail) on the GPU.
void check_row_norm_last(Pair& p, TensorType type) {
  using T = TensorType;
  const int64_t dim = 2048, ffn = 5632;
  TailHost host;
  auto wo = host.weight(p, "wo", type, dim, dim), gate = host.weight(p, "gate", type, ffn, dim);
  auto up = host.weight(p, "up", type, ffn, dim), down = host.weight(p, "down", type == T::Q4_K ? T::Q6_K : type, dim, ffn);
  auto gf = host.gain(p, "ffn_norm", dim);
  const std::vector<float> xv = randn(size_t(dim), 3.0f), av = randn(size_t(dim));
  backend::Backend::LayerTail lt;
  lt.wo = &wo.g, lt.ffn_norm = &gf.g, lt.gate = &gate.g, lt.up = &up.g, lt.down = &down.g, lt.eps = 1e-5f;
  const auto run = [&](bool ops, Pair::T2& x, Pair::T2& h, Pair::T2& g) {
    Pair::T2 attn = p.tensor(av, 1, dim), o = p.output(1, dim), u = p.output(1, ffn);
    if (ops) p.gpu.Backend::layer_tail(attn.g, x.g, h.g, o.g, g.g, u.g, lt);
    else p.gpu.layer_tail(attn.g, x.g, h.g, o.g, g.g, u.g, lt);
  };
  Pair::T2 x0 = p.tensor(xv, 1, dim), h0 = p.output(1, dim), g0 = p.output(1, ffn);
  Pair::T2 x1 = p.tensor(xv, 1, dim), h1 = p.output(1, dim), g1 = p.output(1, ffn);
  run(true, x0, h0, g0);
  const int64_t calls = p.gpu.row_norm_calls();
  run(false, x1, h1, g1);
  const bool took = p.gpu.row_norm_calls() == calls + 1;
  double err = 0;
  for (auto* t : {&x0, &h0, &g0}) {
    const Pair::T2& other = t == &x0 ? x1 : t == &h0 ? h1 : g1;
    err = std::max(err, rel_err(p.get_gpu(other.g), p.get_gpu(t->g)));
  }
  record(fmt::format("layer_tail {} {}/{}, last layer (no next norm): row norm vs ops (x, h, g)", tensor_type_name(type), dim, ffn),
         took ? err : INFINITY, 2e-2, took ? "took the row-norm path" : "did not take the row-norm path");
  p.cpu.release_scratch();
}

void check_layer_tails_row1(Pair& p);
void check_gemv_norm_out_all(Pair& p);
void check_mma_stage_x(Pair& p);

void check_layer_kernel(Pair& p) {
  {
    // The backend's defaults: the full run's pair forces round 15's dq_mma at every row count
    // (set_dq_mma_rows), where the register-A kernel and its adding store never run (round 36 found
    // these checks failing "0 of 2" in the full run; --tail-rows-only had a fresh pair).
    Pair d;
    check_layer_tail_rows_all(d);
  }
  check_layer_tails_row1(p);
}

// One-row layer tails: round 19's kernel and round 43's row norm against the ops and the CPU, and
// the row norm's parts (--row-norm-only runs these alone).
void check_layer_tails_row1(Pair& p) {
  using T = TensorType;
  check_layer_tail(p, 2048, 2048, 512, 5632, T::Q4_K, T::Q6_K, T::Q6_K);  // 5 632: a short last group of 2 super-blocks
  check_layer_tail(p, 4096, 4096, 1024, 14336, T::Q4_K, T::Q6_K, T::Q6_K);  // llama3-8b Q4_K_M, Q6_K layers
  check_layer_tail(p, 4096, 4096, 1024, 14336, T::Q4_K, T::Q4_K, T::Q4_K);  // and its Q4_K layers
  check_layer_tail(p, 1024, 2048, 256, 2816, T::Q6_K, T::Q4_K, T::Q4_K);   // q_dim != dim
  check_layer_tail(p, 5120, 5120, 1024, 13824, T::Q4_K, T::Q6_K, T::Q4_K);  // qwen2.5-14b's: 3 float4s a norm thread
  check_layer_tail(p, 2048, 2048, 512, 5632, T::Q8_0, T::Q6_K, T::Q6_K);  // not the kernel's: the ops
  check_layer_tail(p, 4096, 4096, 1024, 14336, T::Q8_0, T::Q8_0, T::Q8_0);  // llama3-8b Q8_0 (the row norm's Q8_0 kernels)
  check_row_norm_last(p, T::Q4_K);
  check_row_norm_last(p, T::Q8_0);
  check_gemv_norm_out_all(p);
}

// Round 44: the int8 tensor-core rows kernel with each super-block's x side staged in the warps'
// rings against loading it where it is used: the same bits at every launch shape (long rows, many
// blocks, one block an SM, fewer; a partial 16-row tile; one super-block), 2 / 5 / 8 rows, with a
// bias; outputs poisoned before each launch. Round 51: 13 / 16 rows (2 tiles of 8 token columns) too, and each tile of such a launch against a launch of that tile's rows alone
// (one tile, the same launch shape): bit for bit.
void check_mma_stage_x(Pair& p) {
  using T = TensorType;
  int sms = 0;
  cuda::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "sms");
  const int saved = cuda::gemv_mma_stage_x();
  constexpr int kRows = cuda::kMmaRowsMax, kTile = cuda::kMmaTile;
  const auto read = [](const float* d, size_t count) {
    std::vector<float> h(count);
    cuda::check(cudaMemcpy(h.data(), d, count * 4, cudaMemcpyDeviceToHost), "d2h");
    return h;
  };
  for (const T t : {T::Q4_K, T::Q8_0, T::Q6_K}) {
    for (const auto& [n, k] : std::vector<std::pair<int64_t, int64_t>>{{4096, 14336}, {14336, 4096}, {4096, 4096}, {1000, 1280}, {77, 256}}) {
      const void* w = p.weight("w", t, k, n, make_weight(t, n, k).bytes).g.data;
      const std::vector<float> bias_h = randn(size_t(n));
      auto* bias = static_cast<float*>(cuda::device_alloc(size_t(n) * 4, "mma x check"));
      auto* x = static_cast<float*>(cuda::device_alloc(size_t(kRows * k) * 4, "mma x check"));
      auto* out = static_cast<float*>(cuda::device_alloc(size_t(kRows * n) * 4, "mma x check"));
      auto* out1 = static_cast<float*>(cuda::device_alloc(size_t(kTile * n) * 4, "mma x check"));
      void* xf = cuda::device_alloc(cuda::mma_x_bytes(k, kRows), "mma x check");
      void* xf1 = cuda::device_alloc(cuda::mma_x_bytes(k, kTile), "mma x check");
      const std::vector<float> xv = randn(size_t(kRows * k));
      cuda::check(cudaMemcpy(bias, bias_h.data(), size_t(n) * 4, cudaMemcpyHostToDevice), "h2d");
      cuda::check(cudaMemcpy(x, xv.data(), xv.size() * 4, cudaMemcpyHostToDevice), "h2d");
      cuda::check(cudaDeviceSynchronize(), "weight upload");  // uploads run on the backend's stream
      for (const int rows : {2, 5, 8, 13, 16}) {
        const float* b = rows == 5 || rows == 13 ? bias : nullptr;
        cuda::check(cuda::launch_quantize_mma_x(x, k, rows, k, xf, nullptr), "quantize mma x");
        std::vector<std::vector<float>> got;
        for (const int mode : {0, 1, -1}) {  // never, always, the default
          cuda::set_gemv_mma_stage_x(mode);
          cuda::check(cudaMemset(out, 0xFF, size_t(kRows * n) * 4), "poison");
          cuda::check(cuda::launch_gemv_mma(t, w, n, k, xf, rows, out, n, b, sms, nullptr), "mma rows");
          cuda::check(cudaDeviceSynchronize(), "mma rows");
          got.push_back(read(out, size_t(rows * n)));
        }
        size_t differ = 0, nonfinite = 0;
        for (size_t i = 0; i < got[0].size(); ++i) {
          nonfinite += !std::isfinite(got[0][i]) || !std::isfinite(got[1][i]);
          differ += std::memcmp(&got[0][i], &got[1][i], 4) != 0 || std::memcmp(&got[0][i], &got[2][i], 4) != 0;
        }
        const std::string what = fmt::format("int8 mma rows {} {}x{} at {} rows{}", tensor_type_name(t), n, k, rows, b ? " + bias" : "");
        record(what + ": x staged vs loaded", nonfinite == 0 ? double(differ) : INFINITY, 0,
               fmt::format("{} of {} outputs differ in any bit (staged, loaded, default), {} not finite", differ, got[0].size(), nonfinite));
        if (rows <= kTile) continue;
        // Each tile alone (the default staging, one tile): the same bits as its columns of got[2].
        size_t tile_differ = 0;
        for (int r0 = 0; r0 < rows; r0 += kTile) {
          const int tr = std::min(kTile, rows - r0);
          cuda::check(cuda::launch_quantize_mma_x(x + int64_t(r0) * k, k, tr, k, xf1, nullptr), "quantize mma x (a tile)");
          cuda::check(cudaMemset(out1, 0xFF, size_t(kTile * n) * 4), "poison");
          cuda::check(cuda::launch_gemv_mma(t, w, n, k, xf1, tr, out1, n, b, sms, nullptr), "mma rows (a tile)");
          cuda::check(cudaDeviceSynchronize(), "mma rows (a tile)");
          const std::vector<float> one = read(out1, size_t(tr * n));
          for (size_t i = 0; i < one.size(); ++i) tile_differ += std::memcmp(&one[i], &got[2][size_t(r0) * size_t(n) + i], 4) != 0;
        }
        record(what + ": each tile vs that tile alone", double(tile_differ), 0,
               fmt::format("{} of {} outputs differ in any bit", tile_differ, got[2].size()));
      }
      for (void* d : {static_cast<void*>(bias), static_cast<void*>(x), static_cast<void*>(out), static_cast<void*>(out1), xf, xf1}) {
        cuda::device_free(d);
      }
    }
  }
  cuda::set_gemv_mma_stage_x(saved);
}

void check_gemv_norm_out_all(Pair& p) {
  for (const TensorType t : {TensorType::Q4_K, TensorType::Q6_K, TensorType::Q8_0}) {
    check_gemv_norm_out(p, t, 4096, 4096);
    check_gemv_norm_out(p, t, 2048, 5632);  // a short last group of 2 super-blocks
    check_gemv_norm_out(p, t, 896, 4864);   // qwen2.5-0.5b's down: 28 blocks of 32 rows
    check_gemv_norm_out(p, t, 4096, 14336);  // llama3-8b's down
  }
}

// ---- bf16 activations at many rows (round 7) -----------------------------------------------------
// On the bf16 cuBLAS path (2+ rows) the norms and the many-row SwiGLU write the bf16 copy the next
// GEMM reads, gate/up GEMMs write bf16 and same-shape BF16 pairs (K/V, gate/up) run as one batched
// GEMM. Each output against the f64 reference, each copy against the conversion of the same f32
// values by a matmul (bit for bit), and each path against round 6's (set_bf16_activations(false)).

std::vector<double> ref_rows(const std::vector<float>& x, const HostWeight& w, int64_t m, int64_t n, int64_t k,
                             const std::vector<float>* bias = nullptr) {
  std::vector<double> r;
  r.reserve(size_t(m * n));
  for (int64_t i = 0; i < m; ++i) {
    const std::vector<float> row(x.begin() + i * k, x.begin() + (i + 1) * k);
    const auto o = ref_matmul(row, w, n, k, bias);
    r.insert(r.end(), o.begin(), o.end());
  }
  return r;
}

// Whether the backend can put two weights in one strided-batched GEMM (CudaBackend's pair_ok):
// the check says which path it tested.
std::string pair_note(const void* a, const void* b) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  const uintptr_t d = x < y ? y - x : x - y;
  return fmt::format("weights {} MiB apart: {}", d >> 20, d < (uintptr_t(1) << 31) ? "one batched GEMM" : "two GEMMs");
}

// The norm's 16-bit copy: bf16, or f16 when most weights uploaded are F16 (round 14), so each type
// gets a backend of its own.
void check_norm_copy16(TensorType wtype, int64_t m, int64_t k, int64_t n) {
  Pair p;
  const auto xv = randn(size_t(m * k)), dv = randn(size_t(m * k));
  std::vector<float> gv = randn(size_t(k));
  std::vector<uint8_t> gb(gv.size() * 4);
  std::memcpy(gb.data(), gv.data(), gb.size());
  auto g = p.weight("gain", TensorType::F32, k, 1, gb);
  const HostWeight hw = make_weight(wtype, n, k);
  auto w = p.weight("w", wtype, k, n, hw.bytes);
  auto x = p.tensor(xv, m, k), d = p.tensor(dv, m, k);
  auto out = p.output(m, k), o1 = p.output(m, n), o2 = p.output(m, n);  // outputs first: fill() drops copies
  p.cpu.add_rms_norm(x.c, d.c, g.c, 1e-5f, out.c);
  p.gpu.add_rms_norm(x.g, d.g, g.g, 1e-5f, out.g);
  p.gpu.matmul(w.g, out.g, o1.g, nullptr);  // reads the norm's 16-bit copy
  const auto normed = p.get_gpu(out.g);
  auto again = p.tensor(normed, m, k);
  p.gpu.matmul(w.g, again.g, o2.g, nullptr);  // converts the same values itself
  const std::string what = fmt::format("add_rms_norm {}x{}", m, k), tn(tensor_type_name(wtype));
  record(fmt::format("{} (normed, with its {} copy)", what, tn), rel_err(normed, p.get_cpu(out.c)), 1e-5);
  record(fmt::format("{} -> {} copy -> {} matmul vs converted by matmul", what, tn, tn),
         max_abs_diff(p.get_gpu(o1.g), p.get_gpu(o2.g)), 0, "bit for bit");
}

// The many-row SwiGLU path (set_swiglu_rows, default on since round 7) in the checks and the
// benches; --no-swiglu-rows: round 6's f32 gate/up instead.
bool g_swiglu_rows = true;

// Round 36: the 16-bit SwiGLU (swiglu8.cuh: the division's fast path without its range check where
// that is exact) against swiglu_kernel's f32 expression with `/`, for every 16-bit gate value (bf16
// and f16: 65 536 each, NaNs included) times up = 1 and -2.75: the f32 rows and the 16-bit copy
// bit for bit (a NaN matches a NaN).
void check_swiglu16_exhaustive() {
  const int64_t n = 2 * 65536;
  void *g16 = nullptr, *u16 = nullptr, *o16 = nullptr;
  float *gf = nullptr, *uf = nullptr, *of = nullptr, *o32 = nullptr;
  cuda::check(cudaMalloc(&g16, n * 2), "gate16");
  cuda::check(cudaMalloc(&u16, n * 2), "up16");
  cuda::check(cudaMalloc(&o16, n * 2), "out16");
  cuda::check(cudaMalloc(&gf, n * 4), "gate");
  cuda::check(cudaMalloc(&uf, n * 4), "up");
  cuda::check(cudaMalloc(&of, n * 4), "out f32 (16-bit path)");
  cuda::check(cudaMalloc(&o32, n * 4), "out f32 (f32 path)");
  for (const bool bf16 : {true, false}) {
    const size_t count = static_cast<size_t>(n);
    std::vector<uint16_t> gh(count), uh(count);
    std::vector<float> gv(count), uv(count);
    const uint16_t up_bits[2] = {uint16_t(bf16 ? 0x3f80 : 0x3c00), uint16_t(bf16 ? 0xc030 : 0xc180)};  // 1 and -2.75
    for (int64_t i = 0; i < n; ++i) {
      gh[size_t(i)] = uint16_t(i & 0xffff);
      uh[size_t(i)] = up_bits[i >> 16];
      gv[size_t(i)] = bf16 ? bf16_to_f32(gh[size_t(i)]) : f16_to_f32(gh[size_t(i)]);
      uv[size_t(i)] = bf16 ? bf16_to_f32(uh[size_t(i)]) : f16_to_f32(uh[size_t(i)]);
    }
    cuda::check(cudaMemcpy(g16, gh.data(), n * 2, cudaMemcpyHostToDevice), "gate16");
    cuda::check(cudaMemcpy(u16, uh.data(), n * 2, cudaMemcpyHostToDevice), "up16");
    cuda::check(cudaMemcpy(gf, gv.data(), n * 4, cudaMemcpyHostToDevice), "gate");
    cuda::check(cudaMemcpy(uf, uv.data(), n * 4, cudaMemcpyHostToDevice), "up");
    cuda::check(bf16 ? cuda::launch_swiglu_bf16(g16, u16, of, o16, n, nullptr) : cuda::launch_swiglu_f16(g16, u16, of, o16, n, nullptr),
                "swiglu16");
    cuda::check(cuda::launch_swiglu(gf, uf, o32, n, nullptr), "swiglu f32");
    cuda::check(cudaDeviceSynchronize(), "swiglu");
    std::vector<float> a(count), b(count);
    std::vector<uint16_t> h(count);
    cuda::check(cudaMemcpy(a.data(), of, n * 4, cudaMemcpyDeviceToHost), "out f32");
    cuda::check(cudaMemcpy(b.data(), o32, n * 4, cudaMemcpyDeviceToHost), "out f32");
    cuda::check(cudaMemcpy(h.data(), o16, n * 2, cudaMemcpyDeviceToHost), "out16");
    int64_t differ = 0, differ16 = 0, first = -1;
    for (int64_t i = 0; i < n; ++i) {
      const float x = a[size_t(i)], y = b[size_t(i)];
      const bool same = std::isnan(x) ? std::isnan(y) : std::memcmp(&x, &y, 4) == 0;
      if (!same && first < 0) first = i;
      differ += same ? 0 : 1;
      // The 16-bit copy: the f32 path's value rounded the same way (nearest even; NaN stays NaN).
      const float hv = bf16 ? bf16_to_f32(h[size_t(i)]) : f16_to_f32(h[size_t(i)]);
      const float want = bf16 ? bf16_rounded(y) : f16_to_f32(f32_to_f16(y));
      differ16 += (std::isnan(want) ? std::isnan(hv) : std::memcmp(&hv, &want, 4) == 0) ? 0 : 1;
    }
    record(fmt::format("swiglu16 {} every gate value x up 1, -2.75 vs the f32 kernel's `/`", bf16 ? "bf16" : "f16"), double(differ + differ16), 0,
           first < 0 ? fmt::format("bit for bit: 0 of {} f32 and 16-bit outputs differ", 2 * n)
                     : fmt::format("{} f32 / {} 16-bit differ; first gate 0x{:04x}: {:a} vs {:a}", differ, differ16, int(first & 0xffff),
                                   a[size_t(first)], b[size_t(first)]));
  }
  for (void* q : {g16, u16, o16, static_cast<void*>(gf), static_cast<void*>(uf), static_cast<void*>(of), static_cast<void*>(o32)}) cudaFree(q);
}

void check_swiglu_rows(Pair& p, TensorType type, int64_t m, int64_t n, int64_t k, bool split_tail = false) {
  p.gpu.set_swiglu_rows(g_swiglu_rows);
  const std::vector<float> xv = randn(size_t(m * k));
  // The down projection reads the SwiGLU's 16-bit copy: f16 for F16 weights (round 14), else bf16.
  const TensorType down_type = type == TensorType::F16 ? TensorType::F16 : TensorType::BF16;
  const HostWeight hg = make_weight(type, n, k), hu = make_weight(type, n, k), hd = make_weight(down_type, 256, n);
  auto g = p.weight("gate", type, k, n, hg.bytes), u = p.weight("up", type, k, n, hu.bytes);
  auto down = p.weight("down", down_type, n, 256, hd.bytes);
  auto x = p.tensor(xv, m, k);
  auto out = p.output(m, n), up = p.output(m, n), o6 = p.output(m, n), u6 = p.output(m, n), o7 = p.output(m, n);
  auto d1 = p.output(m, 256), d2 = p.output(m, 256);
  const int64_t fused_before = p.gpu.dq_tma_swiglu_calls();
  p.gpu.matmul_swiglu(g.g, u.g, x.g, out.g, up.g);
  // Round 36's fused SwiGLU writes bf16 rows only: its f32 rows are those widened.
  const bool fused = p.gpu.dq_tma_swiglu_calls() > fused_before;
  p.gpu.matmul(down.g, out.g, d1.g, nullptr);  // reads the SwiGLU's bf16 copy
  const auto got = p.get_gpu(out.g);
  auto again = p.tensor(got, m, n);
  p.gpu.matmul(down.g, again.g, d2.g, nullptr);
  p.gpu.set_lazy_swiglu(false);  // f32 rows written by the SwiGLU kernel itself, not on demand
  p.gpu.matmul_swiglu(g.g, u.g, x.g, o7.g, up.g);
  p.gpu.set_lazy_swiglu(true);
  p.gpu.set_bf16_activations(false);  // round 6: f32 gate/up, swiglu kernel
  p.gpu.matmul_swiglu(g.g, u.g, x.g, o6.g, u6.g);
  p.gpu.set_bf16_activations(true);
  const auto rg = ref_rows(xv, hg, m, n, k), ru = ref_rows(xv, hu, m, n, k);
  std::vector<double> ref(rg.size());
  for (size_t i = 0; i < ref.size(); ++i) ref[i] = rg[i] / (1.0 + std::exp(-rg[i])) * ru[i];
  const std::string name = fmt::format("matmul_swiglu {} {}x{} rows {}{}", tensor_type_name(type), n, k, m,
                                       g_swiglu_rows ? " (many-row SwiGLU path)" : " (f32 gate/up path)");
  const auto r6 = p.get_gpu(o6.g);
  // the bf16 GEMM bound (1e-2) x3 as at batch 1: gate and up are rounded to bf16 before silu·up
  const std::string how = !g_swiglu_rows                                                         ? "f32 gate/up"
                          : (type == TensorType::BF16 || type == TensorType::F16) && m < 1024 ? pair_note(g.g.data, u.g.data)
                          : fused                                                             ? "one fused launch"
                                                                                              : "two GEMMs";
  record(name + " vs f64", rel_err(got, ref), 3e-2,
         fmt::format("[round 6 path vs f64: {:.2g}; {}]", rel_err(r6, ref), how));
  record(name + " vs round 6 (f32 gate/up)", rel_err(got, r6), 3e-2);
  if (fused && split_tail) {  // the unfused launches' last wave is not split in K: other sums there
    record(name + " f32 rows on demand (fused, split last wave) vs written at once, rounded to bf16",
           rel_err(got, bf16_rounded(p.get_gpu(o7.g))), 2e-2, "max |diff| / max |default|: the last wave's other K sums");
  } else if (fused) {
    record(name + " f32 rows on demand (fused: its bf16 rows) vs written at once, rounded to bf16",
           max_abs_diff(got, bf16_rounded(p.get_gpu(o7.g))), 0, "bit for bit");
  } else {
    record(name + " f32 rows on demand vs written at once", max_abs_diff(got, p.get_gpu(o7.g)), 0, "bit for bit");
  }
  record(fmt::format("{} -> 16-bit copy -> {} matmul vs converted by matmul", name, tensor_type_name(down_type)),
         max_abs_diff(p.get_gpu(d1.g), p.get_gpu(d2.g)), 0, "bit for bit");
  p.gpu.set_swiglu_rows(true);
}

// Dequantization ahead (dequant_ahead.h): three quantized weights in a repeating order at 64 token
// rows (the cuBLAS path). From the second round the side stream guesses each weight; every output
// must equal the in-line path's bit for bit (same kernel, same GEMM) and the f64 reference.
void check_dequant_ahead(Pair& p) {
  const int64_t m = 64, k = 1024;
  const std::vector<TensorType> types = {TensorType::Q4_K, TensorType::Q8_0, TensorType::Q6_K};
  const std::vector<int64_t> ns = {768, 512, 1024};
  std::vector<HostWeight> hw;
  std::vector<Pair::W2> w;
  for (size_t i = 0; i < types.size(); ++i) {
    hw.push_back(make_weight(types[i], ns[i], k));
    w.push_back(p.weight("w", types[i], k, ns[i], hw.back().bytes));
  }
  const std::vector<float> xv = randn(size_t(m * k));
  auto x = p.tensor(xv, m, k);
  constexpr int kRounds = 3;
  std::vector<std::vector<float>> outs[2];
  uint64_t hits = 0;
  p.gpu.set_mmq(false);  // earlier checks raise the mmq row limit: take the cuBLAS path at 64 rows
  p.gpu.set_dq_mma(false);
  p.gpu.set_dq_tma(0);   // (the default's bulk-copy kernel at 33..1 024 rows: dequantization ahead serves cuBLAS)
  for (const bool ahead : {false, true}) {
    p.gpu.set_dequant_ahead(ahead);
    const auto before = p.gpu.dequant_ahead_stats();
    for (int round = 0; round < kRounds; ++round) {
      for (size_t i = 0; i < types.size(); ++i) {
        auto out = p.output(m, ns[i]);
        p.gpu.matmul(w[i].g, x.g, out.g, nullptr);
        outs[ahead].push_back(p.get_gpu(out.g));
      }
    }
    if (ahead) hits = p.gpu.dequant_ahead_stats().hits - before.hits;
  }
  double diff = 0, err = 0;
  for (size_t j = 0; j < outs[0].size(); ++j) {
    diff = std::max(diff, max_abs_diff(outs[1][j], outs[0][j]));
    const size_t i = j % types.size();
    err = std::max(err, rel_err(outs[1][j], ref_rows(xv, hw[i], m, ns[i], k)));
  }
  // Every call after the first round's, but the second round's first (its guess is learnt at that call).
  const int64_t want = (kRounds - 1) * int64_t(types.size()) - 1;
  record("dequant ahead: Q4_K, Q8_0, Q6_K x 3 rounds, 64 rows, vs in line", diff, 0,
         fmt::format("bit for bit; {} right guesses (want >= {})", hits, want));
  record("dequant ahead: right guesses missing", double(std::max<int64_t>(0, want - int64_t(hits))), 0);
  record("dequant ahead: Q4_K, Q8_0, Q6_K, 64 rows vs f64", err, 1e-2);
  p.gpu.set_dequant_ahead(true);
  p.gpu.set_mmq(true);
  p.gpu.set_dq_mma(true);
  p.gpu.set_dq_tma(1);
}

void check_multi_rows(Pair& p, int64_t m, const std::vector<int64_t>& ns, int64_t k, bool bias, bool reversed) {
  const std::vector<float> xv = randn(size_t(m * k));
  auto x = p.tensor(xv, m, k);
  std::vector<HostWeight> hw;
  std::vector<Pair::W2> w, b;
  std::vector<std::vector<float>> bv;
  std::vector<std::vector<uint8_t>> bb(ns.size());
  std::vector<Pair::T2> fused, single;
  for (size_t i = 0; i < ns.size(); ++i) {
    hw.push_back(make_weight(TensorType::BF16, ns[i], k));
    w.push_back(p.weight("w", TensorType::BF16, k, ns[i], hw[i].bytes));
    bv.push_back(randn(size_t(ns[i])));
    bb[i].resize(bv[i].size() * 4);
    std::memcpy(bb[i].data(), bv[i].data(), bb[i].size());
    b.push_back(p.weight("b", TensorType::F32, ns[i], 1, bb[i]));
  }
  for (size_t i = 0; i < ns.size(); ++i) fused.push_back(p.output(m, ns[i]));
  for (size_t i = 0; i < ns.size(); ++i) single.push_back(p.output(m, ns[i]));
  std::vector<backend::Backend::MatmulOut> og;
  for (size_t i = 0; i < ns.size(); ++i) og.push_back({&w[i].g, fused[i].g, bias ? &b[i].g : nullptr});
  if (reversed) std::reverse(og.begin(), og.end());  // the pair found in either order
  p.gpu.matmul_multi(x.g, og);
  for (size_t i = 0; i < ns.size(); ++i) p.gpu.matmul(w[i].g, x.g, single[i].g, bias ? &b[i].g : nullptr);
  std::string name = fmt::format("matmul_multi rows {}", m);
  for (size_t i = 0; i < ns.size(); ++i) name += fmt::format(" BF16 {}x{}", ns[i], k);
  if (bias) name += " +bias";
  if (reversed) name += " (reversed)";
  double err = 0, diff = 0;
  for (size_t i = 0; i < ns.size(); ++i) {
    const auto got = p.get_gpu(fused[i].g);
    err = std::max(err, rel_err(got, ref_rows(xv, hw[i], m, ns[i], k, bias ? &bv[i] : nullptr)));
    diff = std::max(diff, rel_err(got, p.get_gpu(single[i].g)));
  }
  record(name + " vs f64", err, 1e-2);
  record(name + " vs one matmul each", diff, 1e-2, "batched vs single GEMM; " + pair_note(w[1].g.data, w[2].g.data));
}

// Raw cuBLAS: a strided-batched pair of 1024x1024 BF16 weights (bf16 out, shared x, stride 0) at
// 264 and 512 rows, the two weights 2 MiB apart, then 5 GiB apart, each against two single GEMMs.
// Prints as it goes: a fault ends the process (the error is sticky).
void pair_probe() {
  cublasHandle_t h;
  cuda::check(cublasCreate(&h), "cublasCreate");
  void* ws = cuda::device_alloc(size_t(32) << 20, "probe");
  cuda::check(cublasSetWorkspace(h, ws, size_t(32) << 20), "cublasSetWorkspace");
  const int64_t N = 1024, K = 1024, far = int64_t(5) << 30;
  auto* big = static_cast<uint8_t*>(cuda::device_alloc(size_t(far + N * K * 2), "probe"));
  std::vector<__nv_bfloat16> a(size_t(2 * N * K)), xh(size_t(K * 512));
  for (auto& v : a) v = __float2bfloat16(std::normal_distribution<float>(0.0f, 0.05f)(g_rng));
  for (auto& v : xh) v = __float2bfloat16(std::normal_distribution<float>(0.0f, 1.0f)(g_rng));
  cuda::check(cudaMemcpy(big, a.data(), a.size() * 2, cudaMemcpyHostToDevice), "h2d");  // near: [A0][A1]
  cuda::check(cudaMemcpy(big + far, a.data() + N * K, size_t(N * K) * 2, cudaMemcpyHostToDevice), "h2d");  // far A1
  void* x = cuda::device_alloc(xh.size() * 2, "probe");
  cuda::check(cudaMemcpy(x, xh.data(), xh.size() * 2, cudaMemcpyHostToDevice), "h2d");
  auto* c = static_cast<__nv_bfloat16*>(cuda::device_alloc(size_t(4 * N * 512) * 2, "probe"));
  const float one = 1, zero = 0;
  for (const int64_t stride_bytes : {N * K * 2, far}) {
    for (const int64_t M : {512, 264}) {
      for (int i = 0; i < 2; ++i) {
        cuda::check(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, int(N), int(M), int(K), &one, big + i * stride_bytes, CUDA_R_16BF,
                                 int(K), x, CUDA_R_16BF, int(K), &zero, c + i * N * M, CUDA_R_16BF, int(N), CUBLAS_COMPUTE_32F,
                                 CUBLAS_GEMM_DEFAULT),
                    "gemm");
      }
      cuda::check(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, int(N), int(M), int(K), &one, big, CUDA_R_16BF, int(K),
                                             stride_bytes / 2, x, CUDA_R_16BF, int(K), 0, &zero, c + 2 * N * M, CUDA_R_16BF, int(N),
                                             N * M, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                  "gemm pair");
      const cudaError_t rc = cudaDeviceSynchronize();
      if (rc != cudaSuccess) {
        std::printf("pair probe: weights %lld MiB apart, %lld rows: %s\n", (long long)(stride_bytes >> 20), (long long)M,
                    cudaGetErrorString(rc));
        std::fflush(stdout);
        std::exit(3);
      }
      std::vector<uint16_t> r(size_t(4 * N * M));
      cuda::check(cudaMemcpy(r.data(), c, r.size() * 2, cudaMemcpyDeviceToHost), "d2h");
      int64_t differ = 0;
      for (int64_t e = 0; e < 2 * N * M; ++e) differ += r[size_t(e)] != r[size_t(2 * N * M + e)];
      std::printf("pair probe: weights %lld MiB apart, %lld rows: ok, %lld of %lld outputs differ from two single GEMMs\n",
                  (long long)(stride_bytes >> 20), (long long)M, (long long)differ, (long long)(2 * N * M));
      std::fflush(stdout);
    }
  }
  cublasDestroy(h);
  cudaFree(ws);
  cudaFree(big);
  cudaFree(x);
  cudaFree(c);
}

void check_dq_group(Pair& p);
void check_dq_wave_split();
void check_dq_swiglu();
void check_dq_swiglu_split_tail(Pair& p);
void check_swiglu16_exhaustive();

// Round 37: the register-A kernel's A fragments (T::frag, run-time and compile-time stage position)
// against T::dequant, every value of 4 096 random stages of each type (frag_probe.cu); a zero's sign
// may differ (Q8_0's FMA form), counted in the note.
void check_frag_probe() {
  for (const auto& [type, name] : {std::pair<int, const char*>{4, "Q4_K"}, {6, "Q6_K"}, {8, "Q8_0"}}) {
    long zero_signs = 0;
    const long differ = ::frag_probe(type, 4096, zero_signs);
    record(fmt::format("register-A fragments vs dequant, {}, 4096 random stages (both forms)", name), differ == 0 ? 0.0 : 1.0, 0,
           differ < 0 ? std::string("the probe failed")
                      : fmt::format("{} of {} values differ; {} equal but for a zero's sign", differ, 4096L * 4 * 64 * 2, zero_signs));
  }
}

void check_bf16_rows(Pair& p) {
  for (const TensorType t : {TensorType::BF16, TensorType::F16}) {
    check_norm_copy16(t, 264, 4096, 512);
    check_norm_copy16(t, 9, 2048, 256);  // a decode-sized batch
  }
  p.cpu.release_scratch();
  p.gpu.release_scratch();
  check_swiglu_rows(p, TensorType::BF16, 264, 1024, 1024);
  check_swiglu_rows(p, TensorType::F16, 264, 1024, 1024);  // f16 GEMMs on the weights as stored (round 14)
  check_swiglu_rows(p, TensorType::BF16, 9, 2048, 512);
  {
    Pair d;  // the backend's defaults (earlier checks force dq_mma in p): round 28's kernel, bf16 gate/up rows
    check_swiglu_rows(d, TensorType::Q4_K, 264, 1000, 1024);
    check_dq_group(d);
    check_dq_wave_split();
    check_dq_swiglu();
    check_dq_swiglu_split_tail(d);
    check_swiglu16_exhaustive();
    check_frag_probe();
  }
  p.cpu.release_scratch();
  p.gpu.release_scratch();
  check_multi_rows(p, 264, {1024, 256, 256}, 1024, false, false);
  check_multi_rows(p, 40, {1024, 256, 256}, 1024, true, true);
  p.cpu.release_scratch();
  p.gpu.release_scratch();
}

// K/V as a pool of `type` holds them: f32 unchanged, F16/BF16 rounded to nearest (host rounding).
std::vector<float> kv_round(std::vector<float> x, TensorType type) {
  for (float& f : x) {
    if (type == TensorType::F16) f = __half2float(__float2half_rn(f));
    if (type == TensorType::BF16) f = __bfloat162float(__float2bfloat16_rn(f));
  }
  return x;
}

// KV type of the model benchmarks (--kv-dtype; default F16, the GPU default).
TensorType g_kv_type = TensorType::F16;

// Rows per sequence from which the checks send a chunk to the tensor-core attention kernel, and
// its error bounds: Q and the softmax weights P are rounded to the pool's type (unit roundoff 2^-11
// for F16, 2^-8 for BF16) before the products, so ~1e-3 / ~8e-3 of max|out| is expected.
constexpr int kTcRows = 8;
constexpr double kTcBoundF16 = 1e-3, kTcBoundBF16 = 8e-3;

// Paged attention over several sequences (prefill chunks, long decodes) with shuffled block tables;
// store_kv and copy_blocks checked on the pool contents. With a 16-bit `type` the GPU pool rounds
// K/V on store, and the CPU f32 reference is given the same rounded K/V: store_kv must equal the
// host rounding exactly and attention (f32 math over the 16-bit values) must meet the f32 bound.
// A one-row decode step's attention writes the int8 copy of its output (round 8: the combine kernel,
// or a quantize kernel after the decode kernel's own merge); the output projection's int8 GEMV then
// skips its quantization. That matmul must equal, bit for bit, the same matmul on the same values
// in another tensor (quantized by the matmul). F16 pool at 600 positions: round 5's kernel and the
// combine; BF16 pool: round 7's kernel, which merges short rows itself; F16 at 3 000: round 7 +
// combine (fused launch, so the copy is quantized after).
void check_attention_q8_copy(TensorType kv_type, uint32_t n_past) {
  CudaBackend gpu(0);
  const uint32_t bs = 16, heads = 32, kv_heads = 8, hd = 128, width = heads * hd;
  kv::KvLayout layout = kv::KvLayout::uniform(1, kv_heads, hd, kv_type, bs);
  const uint32_t blocks = (n_past + 1 + bs - 1) / bs;
  gpu.init_kv(layout, blocks);
  std::vector<int32_t> table(blocks);
  for (uint32_t i = 0; i < blocks; ++i) table[i] = int32_t(blocks - 1 - i);  // reversed: not the identity
  const auto slot = [&](uint32_t t) { return int64_t(table[t / bs]) * bs + t % bs; };
  const int64_t row = int64_t(kv_heads) * hd;
  {  // the past
    std::vector<int32_t> tok(n_past, 0), pos(n_past);
    std::vector<int64_t> slots(n_past);
    for (uint32_t t = 0; t < n_past; ++t) pos[t] = int32_t(t), slots[t] = slot(t);
    gpu.begin_step({tok, pos, slots, {}, {}});
    Tensor k = gpu.scratch(n_past, row), v = gpu.scratch(n_past, row);
    gpu.write(k, randn(size_t(n_past * row)).data());
    gpu.write(v, randn(size_t(n_past * row)).data());
    gpu.store_kv(0, k, v);
    gpu.release_scratch();
  }
  const std::vector<int32_t> tok{0}, pos{int32_t(n_past)};
  const std::vector<int64_t> slots{slot(n_past)};
  const std::vector<backend::StepSequence> ss{{0, 1, n_past, 0, blocks}};
  gpu.begin_step({tok, pos, slots, ss, table});
  Tensor k = gpu.scratch(1, row), v = gpu.scratch(1, row), q = gpu.scratch(1, width), out = gpu.scratch(1, width);
  gpu.write(k, randn(size_t(row)).data());
  gpu.write(v, randn(size_t(row)).data());
  gpu.write(q, randn(size_t(width)).data());
  gpu.store_kv(0, k, v);
  const HostWeight hw = make_weight(TensorType::Q8_0, 256, width);
  const Weight w = gpu.upload_weight("wo", TensorType::Q8_0, width, 256, hw.bytes);
  Tensor o1 = gpu.scratch(1, 256), o2 = gpu.scratch(1, 256), again = gpu.scratch(1, width);
  gpu.fill(o1, NAN);
  gpu.fill(o2, NAN);
  gpu.attention(0, q, {heads, kv_heads, hd, 1.0f / std::sqrt(float(hd))}, out);
  const bool copied = gpu.has_int8_copy(out);
  gpu.matmul(w, out, o1, nullptr);  // reads the attention's int8 copy
  std::vector<float> ov(static_cast<size_t>(width)), r1(256), r2(256);
  gpu.read(out, ov.data());
  gpu.write(again, ov.data());
  gpu.matmul(w, again, o2, nullptr);  // quantizes x itself
  gpu.read(o1, r1.data());
  gpu.read(o2, r2.data());
  record(fmt::format("attention int8 copy -> Q8_0 matmul vs quantized by the matmul, {} KV, {} positions",
                     tensor_type_name(kv_type), n_past + 1),
         copied ? max_abs_diff(r1, r2) : INFINITY, 0, copied ? "bit for bit" : "no int8 copy was written");
}

// Both backends' pools for a `layers`-layer model of kv_heads × hd (the CPU's in f32, the GPU's in
// `type`) and a shuffled block table over all `blocks`.
struct ShuffledPools {
  kv::KvLayout gpu_layout;
  std::vector<int32_t> table;
};
ShuffledPools shuffled_pools(Pair& p, uint32_t layers, uint32_t kv_heads, uint32_t hd, TensorType type, uint32_t bs, uint32_t blocks) {
  const kv::KvLayout layout = kv::KvLayout::uniform(layers, kv_heads, hd, TensorType::F32, bs);
  ShuffledPools sp{layout, std::vector<int32_t>(blocks)};
  for (auto& l : sp.gpu_layout.layers) l.type = type;
  p.cpu.init_kv(layout, blocks);
  p.gpu.init_kv(sp.gpu_layout, blocks);
  for (uint32_t i = 0; i < blocks; ++i) sp.table[i] = int32_t(i);
  std::shuffle(sp.table.begin(), sp.table.end(), g_rng);
  return sp;
}

// Layers 0 and 1 of the pools both hold the same n_past random K/V rows (rounded to `type`) at the
// shuffled table's slots; then the step of T new rows after them begins. The new rows' slots.
std::vector<int64_t> begin_after_past(Pair& p, const std::vector<int32_t>& table, uint32_t bs, uint32_t blocks, uint32_t n_past, uint32_t T,
                                      int64_t row, TensorType type) {
  const auto slot = [&](uint32_t t) { return int64_t(table[t / bs]) * bs + t % bs; };
  if (n_past > 0) {
    std::vector<int32_t> tok(n_past, 0), pos(n_past);
    std::vector<int64_t> slots(n_past);
    for (uint32_t t = 0; t < n_past; ++t) pos[t] = int32_t(t), slots[t] = slot(t);
    p.begin_step({tok, pos, slots, {}, {}});
    const auto pk = kv_round(randn(size_t(n_past * row)), type), pv = kv_round(randn(size_t(n_past * row)), type);
    auto k = p.tensor(pk, n_past, row), v = p.tensor(pv, n_past, row);
    p.gpu.store_kv(0, k.g, v.g);
    p.gpu.store_kv(1, k.g, v.g);
    p.cpu.release_scratch();
    p.gpu.release_scratch();
  }
  std::vector<int32_t> tok(T, 0), pos(T);
  std::vector<int64_t> slots(T);
  for (uint32_t t = 0; t < T; ++t) pos[t] = int32_t(n_past + t), slots[t] = slot(n_past + t);
  const std::vector<backend::StepSequence> ss{{0, T, n_past, 0, blocks}};
  p.begin_step({tok, pos, slots, ss, table});
  return slots;
}

// Round 29: a step of one token row through rope_attention, which the CUDA backend runs as one
// kernel (RoPE, the newest K/V into its slot, attention; attn_rope_row.h), against rope_store_kv +
// attention on layer 1 of the same pool (the same past): the newest K/V stored bit for bit; the
// output against an f64 attention over the exact stored 16-bit K/V and the q that rope_store_kv
// rotated, within the f32 bound (poisoned output: every element written); the int8 copy for the
// output projection bit for bit with quantizing that output. In eager steps rows of 1 to 1 024
// positions take the kernel (one block, or up to 8 slices of a cluster merged by slice 0); 1 101
// and 2 001 positions must not (round 5's and round 17's kernels).
void check_rope_attention(Pair& p, uint32_t heads, uint32_t kv_heads, uint32_t hd, TensorType type, const backend::RopeConfig& rc,
                          const std::string& what) {
  const uint32_t bs = 16, G = heads / kv_heads;
  const int64_t row = int64_t(kv_heads) * hd, width = int64_t(heads) * hd;
  const size_t elem = row_bytes(type, 1);
  const HostWeight hw = make_weight(TensorType::Q8_0, 64, width);
  const Weight w = p.gpu.upload_weight("rope_attention wo", TensorType::Q8_0, width, 64, hw.bytes);
  // Eager steps: a launch's padded positions are the row's, rounded up to 64 (a decode graph pads a
  // one-row step's to a power of two of at least 256, so that rows past 1 024 take round 17's
  // kernel there).
  p.gpu.set_cuda_graphs(false);
  for (const uint32_t n_past : {0u, 1u, 100u, 127u, 128u, 300u, 1000u, 1023u, 1100u, 2000u}) {
    const uint32_t ctx = n_past + 1, blocks = (ctx + bs - 1) / bs + 2;
    const ShuffledPools pools = shuffled_pools(p, 2, kv_heads, hd, type, bs, blocks);
    const kv::KvLayout& gl = pools.gpu_layout;
    const std::vector<int32_t>& table = pools.table;
    const auto slot = [&](uint32_t t) { return int64_t(table[t / bs]) * bs + t % bs; };
    std::vector<float> past_k, past_v;  // as stored (rounded to the pool's type)
    if (n_past > 0) {
      std::vector<int32_t> tok(n_past, 0), pos(n_past);
      std::vector<int64_t> slots(n_past);
      for (uint32_t t = 0; t < n_past; ++t) pos[t] = int32_t(t), slots[t] = slot(t);
      p.begin_step({tok, pos, slots, {}, {}});
      past_k = kv_round(randn(size_t(n_past * row)), type);
      past_v = kv_round(randn(size_t(n_past * row)), type);
      auto k = p.tensor(past_k, n_past, row), v = p.tensor(past_v, n_past, row);
      p.gpu.store_kv(0, k.g, v.g);
      p.gpu.store_kv(1, k.g, v.g);
      p.cpu.release_scratch();
      p.gpu.release_scratch();
    }
    const std::vector<int32_t> tok{0}, pos{int32_t(n_past)};
    const std::vector<int64_t> slots{slot(n_past)};
    const std::vector<backend::StepSequence> ss{{0, 1, n_past, 0, blocks}};
    p.begin_step({tok, pos, slots, ss, table});
    const auto qv = randn(size_t(width)), kh = randn(size_t(row)), vh = randn(size_t(row));
    auto q = p.tensor(qv, 1, width), k = p.tensor(kh, 1, row), v = p.tensor(vh, 1, row);
    auto q2 = p.tensor(qv, 1, width), k2 = p.tensor(kh, 1, row);
    auto out = p.output(1, width), out2 = p.output(1, width), again = p.output(1, width);
    auto o1 = p.output(1, 64), o2 = p.output(1, 64);
    const backend::AttentionShape shape{heads, kv_heads, hd, 1.0f / std::sqrt(float(hd))};
    const int64_t calls = p.gpu.rope_row_calls();
    p.gpu.rope_attention(0, q.g, k.g, v.g, hd, rc, shape, out.g);
    const bool took = p.gpu.rope_row_calls() == calls + 1;
    const bool want = (int64_t(ctx) + cuda::kAttnSplit - 1) / cuda::kAttnSplit * cuda::kAttnSplit <= cuda::kRopeRowMaxPositions;
    const bool copied = p.gpu.has_int8_copy(out.g);
    p.gpu.matmul(w, out.g, o1.g, nullptr);  // reads the kernel's int8 copy
    const std::vector<float> got = p.get_gpu(out.g);
    p.gpu.write(again.g, got.data());
    p.gpu.matmul(w, again.g, o2.g, nullptr);  // quantizes x itself
    p.gpu.rope_store_kv(1, q2.g, k2.g, v.g, hd, rc);
    p.gpu.attention(1, q2.g, shape, out2.g);
    // The newest K/V as each path stored them.
    const std::vector<float> blk = p.gpu.read_kv_block(int32_t(slots[0] / bs));
    double stored = 0;
    std::vector<float> new_k(static_cast<size_t>(row)), new_v(static_cast<size_t>(row));
    for (int which = 0; which < 2; ++which) {
      const size_t o0 = (which == 0 ? gl.k_offset(0) : gl.v_offset(0)) / elem + size_t(slots[0] % bs) * row;
      const size_t o1 = (which == 0 ? gl.k_offset(1) : gl.v_offset(1)) / elem + size_t(slots[0] % bs) * row;
      for (int64_t e = 0; e < row; ++e) {
        const float a = blk[o0 + e], b = blk[o1 + e];
        stored = std::max(stored, std::isfinite(a) && std::isfinite(b) ? std::fabs(double(a) - double(b)) : INFINITY);
        (which == 0 ? new_k : new_v)[size_t(e)] = a;
      }
    }
    // f64 attention over the stored K/V with rope_store_kv's rotated q.
    const std::vector<float> qr = p.get_gpu(q2.g);
    std::vector<double> ref(static_cast<size_t>(width));
    for (uint32_t h = 0; h < heads; ++h) {
      const int64_t kv0 = int64_t(h / G) * hd;
      const auto kv_at = [&](const std::vector<float>& pastv, const std::vector<float>& newv, uint32_t t, int64_t d) {
        return t < n_past ? double(pastv[size_t(t * row + kv0 + d)]) : double(newv[size_t(kv0 + d)]);
      };
      std::vector<double> sc(ctx);
      double mx = -INFINITY;
      for (uint32_t t = 0; t < ctx; ++t) {
        double dot = 0;
        for (int64_t d = 0; d < hd; ++d) dot += double(qr[size_t(h * hd + d)]) * kv_at(past_k, new_k, t, d);
        sc[t] = dot * shape.scale;
        mx = std::max(mx, sc[t]);
      }
      double sum = 0;
      for (uint32_t t = 0; t < ctx; ++t) sum += (sc[t] = std::exp(sc[t] - mx));
      for (int64_t d = 0; d < hd; ++d) {
        double o = 0;
        for (uint32_t t = 0; t < ctx; ++t) o += sc[t] * kv_at(past_v, new_v, t, d);
        ref[size_t(h * hd + d)] = o / sum;
      }
    }
    const std::string name = fmt::format("rope_attention {} {}q/{}kv x{}, {} KV, {} positions", what, heads, kv_heads, hd,
                                         tensor_type_name(type), ctx);
    record(name + (want ? ": took the one-row kernel" : ": left to the unfused path"), took == want ? 0 : 1, 0,
           took ? "one-row kernel" : "rope_store_kv + attention");
    record(name + " newest K/V vs rope_store_kv", stored, 0, "bit for bit");
    const double unfused_bound = type == TensorType::F16 ? kTcBoundF16 : kTcBoundBF16;
    record(name + " vs f64 on the stored K/V", rel_err(got, ref), took ? 1e-5 : unfused_bound, took ? "f32 math" : "unfused");
    record(name + " unfused vs f64 (for scale)", rel_err(p.get_gpu(out2.g), ref), unfused_bound,
           "round 5's, 7's or 17's kernel: Q and P may be rounded to the pool's type");
    record(name + " int8 copy -> Q8_0 matmul vs quantized by the matmul", copied ? max_abs_diff(p.get_gpu(o1.g), p.get_gpu(o2.g)) : INFINITY,
           0, copied ? "bit for bit" : "no int8 copy was written");
    p.cpu.release_scratch();
    p.gpu.release_scratch();
  }
  const char* graphs = std::getenv("VELLUM_CUDA_GRAPHS");
  p.gpu.set_cuda_graphs(graphs == nullptr || std::string(graphs) != "0");
}

// Round 34: many rows through rope_attention, which the CUDA backend runs as launch_rope_kv_rows
// (q rotated into a 16-bit copy) and the warpgroup prefill attention on that copy when every row of
// the step takes that kernel (CudaBackend::set_rope_rows), against rope_store_kv + attention on
// layer 1 of the same pool with the path off: the output and every new K/V bit for bit, and the
// attention's bf16 copy, read by a BF16 matmul, bit for bit with the same matmul converting the
// output itself. Halves and interleaved layouts, whole and partial rotary dims.
void check_rope_attention_rows(Pair& p, uint32_t T, uint32_t n_past, TensorType type, const backend::RopeConfig& rc,
                               const std::string& what) {
  const uint32_t heads = 32, kv_heads = 8, hd = 128, bs = 16;
  const int64_t row = int64_t(kv_heads) * hd, width = int64_t(heads) * hd;
  const size_t elem = row_bytes(type, 1);
  const HostWeight hw = make_weight(TensorType::BF16, 256, width);
  const Weight w = p.gpu.upload_weight("rope_attention rows wo", TensorType::BF16, width, 256, hw.bytes);
  p.gpu.set_cuda_graphs(false);
  const uint32_t ctx = n_past + T, blocks = (ctx + bs - 1) / bs + 2;
  const ShuffledPools pools = shuffled_pools(p, 2, kv_heads, hd, type, bs, blocks);
  const kv::KvLayout& gl = pools.gpu_layout;
  const std::vector<int32_t>& table = pools.table;
  const std::vector<int64_t> slots = begin_after_past(p, table, bs, blocks, n_past, T, row, type);
  const auto qv = randn(size_t(T * width)), kh = randn(size_t(T * row)), vh = randn(size_t(T * row));
  auto q = p.tensor(qv, T, width), k = p.tensor(kh, T, row), v = p.tensor(vh, T, row);
  auto q2 = p.tensor(qv, T, width), k2 = p.tensor(kh, T, row);
  auto out = p.output(T, width), out2 = p.output(T, width), again = p.output(T, width);
  auto o1 = p.output(T, 256), o2 = p.output(T, 256);
  const backend::AttentionShape shape{heads, kv_heads, hd, 1.0f / std::sqrt(float(hd))};
  const int64_t calls = p.gpu.rope_rows_calls();
  p.gpu.rope_attention(0, q.g, k.g, v.g, hd, rc, shape, out.g);
  const bool took = p.gpu.rope_rows_calls() == calls + 1;
  p.gpu.matmul(w, out.g, o1.g, nullptr);  // reads the attention's bf16 copy when it wrote one
  const std::vector<float> got = p.get_gpu(out.g);
  p.gpu.write(again.g, got.data());
  p.gpu.matmul(w, again.g, o2.g, nullptr);  // converts the f32 rows itself
  p.gpu.set_rope_rows(false);
  p.gpu.rope_attention(1, q2.g, k2.g, v.g, hd, rc, shape, out2.g);
  p.gpu.set_rope_rows(true);
  double stored = 0;
  for (uint32_t t = 0; t < T; ++t) {
    const int64_t sl = slots[t];
    const std::vector<float> blk = p.gpu.read_kv_block(int32_t(sl / bs));
    for (int which = 0; which < 2; ++which) {
      const size_t a0 = (which == 0 ? gl.k_offset(0) : gl.v_offset(0)) / elem + size_t(sl % bs) * row;
      const size_t b0 = (which == 0 ? gl.k_offset(1) : gl.v_offset(1)) / elem + size_t(sl % bs) * row;
      for (int64_t e = 0; e < row; ++e) {
        const float a = blk[a0 + e], b = blk[b0 + e];
        stored = std::max(stored, std::isfinite(a) && std::isfinite(b) ? std::fabs(double(a) - double(b)) : INFINITY);
      }
    }
  }
  const std::string name = fmt::format("rope_attention rows {} 32q/8kv x128, {} KV, {} rows after {}", what, tensor_type_name(type), T, n_past);
  record(name + ": took rope_kv_rows + the warpgroup attention", took ? 0 : 1, 0, took ? "rope_kv_rows" : "rope_store_kv + attention");
  record(name + " vs rope_store_kv + attention", max_abs_diff(got, p.get_gpu(out2.g)), 0, "bit for bit (poisoned outputs)");
  record(name + " new K/V vs rope_store_kv", stored, 0, "bit for bit");
  record(name + " bf16 copy -> BF16 matmul vs converted by the matmul", max_abs_diff(p.get_gpu(o1.g), p.get_gpu(o2.g)), 0,
         "bit for bit");
  p.cpu.release_scratch();
  p.gpu.release_scratch();
  const char* graphs = std::getenv("VELLUM_CUDA_GRAPHS");
  p.gpu.set_cuda_graphs(graphs == nullptr || std::string(graphs) != "0");
}

void check_qkv_rope(uint32_t T, uint32_t n_past, TensorType kv_type, TensorType wt, TensorType vt, const backend::RopeConfig& rc,
                    const std::string& what, bool fused = true);

void check_rope_attention_all(Pair& p) {
  backend::RopeConfig rc;
  rc.dims = 128;
  rc.base = 500000.0f;
  check_rope_attention(p, 32, 8, 128, TensorType::F16, rc, "interleaved");
  rc.order = backend::RopeOrder::Halves;
  check_rope_attention(p, 32, 8, 128, TensorType::BF16, rc, "halves");
  check_rope_attention(p, 28, 4, 128, TensorType::F16, rc, "halves");
  rc.dims = 32;
  check_rope_attention(p, 14, 2, 64, TensorType::BF16, rc, "halves partial 32 of 64");
  rc.dims = 64;
  rc.order = backend::RopeOrder::Interleaved;
  check_rope_attention(p, 8, 8, 64, TensorType::F16, rc, "interleaved");
  // Round 34: many rows.
  rc.dims = 128;
  rc.order = backend::RopeOrder::Halves;
  check_rope_attention_rows(p, 512, 0, TensorType::BF16, rc, "halves");
  check_rope_attention_rows(p, 300, 100, TensorType::F16, rc, "halves");
  check_rope_attention_rows(p, 77, 1000, TensorType::BF16, rc, "halves");
  rc.dims = 64;
  check_rope_attention_rows(p, 200, 37, TensorType::F16, rc, "halves partial 64 of 128");
  rc.dims = 128;
  rc.order = backend::RopeOrder::Interleaved;
  check_rope_attention_rows(p, 256, 0, TensorType::BF16, rc, "interleaved");
  check_rope_attention_rows(p, 130, 70, TensorType::F16, rc, "interleaved");
  rc.dims = 96;
  check_rope_attention_rows(p, 100, 0, TensorType::BF16, rc, "interleaved partial 96 of 128");
  // Round 37 (opt-in, VELLUM_CUDA_QKV_ROPE=1): RoPE and the K/V store in the Q/K/V launch's end.
  rc.dims = 128;
  rc.order = backend::RopeOrder::Halves;
  check_qkv_rope(512, 0, TensorType::F16, TensorType::Q4_K, TensorType::Q6_K, rc, "halves");
  check_qkv_rope(300, 100, TensorType::BF16, TensorType::Q8_0, TensorType::Q8_0, rc, "halves");
  check_qkv_rope(77, 1000, TensorType::F16, TensorType::Q4_K, TensorType::Q4_K, rc, "halves");
  rc.dims = 64;  // partial rotary: refused (store_rope_128 takes a rotary half of 64)
  check_qkv_rope(200, 37, TensorType::F16, TensorType::Q4_K, TensorType::Q6_K, rc, "halves partial 64 of 128", false);
  rc.dims = 128;
  rc.order = backend::RopeOrder::Interleaved;  // llama's GGUF (store_rope_128's interleaved form)
  check_qkv_rope(260, 20, TensorType::F16, TensorType::Q8_0, TensorType::Q8_0, rc, "interleaved");
  check_qkv_rope(80, 500, TensorType::BF16, TensorType::Q4_K, TensorType::Q6_K, rc, "interleaved");
  rc.dims = 96;
  check_qkv_rope(130, 70, TensorType::BF16, TensorType::Q6_K, TensorType::Q6_K, rc, "interleaved partial 96 of 128", false);
}

// bs: KV block size (16 by default; others take round 14's per-row block lookup).
// The deterministic mode's attention (round 24: every row on the tensor-core kernel in spans of
// kDetSpanTiles · 64 positions, merged per row): rows of one long sequence (positions 0-39, 1000-1063 across the
// first span's end, 2040-2060, 3099) computed alone, all in one step, and in ragged chunks mixed in
// steps must give the same bits; the batched step against the CPU within the tensor-core bound.
void check_det_attention(Pair& p, TensorType type, uint32_t heads, uint32_t kv_heads, uint32_t head_dim, bool tc) {
  const uint32_t layers = 2, layer = 1, bs = 16, ctx = 3100;
  const uint32_t num_blocks = ctx / bs + 8;
  const ShuffledPools pools = shuffled_pools(p, layers, kv_heads, head_dim, type, bs, num_blocks);
  const std::vector<int32_t>& table = pools.table;
  const int64_t row = int64_t(kv_heads) * head_dim;
  const auto slot = [&](uint32_t t) { return int64_t(table[t / bs]) * bs + t % bs; };
  {  // every position's K/V into the pool
    std::vector<int32_t> tok(ctx, 0), pos(ctx);
    std::vector<int64_t> slots(ctx);
    for (uint32_t t = 0; t < ctx; ++t) pos[t] = int32_t(t), slots[t] = slot(t);
    p.begin_step({tok, pos, slots, {}, {}});
    const auto kh = randn(size_t(ctx * row)), vh = randn(size_t(ctx * row));
    auto k = p.tensor(kh, ctx, row), v = p.tensor(vh, ctx, row);
    auto kr = p.tensor(kv_round(kh, type), ctx, row), vr = p.tensor(kv_round(vh, type), ctx, row);
    p.cpu.store_kv(layer, kr.c, vr.c);
    p.gpu.store_kv(layer, k.g, v.g);
    p.cpu.release_scratch();
    p.gpu.release_scratch();
  }
  std::vector<uint32_t> rows;  // the query rows' positions
  for (uint32_t t = 0; t < 40; ++t) rows.push_back(t);
  for (uint32_t t = 1000; t < 1064; ++t) rows.push_back(t);
  for (uint32_t t = 2040; t <= 2060; ++t) rows.push_back(t);
  rows.push_back(ctx - 1);
  const uint32_t width = heads * head_dim;
  const std::vector<float> qh = randn(rows.size() * width);
  const backend::AttentionShape shape{heads, kv_heads, head_dim, 1.0f / std::sqrt(float(head_dim))};
  const std::vector<int32_t> flat(table.begin(), table.begin() + (ctx + bs - 1) / bs);
  std::vector<std::vector<float>> got(rows.size());  // per row: the first configuration's bits
  size_t differ = 0, compared = 0;
  double ref_err = 0;
  // One step of chunks (runs of consecutive rows, given as [first, count) into `rows`).
  const auto run = [&](const std::vector<std::pair<size_t, size_t>>& chunks, bool vs_cpu) {
    std::vector<int32_t> tok, pos;
    std::vector<int64_t> slots;
    std::vector<backend::StepSequence> ss;
    std::vector<float> q;
    for (const auto& [first, count] : chunks) {
      ss.push_back({uint32_t(tok.size()), uint32_t(count), rows[first], 0, uint32_t(flat.size())});
      for (size_t i = first; i < first + count; ++i) {
        tok.push_back(0), pos.push_back(int32_t(rows[i])), slots.push_back(slot(rows[i]));
        q.insert(q.end(), qh.begin() + i * width, qh.begin() + (i + 1) * width);
      }
    }
    const int64_t n = int64_t(tok.size());
    p.begin_step({tok, pos, slots, ss, flat});
    auto qt = p.tensor(q, n, width);
    auto out = p.output(n, width);
    p.gpu.attention(layer, qt.g, shape, out.g);
    const std::vector<float> g = p.get_gpu(out.g);
    if (vs_cpu) {
      p.cpu.attention(layer, qt.c, shape, out.c);
      ref_err = std::max(ref_err, rel_err(g, p.get_cpu(out.c)));
    }
    size_t r = 0;
    for (const auto& [first, count] : chunks) {
      for (size_t i = first; i < first + count; ++i, ++r) {
        const std::vector<float> mine(g.begin() + r * width, g.begin() + (r + 1) * width);
        if (got[i].empty()) {
          got[i] = mine;
        } else {
          ++compared;
          differ += std::memcmp(mine.data(), got[i].data(), width * sizeof(float)) != 0;
        }
      }
    }
    p.cpu.release_scratch();
    p.gpu.release_scratch();
  };
  p.gpu.set_deterministic(true);
  p.gpu.set_det_attention_tc(tc);
  // Runs of consecutive positions in `rows`: [0, 40), [40, 104), [104, 125), [125].
  const std::vector<std::pair<size_t, size_t>> whole = {{0, 40}, {40, 64}, {104, 21}, {125, 1}};
  run(whole, true);
  for (size_t i = 0; i < rows.size(); ++i) run({{i, 1}}, false);  // every row alone
  // Ragged chunks, several a step: 1, 7, 13, 19, ... rows, cut at the runs' ends.
  std::vector<std::pair<size_t, size_t>> step;
  size_t len = 1;
  for (const auto& [first, count] : whole) {
    for (size_t i = first; i < first + count;) {
      const size_t c = std::min(len, first + count - i);
      step.emplace_back(i, c);
      i += c, len = len % 30 + 6;
      if (step.size() == 3) run(step, false), step.clear();
    }
  }
  if (!step.empty()) run(step, false);
  p.gpu.set_deterministic(false);
  p.gpu.set_det_attention_tc(false);
  const std::string tn(tensor_type_name(type));
  const std::string path = tc ? "tensor-core spans" : "split path";
  record(fmt::format("deterministic attention ({}) {}q/{}kv x{} {} KV: {} rows alone, batched and in ragged chunks", path, heads, kv_heads,
                     head_dim, tn, rows.size()),
         compared == 2 * rows.size() ? double(differ) : 1.0, 0, fmt::format("{} of {} rows differ (bit for bit)", differ, compared));
  // Both paths round Q and P to the pool's type (the split path takes round 7's kernel in the mode).
  record(fmt::format("deterministic attention ({}) {}q/{}kv x{} {} KV vs CPU", path, heads, kv_heads, head_dim, tn), ref_err,
         type == TensorType::F16 ? kTcBoundF16 : kTcBoundBF16, "CPU f32 on the same rounded K/V");
}

void check_attention(Pair& p, uint32_t heads, uint32_t kv_heads, uint32_t head_dim,
                     TensorType type = TensorType::F32, uint32_t bs = 16) {
  const uint32_t layers = 2, layer = 1;
  struct Seq {
    uint32_t n_past, q;
  };
  // 16-bit pools add two long chunks (a ragged 129 rows after a 1 000-token past, a 300-token
  // prefill): with prefill 37 and chunk 16 they take the tensor-core kernel (kTcRows and up).
  std::vector<Seq> seqs = {{0, 37}, {3000, 1}, {700, 5}, {8190, 1}, {33, 16}, {20000, 1}, {200, 1}};
  if (type != TensorType::F32) seqs.insert(seqs.end(), {{1000, 129}, {0, 300}});
  p.gpu.set_attention_tc_rows(kTcRows);
  uint32_t need = 0;
  for (const auto& s : seqs) need += (s.n_past + s.q + bs - 1) / bs;
  const uint32_t num_blocks = need + 64;
  const kv::KvLayout layout = kv::KvLayout::uniform(layers, kv_heads, head_dim, TensorType::F32, bs);
  kv::KvLayout gpu_layout = layout;
  for (auto& l : gpu_layout.layers) l.type = type;
  p.cpu.init_kv(layout, num_blocks);
  p.gpu.init_kv(gpu_layout, num_blocks);
  const size_t elem = row_bytes(type, 1);
  std::vector<int32_t> perm(num_blocks);
  for (uint32_t i = 0; i < num_blocks; ++i) perm[i] = int32_t(i);
  std::shuffle(perm.begin(), perm.end(), g_rng);
  std::vector<std::vector<int32_t>> tables;
  uint32_t next = 0;
  for (const auto& s : seqs) {
    const uint32_t nb = (s.n_past + s.q + bs - 1) / bs;
    tables.emplace_back(perm.begin() + next, perm.begin() + next + nb);
    next += nb;
  }
  const int64_t row = int64_t(kv_heads) * head_dim;
  // Step 1: the past of every sequence goes into the pool (store_kv of many rows).
  {
    std::vector<int32_t> tok, pos;
    std::vector<int64_t> slots;
    for (size_t i = 0; i < seqs.size(); ++i) {
      for (uint32_t t = 0; t < seqs[i].n_past; ++t) {
        tok.push_back(0);
        pos.push_back(int32_t(t));
        slots.push_back(int64_t(tables[i][t / bs]) * bs + t % bs);
      }
    }
    const int64_t n = int64_t(tok.size());
    for (int64_t r0 = 0; r0 < n; r0 += 60000) {  // a step holds at most 65535 tokens
      const int64_t r1 = std::min(n, r0 + 60000);
      const std::vector<int32_t> t(tok.begin() + r0, tok.begin() + r1), ps(pos.begin() + r0, pos.begin() + r1);
      const std::vector<int64_t> sl(slots.begin() + r0, slots.begin() + r1);
      p.begin_step({t, ps, sl, {}, {}});
      const auto kh = randn(size_t((r1 - r0) * row)), vh = randn(size_t((r1 - r0) * row));
      auto k = p.tensor(kh, r1 - r0, row), v = p.tensor(vh, r1 - r0, row);
      auto kr = p.tensor(kv_round(kh, type), r1 - r0, row), vr = p.tensor(kv_round(vh, type), r1 - r0, row);
      p.cpu.store_kv(layer, kr.c, vr.c);
      p.gpu.store_kv(layer, k.g, v.g);
      p.cpu.release_scratch();
      p.gpu.release_scratch();
    }
  }
  // Step 2: the new tokens (ragged chunks) store their K/V and attend.
  std::vector<int32_t> tok, pos, flat;
  std::vector<int64_t> slots;
  std::vector<backend::StepSequence> ss;
  for (size_t i = 0; i < seqs.size(); ++i) {
    ss.push_back({uint32_t(tok.size()), seqs[i].q, seqs[i].n_past, uint32_t(flat.size()), uint32_t(tables[i].size())});
    flat.insert(flat.end(), tables[i].begin(), tables[i].end());
    for (uint32_t t = seqs[i].n_past; t < seqs[i].n_past + seqs[i].q; ++t) {
      tok.push_back(0);
      pos.push_back(int32_t(t));
      slots.push_back(int64_t(tables[i][t / bs]) * bs + t % bs);
    }
  }
  const int64_t n = int64_t(tok.size());
  p.begin_step({tok, pos, slots, ss, flat});
  const auto kh = randn(size_t(n * row)), vh = randn(size_t(n * row));
  auto k = p.tensor(kh, n, row), v = p.tensor(vh, n, row);
  auto kr = p.tensor(kv_round(kh, type), n, row), vr = p.tensor(kv_round(vh, type), n, row);
  p.cpu.store_kv(layer, kr.c, vr.c);
  p.gpu.store_kv(layer, k.g, v.g);
  // store_kv: every new slot's K and V rows, read back from the device pool, equal the CPU's.
  double store_err = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t slot = slots[i];
    const std::vector<float> blk = p.gpu.read_kv_block(int32_t(slot / bs));
    for (int kv = 0; kv < 2; ++kv) {
      const size_t off = (kv == 0 ? gpu_layout.k_offset(layer) : gpu_layout.v_offset(layer)) / elem + size_t(slot % bs) * row;
      const float* c = p.cpu.kv_slot(layer, kv, slot);
      for (int64_t e = 0; e < row; ++e) store_err = std::max(store_err, double(std::fabs(blk[off + e] - c[e])));
    }
  }
  const std::string tn(tensor_type_name(type));
  record(fmt::format("store_kv {} rows into shuffled blocks of {}, {} KV", n, bs, tn), store_err, 0,
         type == TensorType::F32 ? "" : "equal to host round-to-nearest");
  const uint32_t width = heads * head_dim;
  const std::vector<float> qh = randn(size_t(n * width));
  auto q = p.tensor(qh, n, width);
  auto out = p.output(n, width);
  const backend::AttentionShape shape{heads, kv_heads, head_dim, 1.0f / std::sqrt(float(head_dim))};
  p.cpu.attention(layer, q.c, shape, out.c);
  p.gpu.attention(layer, q.g, shape, out.g);
  const std::vector<float> gpu_out = p.get_gpu(out.g), cpu_out = p.get_cpu(out.c);
  // Rows by kernel: the split path (f32 math on the stored values: the f32 bound) and the
  // tensor-core path (Q and P rounded to the pool's 16-bit type: its own bound, docs/cuda.md).
  std::vector<float> split_got, split_ref, tc_got, tc_ref;
  for (const auto& sq : ss) {
    const bool tc = type != TensorType::F32 && sq.q_count >= uint32_t(kTcRows);
    const size_t a = size_t(sq.q_begin) * width, b = size_t(sq.q_begin + sq.q_count) * width;
    (tc ? tc_got : split_got).insert((tc ? tc_got : split_got).end(), gpu_out.begin() + a, gpu_out.begin() + b);
    (tc ? tc_ref : split_ref).insert((tc ? tc_ref : split_ref).end(), cpu_out.begin() + a, cpu_out.begin() + b);
  }
  const std::string ref_note = type == TensorType::F32 ? "" : "; CPU f32 on the same rounded K/V";
  // The default decode kernel (round 7) rounds Q and P to the pool's type: the tensor-core bound.
  const int default_variant = cuda::attn_decode_variant();
  const bool default_tc = type != TensorType::F32 && default_variant != 1;
  record(fmt::format("attention {}q/{}kv x{} split path, {} rows, {} KV, blocks of {}", heads, kv_heads, head_dim, split_got.size() / width, tn, bs),
         rel_err(split_got, split_ref), default_tc ? (type == TensorType::F16 ? kTcBoundF16 : kTcBoundBF16) : 1e-5,
         (type == TensorType::F32 ? "7 seqs: prefill 37, chunks 16 and 5, decodes at 200/3k/8k/20k"
                                  : "chunk 5 after 700, decodes at 200/3k/8k/20k") + ref_note);
  if (type != TensorType::F32) {
    // Round 7: a span's partial does not depend on which block computes it, so forcing spans per
    // block (1, 3, 7) gives each staged variant's bits exactly (outputs poisoned before each run);
    // every decode variant against the CPU: the CUDA-core ones (f32 math) at 1e-5, the tensor-core
    // ones (Q and P rounded to the pool's type) at the tensor-core prefill's bound.
    const auto rerun = [&](int variant, int spb) {
      cuda::set_attn_decode_variant(variant);
      cuda::set_attn_spans_per_block(spb);
      p.gpu.fill(out.g, NAN);
      p.gpu.attention(layer, q.g, shape, out.g);
      std::vector<float> got = p.get_gpu(out.g);
      cuda::set_attn_decode_variant(default_variant);
      cuda::set_attn_spans_per_block(0);
      return got;
    };
    const auto split_only = [&](const std::vector<float>& all) {
      std::vector<float> v;
      for (const auto& sq : ss) {
        if (sq.q_count >= uint32_t(kTcRows)) continue;
        v.insert(v.end(), all.begin() + size_t(sq.q_begin) * width, all.begin() + size_t(sq.q_begin + sq.q_count) * width);
      }
      return v;
    };
    const double tc_bound = type == TensorType::F16 ? kTcBoundF16 : kTcBoundBF16;
    for (const int variant : {2, 3, 1, 4, 5}) {  // each kernel, whatever the default picks for these rows
      const std::vector<float> ref = split_only(rerun(variant, 0));
      const bool tcv = variant != 1;
      const char* what = variant == 2   ? "staged, tensor cores"
                         : variant == 3 ? "staged, tensor cores, 3 stages"
                         : variant == 4 ? "warp pipelines"
                         : variant == 5 ? "warp pipelines, 3 stages"
                                        : "round-5 kernel";
      record(fmt::format("attention {}q/{}kv x{} decode {}, {} KV, blocks of {}", heads, kv_heads, head_dim, what, tn, bs),
             rel_err(ref, split_ref), tcv ? tc_bound : 1e-5, fmt::format("knob {}; split rows vs CPU f32 on the same rounded K/V", variant));
      if (variant == 1) continue;
      double differ = 0;
      for (const int spb : {1, 3, 7}) {
        const std::vector<float> got = split_only(rerun(variant, spb));
        for (size_t i = 0; i < got.size(); ++i) differ += std::memcmp(&got[i], &ref[i], sizeof(float)) != 0;
      }
      record(fmt::format("attention {}q/{}kv x{} decode {} spans/block bits, {} KV, blocks of {}", heads, kv_heads, head_dim, what, tn, bs),
             differ, 0, "outputs differing from the auto choice with 1, 3, 7 spans (round 14: chunks) per block");
    }
    if (head_dim == 128 && (heads / kv_heads) % 2 == 0) {
      // Round 39: the warpgroup kernel's three K/V copiers, each forced, with every block's stages
      // starting as NaN (rows a copier leaves unwritten would show) and the outputs poisoned: the
      // tensor-core rows bit for bit against round 31's copying warpgroup. The copying warp (bulk
      // tensor copies) takes blocks whose size splits into boxes of 8k rows; 24 it refuses.
      const auto tc_rows = [&](const std::vector<float>& all) {
        std::vector<float> v;
        for (const auto& sq : ss) {
          if (sq.q_count < uint32_t(kTcRows)) continue;
          v.insert(v.end(), all.begin() + size_t(sq.q_begin) * width, all.begin() + size_t(sq.q_begin + sq.q_count) * width);
        }
        return v;
      };
      std::vector<float> ref;
      for (const int copier : {1, 0, 2}) {
        cuda::set_attn_wg_copier(copier);
        cuda::set_attn_wg_poison(true);
        const int64_t before = cuda::attn_wg_launches(copier);
        p.gpu.fill(out.g, NAN);
        p.gpu.attention(layer, q.g, shape, out.g);
        const std::vector<float> got = tc_rows(p.get_gpu(out.g));
        const int64_t taken = cuda::attn_wg_launches(copier) - before;
        cuda::set_attn_wg_copier(-1);
        cuda::set_attn_wg_poison(false);
        if (copier == 1) {
          ref = got;
          record(fmt::format("attention {}q/{}kv x{} tensor cores, copying warpgroup, poisoned stages, {} KV, blocks of {}", heads, kv_heads,
                             head_dim, tn, bs),
                 rel_err(got, tc_ref), tc_bound, "vs CPU f32 on the same rounded K/V");
          continue;
        }
        double differ = 0;
        for (size_t i = 0; i < got.size(); ++i) differ += std::memcmp(&got[i], &ref[i], sizeof(float)) != 0;
        const uint32_t box = std::min(bs, 128u);  // the copying warp: boxes of 8k rows that split 128 and bs; not 24
        const bool want = copier == 0 || (box % 8 == 0 && 128 % box == 0 && bs % box == 0);
        record(fmt::format("attention {}q/{}kv x{} tensor cores, {}, poisoned stages, {} KV, blocks of {}", heads, kv_heads, head_dim,
                           copier == 0 ? "every thread copying" : "copying warp (bulk tensor copies)", tn, bs),
               differ + double((taken > 0) != want), 0,
               fmt::format("outputs differing from the copying warpgroup's, + 1 if the kernel was {} ({} launches)",
                           want ? "not taken" : "taken", taken));
      }
    }
    // Round 14: the 20 000- and 200-past decode rows as steps of their own (one token row: the
    // decode kernel may copy older K/V before its programmatic wait; by default round 14's chunked
    // kernel at 20k, its one-block-per-head kernel at 200).
    // Round 17: also at 3 000 and 8 190, each one-row long-kernel shape forced at every context, and
    // the long kernel off (the kernel the default took before it).
    // Round 50: shape 6 merges the runs in a cluster (where they fit) and must give 4's bits.
    const int long_v = cuda::attn_long_variant(), long_min = cuda::attn_long_min();
    for (const size_t i : {size_t(1), size_t(3), size_t(5), size_t(6)}) {  // 3 000, 8 190, 20 000, 200 past
      std::vector<float> v4_out;
      for (const int lv : {-1, 0, 1, 2, 3, 4, 5, 6}) {  // -1: the default choice; 0: without the long kernel (round 14's one-row path)
        if (lv >= 0) cuda::set_attn_long(lv, 0);
        const auto& sq = ss[i];
        const int64_t sl = slots[sq.q_begin];
        const std::vector<int32_t> tok1{0}, pos1{int32_t(seqs[i].n_past)};
        const std::vector<int64_t> slot1{sl};
        const std::vector<backend::StepSequence> ss1{{0, 1, seqs[i].n_past, 0, uint32_t(tables[i].size())}};
        p.gpu.begin_step({tok1, pos1, slot1, ss1, tables[i]});
        auto k1 = p.gpu.scratch(1, row), v1 = p.gpu.scratch(1, row), q1 = p.gpu.scratch(1, width), o1 = p.gpu.scratch(1, width);
        p.gpu.write(k1, kh.data() + size_t(sq.q_begin) * row);
        p.gpu.write(v1, vh.data() + size_t(sq.q_begin) * row);
        p.gpu.write(q1, qh.data() + size_t(sq.q_begin) * width);
        p.gpu.store_kv(layer, k1, v1);
        p.gpu.fill(o1, NAN);
        const int64_t clusters_before = cuda::attn_long_cluster_launches();
        p.gpu.attention(layer, q1, shape, o1);
        const std::vector<float> got = p.get_gpu(o1);
        const int64_t cluster_launches = cuda::attn_long_cluster_launches() - clusters_before;
        const std::vector<float> ref(cpu_out.begin() + size_t(sq.q_begin) * width, cpu_out.begin() + size_t(sq.q_begin + 1) * width);
        cuda::set_attn_long(long_v, long_min);
        record(fmt::format("attention {}q/{}kv x{} one-row step at {}{}, {} KV, blocks of {}", heads, kv_heads, head_dim, seqs[i].n_past,
                           lv < 0 ? "" : lv == 0 ? ", long kernel off" : fmt::format(", long kernel {}", lv), tn, bs),
               rel_err(got, ref), tc_bound, "K/V copies may start before the programmatic wait; vs CPU f32 on the same rounded K/V");
        if (lv == 4) v4_out = got;
        if (lv == 6) {  // the cluster merge (where it fits) against 4
          double differ = 0;
          for (size_t j = 0; j < got.size(); ++j) differ += std::memcmp(&got[j], &v4_out[j], sizeof(float)) != 0;
          record(fmt::format("attention {}q/{}kv x{} one-row step at {}, long kernel 6 vs 4, {} KV, blocks of {}", heads, kv_heads,
                             head_dim, seqs[i].n_past, tn, bs),
                 differ, 0, fmt::format("outputs differing in any bit; {} cluster launch(es)", cluster_launches));
        }
      }
    }
    const double bound = type == TensorType::F16 ? kTcBoundF16 : kTcBoundBF16;
    record(fmt::format("attention {}q/{}kv x{} tensor cores, {} rows, {} KV", heads, kv_heads, head_dim, tc_got.size() / width, tn),
           rel_err(tc_got, tc_ref), bound, "prefill 37 and 300, chunk 16 after 33, chunk 129 after 1000" + ref_note);
  }
  // copy_blocks: copy sequence 2's blocks to the spare ones; the copies equal the sources.
  std::vector<std::pair<int32_t, int32_t>> pairs;
  for (size_t j = 0; j < tables[2].size(); ++j) pairs.push_back({tables[2][j], perm[need + j % 64]});
  pairs.resize(std::min<size_t>(pairs.size(), 64));
  p.gpu.copy_blocks(pairs);
  double copy_err = 0;
  for (const auto& [src, dst] : pairs) {
    const auto a = p.gpu.read_kv_block(src), b = p.gpu.read_kv_block(dst);
    for (size_t i = 0; i < a.size(); ++i) copy_err = std::max(copy_err, double(std::fabs(a[i] - b[i])));
  }
  record(fmt::format("copy_blocks {} blocks, {} KV", pairs.size(), tn), copy_err, 0);
}

// ---- timings ----------------------------------------------------------------------------------

double time_ms(const std::function<void()>& f, int reps) {
  cuda::check(cudaDeviceSynchronize(), "sync");
  f();  // warm-up
  cuda::check(cudaDeviceSynchronize(), "sync");
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) f();
  cuda::check(cudaDeviceSynchronize(), "sync");
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / reps;
}

std::vector<std::string> g_bench;
bool g_mmq_bench = false;      // --mmq-bench: many-row matmul timings (bench_mmq)
bool g_skip_op_bench = false;  // --skip-op-bench: no attention / batch-1 GEMV timings (copy and GEMM peaks stay)
bool g_deterministic = false;  // --deterministic: model timings in the batch-invariant mode
bool g_batch1_only = false;    // --batch1-only: of the timings, copy bandwidth and batch-1 model decode only
bool g_long_only = false;      // --long-ctx-only: of the model timings, batch 1 and one sequence at long context only
bool g_gemv_only = false;      // --gemv-only: of the op timings, copy bandwidth and GEMVs only
void bench_line(const std::string& s) {
  g_bench.push_back(s);
  std::fprintf(stderr, "%s\n", s.c_str());
}

double bench_copy() {
  const size_t bytes = size_t(1) << 30;
  void* a = cuda::device_alloc(bytes, "bench");
  void* b = cuda::device_alloc(bytes, "bench");
  cuda::check(cudaMemset(a, 1, bytes), "memset");
  const double ms = time_ms([&] { cuda::check(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice), "d2d"); }, 20);
  const double d2d = 2.0 * bytes / (ms * 1e-3) / 1e9;  // read + write
  bench_line(fmt::format("device copy (cudaMemcpy D2D 1 GiB): {:.0f} GB/s (read+write bytes / time)", d2d));
  void* h = nullptr;
  const size_t hbytes = size_t(256) << 20;
  cuda::check(cudaMallocHost(&h, hbytes), "pinned");
  const double hms = time_ms([&] { cuda::check(cudaMemcpy(a, h, hbytes, cudaMemcpyHostToDevice), "h2d"); }, 10);
  bench_line(fmt::format("host->device (pinned 256 MiB): {:.1f} GB/s", hbytes / (hms * 1e-3) / 1e9));
  cudaFreeHost(h);
  cudaFree(a);
  cudaFree(b);
  return d2d;
}

double bench_gemm() {
  const int n = 8192;
  const size_t e = size_t(n) * n;
  void* a = cuda::device_alloc(e * 2, "bench");
  void* b = cuda::device_alloc(e * 2, "bench");
  void* c = cuda::device_alloc(e * 2, "bench");
  cuda::check(cudaMemset(a, 0x3c, e * 2), "memset");
  cuda::check(cudaMemset(b, 0x3c, e * 2), "memset");
  cublasHandle_t h;
  cuda::check(cublasCreate(&h), "cublasCreate");
  const float one = 1, zero = 0;
  const double ms = time_ms(
      [&] {
        cuda::check(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_16BF, n, b, CUDA_R_16BF, n, &zero, c,
                                 CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                    "gemm");
      },
      20);
  const double tflops = 2.0 * n * n * double(n) / (ms * 1e-3) / 1e12;
  bench_line(fmt::format("cuBLAS BF16 GEMM 8192^3 (f32 accumulate): {:.0f} TFLOP/s", tflops));
  cublasDestroy(h);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return tflops;
}

// Time of one attention call of llama3-8b's shape (32q/8kv x 128): `nseq` sequences, each adding
// `q` rows after `past` tokens, contiguous block tables. tc_rows: set_attention_tc_rows.
// variants: {decode variant, spans per block} pairs (cuda::set_attn_decode_variant /
// set_attn_spans_per_block) timed after the default on the same data, into variant_ms.
double attention_ms(TensorType kv_type, uint32_t nseq, uint32_t past, uint32_t q, int tc_rows, int reps,
                    const std::vector<std::pair<int, int>>& variants = {}, std::vector<double>* variant_ms = nullptr) {
  CudaBackend be(0);
  be.set_cuda_graphs(false);
  be.set_attention_tc_rows(tc_rows);
  const uint32_t bs = 16, kvh = 8, hd = 128, heads = 32;
  const uint32_t per_seq = (past + q + bs - 1) / bs;
  be.init_kv(kv::KvLayout::uniform(1, kvh, hd, kv_type, bs), per_seq * nseq);
  {  // random K/V in every block (not zeros), stored 4096 slots per step
    const int64_t chunk = 4096, total = int64_t(per_seq) * bs * nseq;
    const std::vector<float> kh = randn(size_t(chunk) * kvh * hd), vh = randn(size_t(chunk) * kvh * hd);
    for (int64_t s0 = 0; s0 < total; s0 += chunk) {
      const int64_t n = std::min(chunk, total - s0);
      std::vector<int32_t> t(size_t(n), 0), ps(size_t(n), 0);
      std::vector<int64_t> sl(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) sl[size_t(i)] = s0 + i;
      be.begin_step({t, ps, sl, {}, {}});
      Tensor k = be.scratch(n, kvh * hd), v = be.scratch(n, kvh * hd);
      be.write(k, kh.data());
      be.write(v, vh.data());
      be.store_kv(0, k, v);
      be.release_scratch();
    }
  }
  std::vector<int32_t> tok, pos, flat;
  std::vector<int64_t> slots;
  std::vector<backend::StepSequence> ss;
  for (uint32_t s = 0; s < nseq; ++s) {
    ss.push_back({s * q, q, past, s * per_seq, per_seq});
    for (uint32_t b = 0; b < per_seq; ++b) flat.push_back(int32_t(s * per_seq + b));
    for (uint32_t t = past; t < past + q; ++t) {
      tok.push_back(0);
      pos.push_back(int32_t(t));
      slots.push_back(int64_t(s * per_seq + t / bs) * bs + t % bs);
    }
  }
  be.begin_step({tok, pos, slots, ss, flat});
  Tensor qt = be.scratch(int64_t(nseq) * q, heads * hd), out = be.scratch(int64_t(nseq) * q, heads * hd);
  be.write(qt, randn(size_t(qt.elements())).data());
  const backend::AttentionShape shape{heads, kvh, hd, 0.088f};
  const double ms = time_ms([&] { be.attention(0, qt, shape, out); }, reps);
  const int default_variant = cuda::attn_decode_variant();
  const int long_v = cuda::attn_long_variant(), long_min = cuda::attn_long_min();
  for (const auto& [v, spb] : variants) {  // the same call with other decode kernels (v >= 10: long kernel v - 10)
    cuda::set_attn_decode_variant(v >= 10 ? 0 : v);
    if (v >= 10) cuda::set_attn_long(v - 10, 0);
    cuda::set_attn_spans_per_block(spb);
    variant_ms->push_back(time_ms([&] { be.attention(0, qt, shape, out); }, reps));
    cuda::set_attn_long(long_v, long_min);
  }
  cuda::set_attn_decode_variant(default_variant);
  cuda::set_attn_spans_per_block(0);
  return ms;
}

// Paged attention per layer: decode (bytes of K and V read / time vs the copy bandwidth), prefill
// of one sequence on the tensor-core and the split path, and the chunk size where they cross.
// Every attention check of the full run: F32 / F16 / BF16 pools, 32q/8kv x128 and 14q/2kv x64 (and
// 28q/4kv x128 on a BF16 pool), block sizes whose tiles straddle KV blocks, and the deterministic
// mode's two paths.
void check_attention_all(Pair& p) {
  check_attention(p, 32, 8, 128);
  p.cpu.release_scratch();
  p.gpu.release_scratch();
  check_attention(p, 14, 2, 64);
  for (const TensorType t : {TensorType::F16, TensorType::BF16}) {
    p.cpu.release_scratch();
    p.gpu.release_scratch();
    check_attention(p, 32, 8, 128, t);
    p.cpu.release_scratch();
    p.gpu.release_scratch();
    check_attention(p, 14, 2, 64, t);
  }
  // Block sizes whose 16-position tiles straddle KV blocks (round 14's per-row lookup).
  p.cpu.release_scratch();
  p.gpu.release_scratch();
  check_attention(p, 32, 8, 128, TensorType::F16, 24);
  // Round 39: the copying warp's boxes at their smallest (8 rows, 16 a tile) and as one 128-row box
  // inside a 256-position block.
  for (const uint32_t bs : {8u, 256u}) {
    p.cpu.release_scratch();
    p.gpu.release_scratch();
    check_attention(p, 32, 8, 128, bs == 8 ? TensorType::BF16 : TensorType::F16, bs);
  }
  p.cpu.release_scratch();
  p.gpu.release_scratch();
  // Round 31: a KV group of odd size at 128 dims (qwen2.5-7b's 28q/4kv): the tensor-core kernel's
  // blocks of one head (attn_wgmma.cu), which 32q/8kv never reaches.
  check_attention(p, 28, 4, 128, TensorType::BF16);
  p.cpu.release_scratch();
  p.gpu.release_scratch();
  check_attention(p, 14, 2, 64, TensorType::BF16, 8);
  p.cpu.release_scratch();
  p.gpu.release_scratch();
  for (const bool tc : {false, true}) {
    check_det_attention(p, TensorType::F16, 32, 8, 128, tc);
    check_det_attention(p, TensorType::BF16, 14, 2, 64, tc);
  }
}

bool g_prefill_attn_only = false;  // --prefill-attn-only: the tensor-core prefill attention timings only

void bench_attention(double bw) {
  const std::vector<std::pair<TensorType, std::vector<std::pair<uint32_t, uint32_t>>>> decode = {
      {TensorType::F16, {{1024, 1}, {1024, 2}, {1024, 4}, {1024, 8}, {1024, 16}, {1024, 32}, {1024, 128}, {8192, 1}, {8192, 8}, {8192, 64},
                         {32768, 1}, {32768, 8}}},
      {TensorType::BF16, {{8192, 8}}},
      {TensorType::F32, {{8192, 1}, {8192, 8}}}};
  for (const auto& [kv_type, cases] : decode) {
    if (g_prefill_attn_only) break;
    for (const auto& [ctx, nseq] : cases) {
      // 16-bit pools: the default (round 5's kernel up to 8 rows, round 7's above), then round 5's
      // and round 7's kernels, round 7's with 3 stages and (F16) with forced spans per block.
      std::vector<double> vms;
      std::vector<std::pair<int, int>> vars;
      if (kv_type != TensorType::F32) vars = {{1, 0}, {2, 0}, {4, 0}, {5, 0}};
      if (kv_type == TensorType::F16) vars.insert(vars.end(), {{4, 1}, {4, 4}});
      if (kv_type != TensorType::F32 && nseq == 1) vars.insert(vars.end(), {{11, 0}, {12, 0}, {13, 0}, {14, 0}, {15, 0}});
      const double ms = attention_ms(kv_type, nseq, ctx - 1, 1, 0, 50, vars, &vms);
      const double bytes = double(nseq) * ctx * 8 * 128 * double(row_bytes(kv_type, 1)) * 2.0;  // K and V
      const auto pct = [&](double t) { return 100.0 * bytes / (t * 1e-3) / 1e9 / bw; };
      std::string extra;
      for (size_t i = 0; i < vms.size(); ++i) {
        const auto [v, spb] = vars[i];
        const std::string name = v >= 10  ? fmt::format("long kernel {}", v - 10)
                                 : v == 1 ? std::string("round-5 kernel")
                                 : v == 3 ? std::string("round-7 kernel, 3 stages")
                                 : v == 5 ? std::string("round-14 kernel, 3 stages")
                                 : fmt::format("round-{} kernel{}", v == 2 ? 7 : 14, spb == 0 ? "" : fmt::format(", {}/block", spb));
        extra += fmt::format("; {} {:.4f} ms = {:.0f}%", name, vms[i], pct(vms[i]));
      }
      bench_line(fmt::format("paged decode attention ctx {} x {} seqs (32q/8kv x128, {} KV): {:.4f} ms, {:.0f} GB/s = {:.0f}% of copy bw{}",
                             ctx, nseq, tensor_type_name(kv_type), ms, bytes / (ms * 1e-3) / 1e9, pct(ms), extra));
    }
  }
  // VELLUM_PREFILL_ATTN_T=N: only N tokens (one pool type, any N up to 32 768: BENCHMARKS.md's 32k
  // shape too), e.g. to profile one shape.
  const char* only_t = std::getenv("VELLUM_PREFILL_ATTN_T");
  const uint32_t only_tokens = only_t != nullptr ? uint32_t(std::clamp(std::atoi(only_t), 1, 32768)) : 0u;
  for (const TensorType kv_type : {TensorType::F16, TensorType::BF16}) {
    if (only_t != nullptr && kv_type != TensorType::F16) break;
    const std::vector<uint32_t> lengths = only_t != nullptr ? std::vector<uint32_t>{only_tokens} : std::vector<uint32_t>{512u, 2048u, 8192u};
    for (const uint32_t T : lengths) {
      if (T == 8192 && !g_prefill_attn_only) continue;
      const double tc = attention_ms(kv_type, 1, 0, T, 1, 20), split = T > 2048 ? 0.0 : attention_ms(kv_type, 1, 0, T, 0, 5);
      const double flops = 4.0 * 32 * 128 * (double(T) * (T + 1) / 2);  // QK and PV over the causal triangle
      // The two tensor-core kernels side by side (round 27): mma.sync (round 25) and wgmma with 64
      // or 128 K/V positions a step.
      const bool wg_default = cuda::attn_wg_on();
      const int wg_kv_default = cuda::attn_wg_kv();
      std::string kernels;
      for (const int kv : {0, 64, 128}) {
        cuda::set_attn_wg(kv > 0);
        if (kv > 0) cuda::set_attn_wg_kv(kv);
        const double ms = attention_ms(kv_type, 1, 0, T, 1, 20);
        kernels += fmt::format(", {} {:.4f} ms ({:.0f})", kv == 0 ? std::string("mma.sync") : fmt::format("wgmma/{}", kv), ms,
                               flops / (ms * 1e-3) / 1e12);
      }
      cuda::set_attn_wg(wg_default);
      cuda::set_attn_wg_kv(wg_kv_default);
      bench_line(fmt::format("prefill attention {} tokens per layer (32q/8kv x128, {} KV): tensor cores {:.4f} ms ({:.0f} TFLOP/s), "
                             "split path {}{}",
                             T, tensor_type_name(kv_type), tc, flops / (tc * 1e-3) / 1e12,
                             split > 0 ? fmt::format("{:.4f} ms", split) : std::string("not timed"), kernels));
    }
  }
  for (uint32_t q : {1u, 2u, 4u, 8u, 16u, 32u, 64u, 128u}) {
    if (g_prefill_attn_only) break;
    const double tc = attention_ms(TensorType::F16, 4, 1024, q, 1, 20), split = attention_ms(TensorType::F16, 4, 1024, q, 0, 20);
    bench_line(fmt::format("chunk attention 4 seqs x {} rows after 1024 (F16 KV): tensor cores {:.4f} ms, split path {:.4f} ms", q,
                           tc, split));
  }
}

// Kernel time alone: `reps` launches captured into one CUDA graph on a private stream, replayed
// and timed with events, so neither host work nor the x quantization is counted (the backend op's
// host-timed line includes both: at 4 096 rows it measured host launch cost more than the kernel).
double graph_ms(const std::function<cudaError_t(cudaStream_t, int)>& launch, int reps) {
  cudaStream_t st = nullptr;
  cuda::check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "stream");
  cuda::check(launch(st, 0), "launch");  // warm-up: first-use work stays outside the capture
  cuda::check(cudaStreamSynchronize(st), "sync");
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cuda::check(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal), "begin capture");
  for (int i = 0; i < reps; ++i) cuda::check(launch(st, i), "launch");
  cuda::check(cudaStreamEndCapture(st, &graph), "end capture");
  cuda::check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  cuda::check(cudaGraphLaunch(exec, st), "graph launch");
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  cuda::check(cudaEventCreate(&e0), "event");
  cuda::check(cudaEventCreate(&e1), "event");
  const int replays = 3;
  cuda::check(cudaEventRecord(e0, st), "record");
  for (int i = 0; i < replays; ++i) cuda::check(cudaGraphLaunch(exec, st), "graph launch");
  cuda::check(cudaEventRecord(e1, st), "record");
  cuda::check(cudaEventSynchronize(e1), "sync");
  float ms = 0;
  cuda::check(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(st);
  return double(ms) / (replays * reps);
}

// The deterministic mode's many-row int8 matmul alone (round 22): rows_mma against the rows GEMV
// it replaces (groups of 8) at llama3-8b's shapes, µs a launch and the weight's bytes a second.
void bench_rows_mma() {
  CudaBackend be(0);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const std::vector<std::tuple<TensorType, int64_t, int64_t>> shapes = {
      {TensorType::Q4_K, 14336, 4096}, {TensorType::Q4_K, 4096, 14336}, {TensorType::Q4_K, 4096, 4096},
      {TensorType::Q6_K, 4096, 14336}, {TensorType::Q8_0, 14336, 4096}};
  for (const auto& [t, n, k] : shapes) {
    const HostWeight hw = make_weight(t, std::min<int64_t>(n, 64), k);
    std::vector<uint8_t> bytes(row_bytes(t, uint64_t(k)) * size_t(n));
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = hw.bytes[i % hw.bytes.size()];
    const Weight w = be.upload_weight("w", t, k, n, bytes);
    const int max_m = 512;
    const std::vector<float> xv = randn(size_t(max_m * k));
    float* x = nullptr;
    void* q8 = nullptr;
    float* out = nullptr;
    cuda::check(cudaMalloc(&x, xv.size() * 4), "x");
    cuda::check(cudaMalloc(&q8, size_t(max_m) * cuda::q8_bytes(k)), "q8");
    cuda::check(cudaMalloc(&out, size_t(max_m * n) * 4), "out");
    cuda::check(cudaMemcpy(x, xv.data(), xv.size() * 4, cudaMemcpyHostToDevice), "x");
    cuda::check(cuda::launch_quantize_q8_rows(x, k, max_m, k, q8, nullptr), "quantize");
    float* ws = nullptr;  // the split launches' partial sums: 8 planes of the largest
    cuda::check(cudaMalloc(&ws, size_t(8) * size_t(max_m) * size_t(n) * 4), "ws");
    const char* only = std::getenv("VELLUM_ROWS_BENCH_ROWS");  // one row count (a profiler's run)
    for (const int m : {16, 32, 64, 128, 256, 512}) {
      if (only != nullptr && m != std::atoi(only)) continue;
      double ms[2] = {0, 0};
      const bool ref = std::getenv("VELLUM_ROWS_BENCH_NO_REF") == nullptr;  // the rows GEMV too
      for (int mma = ref ? 0 : 1; mma < 2; ++mma) {
        cuda::set_rows_mma_min_rows(mma == 1 ? 9 : 0);
        ms[mma] = graph_ms([&](cudaStream_t st, int) { return cuda::launch_gemv_i8_rows(t, w.data, n, k, q8, m, out, n, nullptr, ws, sms, st); },
                           mma == 1 ? 20 : 5);
      }
      const double gb = double(bytes.size()) / 1e9;
      const int splits = cuda::rows_mma_splits(t, n, m, sms);
      bench_line(fmt::format("rows_mma {} {}x{} at {} rows ({} split): {:.1f} us ({:.0f} GB/s of weights, {:.1f} TOP/s) vs rows GEMV {:.1f} us ({:.1f}x)",
                             tensor_type_name(t), n, k, m, splits, ms[1] * 1e3, gb / (ms[1] * 1e-3), 2.0 * n * k * m / (ms[1] * 1e-3) / 1e12,
                             ms[0] * 1e3, ms[0] / ms[1]));
    }
    cuda::set_rows_mma_min_rows(-1);
    cudaFree(x);
    cudaFree(q8);
    cudaFree(out);
    cudaFree(ws);
  }
}

// The deterministic mode's F16/BF16 matmul alone (det_mma16.h, round 23) at llama3-8b's BF16
// shapes, against what it replaces (round 9's f32 rows GEMV) and the default mode's kernels (the
// batch-1 GEMV; cuBLAS on bf16 x for many rows, x's conversion not counted). Launches rotate over
// weight copies (>= 256 MiB in all) so that L2 cannot serve a repeated one-row run.
void bench_det16() {
  CudaBackend be(0);
  cublasHandle_t h;
  cuda::check(cublasCreate(&h), "cublasCreate");
  void* cws = nullptr;
  cuda::check(cudaMalloc(&cws, size_t(32) << 20), "cublas workspace");
  cuda::check(cublasSetWorkspace(h, cws, size_t(32) << 20), "cublasSetWorkspace");
  const TensorType t = TensorType::BF16;
  // VELLUM_DET16_BENCH_N / _ROWS: one weight height / row count (a profiler's run).
  const char* only_n = std::getenv("VELLUM_DET16_BENCH_N");
  const char* only_m = std::getenv("VELLUM_DET16_BENCH_ROWS");
  for (const auto& [n, k] : std::vector<std::pair<int64_t, int64_t>>{{4096, 4096}, {14336, 4096}, {4096, 14336}, {1024, 4096}}) {
    if (only_n != nullptr && n != std::atoll(only_n)) continue;
    const size_t bytes = size_t(n * k) * 2;
    std::vector<uint8_t> wv(bytes);
    for (size_t i = 0; i < bytes; ++i) wv[i] = i % 2 ? 0x3c : uint8_t(i * 2654435761u >> 13);
    const size_t copies = std::clamp<size_t>((size_t(256) << 20) / bytes + 1, 1, 16);
    std::vector<Weight> ws;
    for (size_t c = 0; c < copies; ++c) ws.push_back(be.upload_weight("w", t, k, n, wv));
    const int max_m = 2048;
    const std::vector<float> xv = randn(size_t(max_m) * size_t(k));
    float* x = nullptr;
    void* x16 = nullptr;
    float* out = nullptr;
    cuda::check(cudaMalloc(&x, xv.size() * 4), "x");
    cuda::check(cudaMalloc(&x16, xv.size() * 2), "x16");
    cuda::check(cudaMalloc(&out, size_t(max_m) * size_t(n) * 4), "out");
    float* dws = nullptr;  // the split launches' part sums
    size_t wsf = 1;
    for (const int m : {1, 8, 16, 64, 256, 2048}) wsf = std::max(wsf, cuda::det16_gemm_ws_floats(n, k, m));
    cuda::check(cudaMalloc(&dws, wsf * 4), "ws");
    void* xpair = nullptr;
    cuda::check(cudaMalloc(&xpair, cuda::det16_gemm_x_bytes(k, max_m)), "xpair");
    cuda::check(cudaMemcpy(x, xv.data(), xv.size() * 4, cudaMemcpyHostToDevice), "x");
    cuda::check(cuda::launch_f32_to_bf16(x, x16, int64_t(xv.size()), nullptr), "x16");
    cuda::check(cudaDeviceSynchronize(), "sync");
    for (const int m : {1, 8, 16, 64, 256, 2048}) {
      if (only_m != nullptr && m != std::atoi(only_m)) continue;
      const auto w_of = [&](int i) { return ws[size_t(i) % ws.size()].data; };
      std::string variants;  // the few-row kernel's other schedules (same arithmetic)
      if (m < cuda::det16_gemm_min_rows()) {
        for (const int v : {1, 2, 3}) {
          cuda::set_det16_gemv_variant(v);
          const double ms = graph_ms([&](cudaStream_t st, int i) {
            cuda::GemvSegs segs;
            segs.add(w_of(i), n, out, nullptr);
            return cuda::launch_det16_gemv(t, segs, k, x, k, m, n, st);
          }, 20);
          variants += fmt::format(" v{} {:.1f} us", v, ms * 1e3);
        }
        cuda::set_det16_gemv_variant(0);
      }
      const double det = graph_ms([&](cudaStream_t st, int i) {
        if (m < cuda::det16_gemm_min_rows()) {
          cuda::GemvSegs segs;
          segs.add(w_of(i), n, out, nullptr);
          return cuda::launch_det16_gemv(t, segs, k, x, k, m, n, st);
        }
        return cuda::launch_det16_gemm(t, w_of(i), n, k, x, k, m, out, n, nullptr, xpair, dws, st);
      }, 20);
      const double old = m > 256 ? 0.0 : graph_ms([&](cudaStream_t st, int i) {
        return cuda::launch_gemv1_rows(t, w_of(i), n, k, x, m, out, n, nullptr, st);
      }, 5);
      const double def = graph_ms([&](cudaStream_t st, int i) {
        if (m == 1) {
          cuda::GemvSegs segs;
          segs.add(w_of(i), n, out, nullptr);
          return cuda::launch_gemv1(t, segs, k, x, st);
        }
        const float one = 1.0f, zero = 0.0f;
        cublasSetStream(h, st);
        const cublasStatus_t rc = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, int(n), m, int(k), &one, w_of(i), CUDA_R_16BF, int(k), x16,
                                               CUDA_R_16BF, int(k), &zero, out, CUDA_R_32F, int(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        return rc == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
      }, 20);
      const double flops = 2.0 * double(n) * double(k) * m;
      bench_line(fmt::format("det16 BF16 {}x{} at {} rows{}: {:.1f} us{} ({:.0f} GB/s of weights, {:.1f} TFLOP/s); round 9's rows GEMV {}; "
                             "default ({}) {:.1f} us ({:.2f}x)",
                             n, k, m, cuda::det16_gemm_ws_floats(n, k, m) > 0 && m >= cuda::det16_gemm_min_rows() ? " (split)" : "",
                             det * 1e3, variants.empty() ? "" : " [" + variants.substr(1) + "]", bytes / (det * 1e-3) / 1e9, flops / (det * 1e-3) / 1e12,
                             old > 0 ? fmt::format("{:.1f} us", old * 1e3) : std::string("-"), m == 1 ? "gemv" : "cuBLAS",
                             def * 1e3, det / def));
    }
    cudaFree(x);
    cudaFree(x16);
    cudaFree(out);
    cudaFree(dws);
    cudaFree(xpair);
  }
  cublasDestroy(h);
  cudaFree(cws);
}

// Batch-1 matmul (the decode GEMV) alone: weight bytes / time. Each case rotates over enough
// copies of the weight (>= 256 MiB in all) that the 50-60 MB L2 cannot serve a repeated run.
// Int8 cases also give the kernel time alone (graph_ms) of each int8 kernel variant
// (cuda::set_gemv_i8_variant): round 5's one-shot kernel and the persistent one at R rows a warp.
void bench_gemv(double bw) {
  CudaBackend be(0);
  const auto upload = [&](TensorType t, int64_t n, int64_t k) {
    const size_t bytes = row_bytes(t, uint64_t(k)) * size_t(n);
    std::vector<uint8_t> w(bytes);
    if (t == TensorType::BF16) {  // finite values
      for (size_t i = 0; i < bytes; ++i) w[i] = i % 2 ? 0x3c : uint8_t(i * 2654435761u >> 13);
    } else {  // real blocks (finite scales) of 64 random rows, repeated: the variants' bits are compared
      const HostWeight hw = make_weight(t, std::min<int64_t>(n, 64), k);
      for (size_t i = 0; i < bytes; ++i) w[i] = hw.bytes[i % hw.bytes.size()];
    }
    const size_t copies = std::clamp<size_t>((size_t(256) << 20) / bytes + 1, 1, 16);
    std::vector<Weight> ws;
    for (size_t c = 0; c < copies; ++c) ws.push_back(be.upload_weight("w", t, k, n, w));
    return std::make_pair(ws, bytes);
  };
  const auto line = [&](const std::string& what, size_t bytes, double ms) {
    bench_line(fmt::format("{}: {:.1f} us, {:.0f} GB/s = {:.0f}% of copy bw", what, ms * 1e3, bytes / (ms * 1e-3) / 1e9,
                           100.0 * bytes / (ms * 1e-3) / 1e9 / bw));
  };
  // Q4_K / Q6_K (round 7's kernel on their group layouts): the knob sets the passes in flight (-1 =
  // 1) and, from 21, two rows a warp (gemv_kernels.cu: launch_kq).
  const auto variants = [](TensorType t) {
    return t == TensorType::Q4_K || t == TensorType::Q6_K ? std::vector<int>{-1, 2, 4, 8, 21, 22, 24}
                                                          : std::vector<int>{-1, 1, 2, 4, 11, 12, 14};
  };
  const auto vname = [](TensorType t, int v) {
    if (t == TensorType::Q4_K || t == TensorType::Q6_K) return fmt::format("r7 R={} P={}", v > 20 ? 2 : 1, v < 0 ? 1 : v % 10);
    return v < 0 ? std::string("one-shot") : v > 10 ? fmt::format("persistent R={} smem x", v - 10) : fmt::format("persistent R={}", v);
  };
  // Times every int8 variant of `launch` alone and compares its outputs (`outs`: device floats)
  // bit for bit with the first variant's (Q8_0: the one-shot kernel; Q4_K / Q6_K: 1 row, 1 pass).
  const auto variant_lines = [&](TensorType t, const std::string& what, size_t bytes,
                                 const std::vector<std::pair<const float*, int64_t>>& outs,
                                 const std::function<cudaError_t(cudaStream_t, int)>& launch) {
    std::vector<std::vector<float>> ref;
    for (const int var : variants(t)) {
      cuda::set_gemv_i8_variant(var);
      const double kms = graph_ms(launch, 100);
      for (const auto& [d, n] : outs) cuda::check(cudaMemset(const_cast<float*>(d), 0xFF, size_t(n) * 4), "poison");
      cuda::check(launch(nullptr, 0), "launch");
      cuda::check(cudaDeviceSynchronize(), "sync");
      size_t differ = 0, total = 0;
      for (size_t o = 0; o < outs.size(); ++o) {
        std::vector<float> h(size_t(outs[o].second));
        cuda::check(cudaMemcpy(h.data(), outs[o].first, h.size() * 4, cudaMemcpyDeviceToHost), "read");
        if (ref.size() < outs.size()) {
          ref.push_back(h);
          continue;
        }
        for (size_t i = 0; i < h.size(); ++i) differ += std::memcmp(&h[i], &ref[o][i], 4) != 0 || h[i] != h[i];
        total += h.size();
      }
      line(fmt::format("kernel {} int8 {}{}", what, vname(t, var),
                       total == 0 ? "" : fmt::format(" [{} of {} outputs differ from {}]", differ, total, vname(t, -1))),
           bytes, kms);
    }
    cuda::set_gemv_i8_variant(0);
  };
  // x quantized once (as add_rms_norm's int8 copy would give it) for the kernel-alone timings.
  const auto quantized = [&](const Tensor& x) {
    void* q8 = cuda::device_alloc(cuda::q8_bytes(x.cols), "bench q8");
    cuda::check(cuda::launch_quantize_q8(x.data, x.cols, q8, nullptr), "quantize");
    cuda::check(cudaDeviceSynchronize(), "sync");
    return q8;
  };
  // VELLUM_BENCH_GEMV_TYPES (e.g. "Q4_K,Q6_K"): only those types (a short device call).
  const char* only = std::getenv("VELLUM_BENCH_GEMV_TYPES");
  for (TensorType t : {TensorType::BF16, TensorType::Q8_0, TensorType::Q4_K, TensorType::Q6_K}) {
    if (only != nullptr && std::string(only).find(tensor_type_name(t)) == std::string::npos) continue;
    std::vector<std::pair<int64_t, int64_t>> shapes = {{14336, 4096}, {4096, 4096}, {1024, 4096}, {4096, 14336}};
    if (t != TensorType::Q4_K) shapes.push_back({128256, 4096});  // llama3's output layer
    for (auto [n, k] : shapes) {
      const auto [ws, bytes] = upload(t, n, k);
      Tensor x = be.scratch(1, k), out = be.scratch(1, n);
      be.write(x, randn(size_t(k)).data());
      const bool i8 = cuda::int8_gemv_supports(t, k);
      for (int pass = 0; pass < (i8 ? 2 : 1); ++pass) {
        be.set_int8_gemv(pass == 0);
        size_t c = 0;
        const double ms = time_ms([&] { be.matmul(ws[c++ % ws.size()], x, out, nullptr); }, 200);
        line(fmt::format("gemv {} {}x{} batch 1{}", tensor_type_name(t), n, k, i8 ? (pass == 0 ? " int8" : " f32") : ""), bytes,
             ms);
      }
      if (i8) {
        be.synchronize();
        void* q8 = quantized(x);
        variant_lines(t, fmt::format("gemv {} {}x{}", tensor_type_name(t), n, k), bytes, {{out.data, n}},
                      [&](cudaStream_t st, int i) {
                        cuda::GemvSegs s;
                        s.add(ws[size_t(i) % ws.size()].data, n, out.data, nullptr);
                        return cuda::launch_gemv_i8(t, s, k, q8, st);
                      });
        cudaFree(q8);
      }
      be.set_int8_gemv(true);
      be.release_scratch();
    }
    // The fused launches of a llama3-8b layer: Q/K/V (4096 + 1024 + 1024 rows) and gate/up + SwiGLU.
    {
      const auto [wq, bq] = upload(t, 4096, 4096);
      const auto [wk, bk] = upload(t, 1024, 4096);
      const auto [wv, bv] = upload(t, 1024, 4096);
      Tensor x = be.scratch(1, 4096), q = be.scratch(1, 4096), kk = be.scratch(1, 1024), v = be.scratch(1, 1024);
      be.write(x, randn(4096).data());
      size_t c = 0;
      const double ms = time_ms([&] {
        const size_t i = c++;
        const backend::Backend::MatmulOut outs[] = {{&wq[i % wq.size()], q, nullptr}, {&wk[i % wk.size()], kk, nullptr},
                                                    {&wv[i % wv.size()], v, nullptr}};
        be.matmul_multi(x, outs);
      }, 200);
      line(fmt::format("matmul_multi {} q/k/v 4096+1024+1024 x 4096 batch 1", tensor_type_name(t)), bq + bk + bv, ms);
      const bool i8 = cuda::int8_gemv_supports(t, 4096);
      void* q8 = nullptr;
      if (i8) {
        be.synchronize();
        q8 = quantized(x);
        variant_lines(t, fmt::format("q/k/v {} 4096+1024+1024 x 4096", tensor_type_name(t)), bq + bk + bv,
                      {{q.data, 4096}, {kk.data, 1024}, {v.data, 1024}}, [&](cudaStream_t st, int i) {
                        cuda::GemvSegs s;
                        s.add(wq[size_t(i) % wq.size()].data, 4096, q.data, nullptr);
                        s.add(wk[size_t(i) % wk.size()].data, 1024, kk.data, nullptr);
                        s.add(wv[size_t(i) % wv.size()].data, 1024, v.data, nullptr);
                        return cuda::launch_gemv_i8(t, s, 4096, q8, st);
                      });
      }
      const auto [wg, bg] = upload(t, 14336, 4096);
      const auto [wu, bu] = upload(t, 14336, 4096);
      Tensor o = be.scratch(1, 14336), u = be.scratch(1, 14336);
      const double ms2 = time_ms([&] {
        const size_t i = c++;
        be.matmul_swiglu(wg[i % wg.size()], wu[i % wu.size()], x, o, u);
      }, 200);
      line(fmt::format("matmul_swiglu {} 2 x 14336x4096 batch 1", tensor_type_name(t)), bg + bu, ms2);
      if (i8) {
        variant_lines(t, fmt::format("swiglu {} 2 x 14336x4096", tensor_type_name(t)), bg + bu, {{o.data, 14336}},
                      [&](cudaStream_t st, int i) {
                        return cuda::launch_gemv_i8_swiglu(t, wg[size_t(i) % wg.size()].data, wu[size_t(i) % wu.size()].data,
                                                           14336, 4096, q8, o.data, st);
                      });
        cudaFree(q8);
      }
      be.release_scratch();
    }
  }
}

// An n x k weight of `base` rows of real blocks (finite scales) repeated: a bench's weight of a large
// shape without making every row.
Weight upload_repeated(CudaBackend& be, TensorType t, int64_t n, int64_t k, int64_t base) {
  const size_t bytes = row_bytes(t, uint64_t(k)) * size_t(n);
  const HostWeight hw = make_weight(t, base, k);
  std::vector<uint8_t> w(bytes);
  for (size_t i = 0; i < bytes; ++i) w[i] = hw.bytes[i % hw.bytes.size()];
  return be.upload_weight("w", t, k, n, w);
}

// Round 41: 2 / 4 / 6 / 8 token rows of llama3-8b's quantized weights alone: the int8 tensor-core rows
// kernel (gemv_mma.h, x quantized once outside the timing) against the int8 rows GEMV it replaces
// and mmq (which quantizes x itself), with the largest difference between the first two relative
// to the largest output. Round 51: 12 / 16 rows too, compared with mmq's outputs. VELLUM_BENCH_GEMV_TYPES limits the types as in bench_gemv,
// VELLUM_BENCH_MMA_ROWS=N the rows to N.
void bench_gemv_mma(double bw) {
  CudaBackend be(0);
  int sms = 0;
  cuda::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "sms");
  const char* only = std::getenv("VELLUM_BENCH_GEMV_TYPES");
  for (TensorType t : {TensorType::Q8_0, TensorType::Q4_K, TensorType::Q6_K}) {
    if (only != nullptr && std::string(only).find(tensor_type_name(t)) == std::string::npos) continue;
    for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{{14336, 4096}, {4096, 4096}, {1024, 4096}, {4096, 14336}}) {
      const size_t bytes = row_bytes(t, uint64_t(k)) * size_t(n);
      const size_t copies = std::clamp<size_t>((size_t(256) << 20) / bytes + 1, 1, 8);
      std::vector<Weight> ws;
      for (size_t c = 0; c < copies; ++c) ws.push_back(upload_repeated(be, t, n, k, 64));
      for (const int m : {2, 4, 6, 8, 12, 16}) {
        if (const char* only_m = std::getenv("VELLUM_BENCH_MMA_ROWS"); only_m != nullptr && std::atoi(only_m) != m) continue;
        const bool rows_gemv = m <= cuda::kMaxI8Rows;  // past it: mmq's outputs are the comparison
        Tensor x = be.scratch(m, k), out = be.scratch(m, n);
        be.write(x, randn(size_t(m * k)).data());
        be.synchronize();  // the legacy stream below does not wait for the backend's
        void* xf = cuda::device_alloc(cuda::mma_x_bytes(k, m), "bench mma x");
        void* q8 = cuda::device_alloc(size_t(m) * cuda::q8_bytes(k), "bench q8 rows");
        void* mq = cuda::device_alloc(cuda::mmq_scratch_bytes(m, k), "bench mmq x");
        cuda::check(cuda::launch_quantize_mma_x(x.data, k, m, k, xf, nullptr), "quantize mma x");
        if (rows_gemv) cuda::check(cuda::launch_quantize_q8_rows(x.data, k, m, k, q8, nullptr), "quantize q8 rows");
        const int staged = cuda::gemv_mma_stage_x();
        cuda::set_gemv_mma_stage_x(0);  // round 44: unstaged x first (t_mma, a), then staged (t_x, c)
        const double t_mma = graph_ms([&](cudaStream_t st, int i) {
          return cuda::launch_gemv_mma(t, ws[size_t(i) % ws.size()].data, n, k, xf, m, out.data, n, nullptr, sms, st);
        }, 100);
        cuda::check(cudaDeviceSynchronize(), "sync");
        std::vector<float> a(size_t(m * n)), b(size_t(m * n));
        cuda::check(cudaMemset(out.data, 0xFF, a.size() * 4), "poison");
        cuda::check(cuda::launch_gemv_mma(t, ws[0].data, n, k, xf, m, out.data, n, nullptr, sms, nullptr), "mma");
        cuda::check(cudaMemcpy(a.data(), out.data, a.size() * 4, cudaMemcpyDeviceToHost), "read");
        cuda::set_gemv_mma_stage_x(1);
        const double t_x = graph_ms([&](cudaStream_t st, int i) {
          return cuda::launch_gemv_mma(t, ws[size_t(i) % ws.size()].data, n, k, xf, m, out.data, n, nullptr, sms, st);
        }, 100);
        cuda::check(cudaDeviceSynchronize(), "sync");
        std::vector<float> c(a.size());
        cuda::check(cudaMemset(out.data, 0xFF, c.size() * 4), "poison");
        cuda::check(cuda::launch_gemv_mma(t, ws[0].data, n, k, xf, m, out.data, n, nullptr, sms, nullptr), "mma");
        cuda::check(cudaMemcpy(c.data(), out.data, c.size() * 4, cudaMemcpyDeviceToHost), "read");
        cuda::set_gemv_mma_stage_x(staged);
        size_t x_differ = 0;
        for (size_t i = 0; i < c.size(); ++i) x_differ += std::memcmp(&a[i], &c[i], 4) != 0;
        double t_rows = NAN;
        if (rows_gemv) {
          t_rows = graph_ms([&](cudaStream_t st, int i) {
            return cuda::launch_gemv_i8_rows(t, ws[size_t(i) % ws.size()].data, n, k, q8, m, out.data, n, nullptr, nullptr, sms, st);
          }, 100);
          cuda::check(cudaDeviceSynchronize(), "sync");
          cuda::check(cuda::launch_gemv_i8_rows(t, ws[0].data, n, k, q8, m, out.data, n, nullptr, nullptr, sms, nullptr), "rows");
          cuda::check(cudaMemcpy(b.data(), out.data, b.size() * 4, cudaMemcpyDeviceToHost), "read");
        }
        const double t_mmq = graph_ms([&](cudaStream_t st, int i) {
          return cuda::launch_mmq(t, ws[size_t(i) % ws.size()].data, n, k, x.data, m, mq, out.data, n, nullptr, st);
        }, 100);
        if (!rows_gemv) {
          cuda::check(cudaDeviceSynchronize(), "sync");
          cuda::check(cuda::launch_mmq(t, ws[0].data, n, k, x.data, m, mq, out.data, n, nullptr, nullptr), "mmq");
          cuda::check(cudaMemcpy(b.data(), out.data, b.size() * 4, cudaMemcpyDeviceToHost), "read");
        }
        double big = 0, diff = 0;
        bool finite = true;
        for (size_t i = 0; i < a.size(); ++i) {
          finite = finite && std::isfinite(a[i]);
          big = std::max(big, double(std::fabs(b[i])));
          diff = std::max(diff, double(std::fabs(a[i] - b[i])));
        }
        const auto pct = [&](double ms) { return 100.0 * double(bytes) / (ms * 1e-3) / 1e9 / bw; };
        bench_line(fmt::format("gemv mma {} {}x{} at {} rows: {:.1f} us ({:.0f}% of copy bw) | x staged {:.1f} us ({:.0f}%, {} "
                               "outputs differ) | rows GEMV {:.1f} us ({:.0f}%) | mmq {:.1f} us ({:.0f}%) | max |mma - {}| / "
                               "max |{}| {:.1e}{}",
                               tensor_type_name(t), n, k, m, t_mma * 1e3, pct(t_mma), t_x * 1e3, pct(t_x),
                               x_differ, t_rows * 1e3, pct(t_rows), t_mmq * 1e3, pct(t_mmq), rows_gemv ? "rows" : "mmq",
                               rows_gemv ? "rows" : "mmq", big > 0 ? diff / big : diff, finite ? "" : " NOT FINITE"));
        cudaFree(xf);
        cudaFree(q8);
        cudaFree(mq);
        be.release_scratch();
      }
    }
  }
}

// Round 37 (opt-in, VELLUM_CUDA_QKV_ROPE=1): a layer's Q, K and V through matmul_multi after expect_rope (RoPE and
// the K/V store in the grouped launch's end) and rope_attention, against the same without the hint
// on layer 1 of the same pool (round 34's rope_kv_rows after the plain launch): q, k and v's f32
// rows, the attention's output and every new K/V bit for bit, outputs starting as NaN; the fused path
// must be taken (fused) or, for heads dq_rope_supports refuses, not be. Its own pair: the backend's
// defaults (the grouped register-A launch).
void check_qkv_rope(uint32_t T, uint32_t n_past, TensorType kv_type, TensorType wt, TensorType vt, const backend::RopeConfig& rc,
                    const std::string& what, bool fused) {
  Pair p;
  CudaBackend& be = p.gpu;
  const uint32_t heads = 32, kv_heads = 8, hd = 128, bs = 16;
  const int64_t kin = 1024, row = int64_t(kv_heads) * hd, width = int64_t(heads) * hd;
  const size_t elem = row_bytes(kv_type, 1);
  const Weight wq = upload_repeated(be, wt, width, kin, 31), wk = upload_repeated(be, wt, row, kin, 37), wv = upload_repeated(be, vt, row, kin, 41);
  be.set_cuda_graphs(false);
  be.set_qkv_rope(true);  // opt-in (round 38: slower as it is)
  const uint32_t ctx = n_past + T, blocks = (ctx + bs - 1) / bs + 2;
  const ShuffledPools pools = shuffled_pools(p, 2, kv_heads, hd, kv_type, bs, blocks);
  const kv::KvLayout& gl = pools.gpu_layout;
  const std::vector<int32_t>& table = pools.table;
  const std::vector<int64_t> slots = begin_after_past(p, table, bs, blocks, n_past, T, row, kv_type);
  auto x = p.tensor(randn(size_t(T * kin)), T, kin);
  auto qa = p.output(T, width), ka = p.output(T, row), va = p.output(T, row), qb = p.output(T, width), kb = p.output(T, row), vb = p.output(T, row);
  auto outa = p.output(T, width), outb = p.output(T, width);
  const backend::AttentionShape shape{heads, kv_heads, hd, 1.0f / std::sqrt(float(hd))};
  using MatmulOut = backend::Backend::MatmulOut;
  const std::array<MatmulOut, 3> a{MatmulOut{&wq, qa.g}, MatmulOut{&wk, ka.g}, MatmulOut{&wv, va.g}};
  const std::array<MatmulOut, 3> b{MatmulOut{&wq, qb.g}, MatmulOut{&wk, kb.g}, MatmulOut{&wv, vb.g}};
  const int64_t before = be.qkv_rope_calls();
  be.expect_rope(0, qa.g, ka.g, va.g, hd, rc);
  be.matmul_multi(x.g, a);
  be.rope_attention(0, qa.g, ka.g, va.g, hd, rc, shape, outa.g);
  const int64_t after = be.qkv_rope_calls();
  const bool took = after == before + 1;
  be.matmul_multi(x.g, b);
  be.rope_attention(1, qb.g, kb.g, vb.g, hd, rc, shape, outb.g);
  const bool plain = be.qkv_rope_calls() == after;  // no hint: never fused
  double stored = 0;
  for (uint32_t t = 0; t < T; ++t) {
    const int64_t sl = slots[t];
    const std::vector<float> blk = be.read_kv_block(int32_t(sl / bs));
    for (int which = 0; which < 2; ++which) {
      const size_t a0 = (which == 0 ? gl.k_offset(0) : gl.v_offset(0)) / elem + size_t(sl % bs) * row;
      const size_t b0 = (which == 0 ? gl.k_offset(1) : gl.v_offset(1)) / elem + size_t(sl % bs) * row;
      for (int64_t e = 0; e < row; ++e) {
        const float u = blk[a0 + e], w = blk[b0 + e];
        stored = std::max(stored, std::isfinite(u) && std::isfinite(w) ? std::fabs(double(u) - double(w)) : INFINITY);
      }
    }
  }
  const std::string name = fmt::format("Q/K/V launch with RoPE in its end, {} {}{} weights, {} KV, {} rows after {}", what, tensor_type_name(wt),
                                       vt == wt ? "" : fmt::format("/{} V", tensor_type_name(vt)), tensor_type_name(kv_type), T, n_past);
  if (fused) {
    record(name + ": taken with the hint, not without", took && plain ? 0 : 1, 0, fmt::format("{} / {}", took ? 1 : 0, plain ? 0 : 1));
  } else {  // dq_rope_supports refuses the heads: rope_kv_rows after the plain launch, the hint ignored
    record(name + ": refused with the hint (rope_kv_rows instead)", !took && plain ? 0 : 1, 0,
           fmt::format("{} fused calls", be.qkv_rope_calls() - before));
  }
  const double f32 = std::max({max_abs_diff(p.get_gpu(qa.g), p.get_gpu(qb.g)), max_abs_diff(p.get_gpu(ka.g), p.get_gpu(kb.g)),
                               max_abs_diff(p.get_gpu(va.g), p.get_gpu(vb.g))});
  record(name + ": q, k, v f32 rows vs the plain launch", f32, 0, "bit for bit");
  record(name + ": attention vs rope_kv_rows after the plain launch", max_abs_diff(p.get_gpu(outa.g), p.get_gpu(outb.g)), 0,
         "bit for bit (poisoned outputs)");
  record(name + ": new K/V vs rope_kv_rows'", stored, 0, "bit for bit");
}

// dq_mma's or dq_tma's kernel alone (no backend, x already bf16) with `plan`: launches timed back to
// back with events.
double time_dq_plan(TensorType t, const void* w, int64_t n, int64_t k, int64_t m, int reps, const cuda::DqMmaPlan& plan) {
  std::vector<uint16_t> xh(size_t(m * k));
  const std::vector<float> xv = randn(xh.size());
  for (size_t i = 0; i < xh.size(); ++i) xh[i] = __bfloat16_as_ushort(__float2bfloat16(xv[i]));
  void *x = nullptr, *ws = nullptr, *cnt = nullptr, *out = nullptr;
  cuda::check(cudaMalloc(&x, xh.size() * 2), "alloc");
  cuda::check(cudaMalloc(&ws, std::max<size_t>(plan.ws_floats, 1) * 4), "alloc");
  cuda::check(cudaMalloc(&cnt, std::max<size_t>(plan.counters, 1) * 4), "alloc");
  cuda::check(cudaMalloc(&out, size_t(m * n) * 4), "alloc");
  cuda::check(cudaMemcpy(x, xh.data(), xh.size() * 2, cudaMemcpyHostToDevice), "copy");
  cuda::check(cudaMemset(cnt, 0, std::max<size_t>(plan.counters, 1) * 4), "memset");
  const auto launch = [&] {
    float* o = static_cast<float*>(out);
    cuda::check(plan.rs >= 3 ? cuda::launch_dq_tma(t, w, n, k, x, m, plan, static_cast<float*>(ws), static_cast<int32_t*>(cnt), o, n, nullptr, nullptr)
                             : cuda::launch_dq_mma(t, w, n, k, x, m, plan, static_cast<float*>(ws), static_cast<int32_t*>(cnt), o, n, nullptr, nullptr),
                "dq kernel");
  };
  launch();
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaEventRecord(e0);
  for (int i = 0; i < reps; ++i) launch();
  cudaEventRecord(e1);
  cuda::check(cudaEventSynchronize(e1), "sync");
  float ms = 0;
  cudaEventElapsedTime(&ms, e0, e1);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  for (void* p : {x, ws, cnt, out}) cudaFree(p);
  return double(ms) / reps;
}
double time_dq_kernel(TensorType t, const void* w, int64_t n, int64_t k, int64_t m, int reps, int rs = 0) {
  const char* sp = std::getenv("VELLUM_CUDA_DQ_MMA_SPLITS");
  const int splits = sp != nullptr ? std::atoi(sp) : 0;
  if (rs >= 3 && cuda::dq_tma_supports(t, k)) {  // the bulk-copy kernels (VELLUM_CUDA_DQ_TMA_BT: their token tile)
    const char* bt = std::getenv("VELLUM_CUDA_DQ_TMA_BT");
    cuda::DqMmaPlan plan = cuda::dq_tma_plan(n, k, m, 132, bt != nullptr ? std::atoi(bt) : 0, splits, rs, t);
    return time_dq_plan(t, w, n, k, m, reps, plan);
  }
  cuda::DqMmaPlan plan = cuda::dq_mma_plan(n, k, m, 132, splits);
  plan.rs = cuda::dq_mma_rs_supports(t, k) ? rs : 0;
  return time_dq_plan(t, w, n, k, m, reps, plan);
}

// One many-row SwiGLU into outputs starting as NaN, then the down projection of its bf16 copy: the
// f32 rows read back into `rows`, the projection into `down_rows`.
void swiglu_then_down(CudaBackend& be, const Weight& g, const Weight& u, const Weight& down, const Tensor& x, Tensor out, Tensor up,
                      Tensor d, std::vector<float>& rows, std::vector<float>& down_rows) {
  be.fill(out, std::nanf(""));
  be.fill(d, std::nanf(""));
  be.matmul_swiglu(g, u, x, out, up);
  be.matmul(down, out, d, nullptr);  // reads the SwiGLU's bf16 copy
  rows.resize(size_t(out.rows * out.cols));
  down_rows.resize(size_t(d.rows * d.cols));
  be.read(out, rows.data());
  be.read(d, down_rows.data());
}

// The many-row SwiGLU checks' fixture: gate and up (n x k of `t`), a BF16 down projection to 256
// columns, x (m rows of random values) and the outputs; run() is swiglu_then_down on them.
struct SwigluCase {
  Weight g, u, down;
  Tensor x, out, up, d;
  SwigluCase(CudaBackend& be, TensorType t, int64_t n, int64_t k, int64_t m)
      : g(upload_repeated(be, t, n, k, 897)), u(upload_repeated(be, t, n, k, 611)), down(upload_repeated(be, TensorType::BF16, 256, n, 97)),
        x(be.scratch(m, k)), out(be.scratch(m, n)), up(be.scratch(m, n)), d(be.scratch(m, 256)) {
    const std::vector<float> xv = randn(size_t(m * k));
    be.write(x, xv.data());
  }
  void run(CudaBackend& be, std::vector<float>& rows, std::vector<float>& down_rows) {
    swiglu_then_down(be, g, u, down, x, out, up, d, rows, down_rows);
  }
};

// Round 32: the register-A bulk-copy kernel's tile stored through shared memory against each value
// stored from the accumulators (set_dq_tma_direct_store), bit for bit, outputs starting as NaN:
// f32 rows (256-, 128- and 64-token tiles, a K split, ragged rows and tokens, bias) and the SwiGLU's
// bf16 gate/up rows (its f32 rows on demand and the down projection reading its bf16 copy). Weights
// repeat every 897 rows (no multiple of the 128-row tile), every token differs.
void check_dq_store() {
  CudaBackend be(0);
  struct Case {
    TensorType t;
    int64_t n, k, m;
    bool bias;
  };
  for (const Case c : {Case{TensorType::Q4_K, 14336, 4096, 512, false}, Case{TensorType::Q8_0, 4096, 4096, 300, false},
                       Case{TensorType::Q6_K, 4096, 14336, 512, false}, Case{TensorType::Q6_K, 1000, 2048, 40, true},
                       Case{TensorType::Q4_K, 1000, 2048, 100, true}}) {
    const Weight wt = upload_repeated(be, c.t, c.n, c.k, 897);
    std::vector<float> bv;
    std::vector<uint8_t> bb;
    Weight b{};
    if (c.bias) {
      bv = randn(size_t(c.n));
      bb.resize(bv.size() * 4);
      std::memcpy(bb.data(), bv.data(), bb.size());
      b = be.upload_weight("b", TensorType::F32, c.n, 1, bb);
    }
    Tensor x = be.scratch(c.m, c.k), out = be.scratch(c.m, c.n);
    const std::vector<float> xv = randn(size_t(c.m * c.k));
    be.write(x, xv.data());
    std::vector<float> got[2];
    for (int direct = 0; direct < 2; ++direct) {
      cuda::set_dq_tma_direct_store(direct == 1);
      be.fill(out, std::nanf(""));
      be.matmul(wt, x, out, c.bias ? &b : nullptr);
      got[direct].resize(size_t(c.m * c.n));
      be.read(out, got[direct].data());
    }
    cuda::set_dq_tma_direct_store(false);
    record(fmt::format("dq_tma staged store {} {}x{} rows {}{} vs direct", tensor_type_name(c.t), c.n, c.k, c.m, c.bias ? " +bias" : ""),
           max_abs_diff(got[0], got[1]), 0, "bit for bit, f32 rows");
    be.release_scratch();
  }
  for (const TensorType t : {TensorType::Q4_K, TensorType::Q8_0}) {
    const int64_t n = 1024, k = 2048, m = 200;
    SwigluCase sc(be, t, n, k, m);
    std::vector<float> got[2], dgot[2];
    for (int direct = 0; direct < 2; ++direct) {
      cuda::set_dq_tma_direct_store(direct == 1);
      sc.run(be, got[direct], dgot[direct]);
    }
    cuda::set_dq_tma_direct_store(false);
    record(fmt::format("dq_tma staged store {} SwiGLU {}x{} rows {} vs direct", tensor_type_name(t), n, k, m),
           std::max(max_abs_diff(got[0], got[1]), max_abs_diff(dgot[0], dgot[1])), 0,
           "bit for bit: bf16 gate/up rows, f32 SwiGLU rows and the down projection of its bf16 copy");
    be.release_scratch();
  }
}

// Round 33: matmul_multi's quantized weights in one register-A launch (a layer's Q, K and V) against
// f64, and against one matmul each with the same token tile and K split, bit for bit (each output is
// the same block's K walk either way). Outputs start as NaN; each call must take one grouped launch.
// One type, Q4_K_M's Q4_K/Q6_K mix, Q6_K first, heights not multiples of the 128-row tile, biases.
void check_dq_group(Pair& p) {
  using T = TensorType;
  struct Case {
    std::vector<T> types;
    std::vector<int64_t> ns;
    int64_t k;
    bool bias;
  };
  const std::vector<Case> cases = {{{T::Q4_K, T::Q4_K, T::Q4_K}, {4096, 1024, 1024}, 4096, false},
                                   {{T::Q4_K, T::Q4_K, T::Q6_K}, {4096, 1024, 1024}, 4096, false},
                                   {{T::Q8_0, T::Q8_0, T::Q8_0}, {896, 128, 128}, 1024, true},
                                   {{T::Q6_K, T::Q4_K}, {1000, 200}, 2048, true}};
  for (const Case& c : cases) {
    const size_t count = c.types.size();
    std::vector<HostWeight> hw;
    std::vector<Pair::W2> w, b;
    std::vector<std::vector<float>> bv(count);
    std::vector<std::vector<uint8_t>> bb(count);
    for (size_t i = 0; i < count; ++i) {
      hw.push_back(make_weight(c.types[i], c.ns[i], c.k));
      w.push_back(p.weight("w", c.types[i], c.k, c.ns[i], hw[i].bytes));
      bv[i] = randn(size_t(c.ns[i]));
      bb[i].resize(bv[i].size() * 4);
      std::memcpy(bb[i].data(), bv[i].data(), bb[i].size());
      b.push_back(p.weight("b", T::F32, c.ns[i], 1, bb[i]));
    }
    std::string name = "dq_tma group";
    for (size_t i = 0; i < count; ++i) name += fmt::format(" {} {}", tensor_type_name(c.types[i]), c.ns[i]);
    name += fmt::format(" x{}{}", c.k, c.bias ? " +bias" : "");
    for (const int64_t m : {40, 300, 512}) {
      const std::vector<float> xv = randn(size_t(m * c.k));
      auto x = p.tensor(xv, m, c.k);
      // {0, 0}: the plan's own choice; then forced token tiles and K splits.
      for (const auto& [bt, splits] : {std::pair{0, 0}, {256, 1}, {128, 2}, {64, 1}}) {
        p.gpu.set_dq_tma_plan(bt, splits);
        std::vector<Pair::T2> grouped, single;
        std::vector<backend::Backend::MatmulOut> og;
        for (size_t i = 0; i < count; ++i) {
          grouped.push_back(p.output(m, c.ns[i]));
          single.push_back(p.output(m, c.ns[i]));
        }
        for (size_t i = 0; i < count; ++i) og.push_back({&w[i].g, grouped[i].g, c.bias ? &b[i].g : nullptr});
        const int64_t calls = p.gpu.dq_tma_group_calls();
        p.gpu.matmul_multi(x.g, og);
        const int64_t launched = p.gpu.dq_tma_group_calls() - calls;
        for (size_t i = 0; i < count; ++i) p.gpu.matmul(w[i].g, x.g, single[i].g, c.bias ? &b[i].g : nullptr);
        double err = 0, same = 0;
        for (size_t i = 0; i < count; ++i) {
          const auto got = p.get_gpu(grouped[i].g);
          err = std::max(err, rel_err(got, ref_matmul(xv, hw[i], c.ns[i], c.k, c.bias ? &bv[i] : nullptr)));
          same = std::max(same, max_abs_diff(got, p.get_gpu(single[i].g)));
        }
        const std::string what = fmt::format("{} rows {} tile {} split {}", name, m, bt, splits);
        record(what + " vs f64", err, 1e-2, "x and weights in bf16, as one matmul");
        if (bt != 0) record(what + " vs one matmul each", same, 0, "bit for bit");
        record(what + ": one launch", launched == 1 ? 0 : 1, 0, fmt::format("{} grouped launches", launched));
      }
    }
    p.gpu.set_dq_tma_plan(0, 0);
    p.cpu.release_scratch();
    p.gpu.release_scratch();
  }
  // Off: each weight its own launch, and none grouped.
  p.gpu.set_dq_tma_group(false);
  {
    const HostWeight h0 = make_weight(T::Q4_K, 256, 1024), h1 = make_weight(T::Q4_K, 128, 1024);
    auto w0 = p.weight("w", T::Q4_K, 1024, 256, h0.bytes), w1 = p.weight("w", T::Q4_K, 1024, 128, h1.bytes);
    const std::vector<float> xv = randn(size_t(64 * 1024));
    auto x = p.tensor(xv, 64, 1024);
    auto o0 = p.output(64, 256), o1 = p.output(64, 128);
    const std::vector<backend::Backend::MatmulOut> og = {{&w0.g, o0.g, nullptr}, {&w1.g, o1.g, nullptr}};
    const int64_t calls = p.gpu.dq_tma_group_calls();
    p.gpu.matmul_multi(x.g, og);
    const double err = std::max(rel_err(p.get_gpu(o0.g), ref_matmul(xv, h0, 256, 1024, nullptr)),
                                rel_err(p.get_gpu(o1.g), ref_matmul(xv, h1, 128, 1024, nullptr)));
    record("dq_tma group off: Q4_K 256 + 128 x1024 rows 64 vs f64", err, 1e-2, "one launch each");
    record("dq_tma group off: no grouped launch", double(p.gpu.dq_tma_group_calls() - calls), 0);
    p.cpu.release_scratch();
    p.gpu.release_scratch();
  }
  p.gpu.set_dq_tma_group(true);
}

// Round 33: a many-row quantized SwiGLU whose gate/up tiles leave a short last wave takes two
// grouped launches (whole waves of 256-token tiles, then 128-token tiles: dq_tma_wave_split). Its
// gate/up rows, f32 SwiGLU rows (on demand) and the down projection of its bf16 copy against one
// launch each (set_dq_tma_group off), bit for bit, outputs starting as NaN; the wave split must be
// taken (on) and not (off), and never for Q8_0. Heights 4 608 (the cut at a tile of up) and 4 600 (a
// partial last tile); 512 and 300 token rows. check_swiglu_rows covers the same path against f64.
void check_dq_wave_split() {
  CudaBackend be(0);
  be.set_dq_tma_swiglu(false);  // round 33's launches; check_dq_swiglu cuts the fused launch
  struct Case {
    TensorType t;
    int64_t n, m;
  };
  for (const Case c : {Case{TensorType::Q4_K, 4608, 512}, Case{TensorType::Q4_K, 4600, 300}, Case{TensorType::Q6_K, 4600, 512},
                       Case{TensorType::Q8_0, 4600, 512}}) {
    const int64_t k = 4096;
    SwigluCase sc(be, c.t, c.n, k, c.m);
    std::vector<float> got[2], dgot[2];
    int64_t cuts[2] = {0, 0};
    for (int on = 1; on >= 0; --on) {
      be.set_dq_tma_group(on == 1);
      const int64_t before = be.dq_wave_split_calls();
      sc.run(be, got[on], dgot[on]);
      cuts[on] = be.dq_wave_split_calls() - before;
    }
    be.set_dq_tma_group(true);
    const std::string name = fmt::format("dq_tma wave split {} SwiGLU {}x{} rows {}", tensor_type_name(c.t), c.n, k, c.m);
    record(name + " vs one launch each", std::max(max_abs_diff(got[0], got[1]), max_abs_diff(dgot[0], dgot[1])), 0,
           "bit for bit: f32 SwiGLU rows and the down projection of its bf16 copy");
    // Q8_0 keeps one launch each (its last wave as smaller blocks measured no faster: round 33).
    const int64_t want = c.t == TensorType::Q8_0 ? 0 : 1;
    record(name + (want ? ": taken on, not off" : ": not taken (Q8_0)"), cuts[1] == want && cuts[0] == 0 ? 0 : 1, 0,
           fmt::format("{} / {} wave splits", cuts[1], cuts[0]));
    be.release_scratch();
  }
}

// Round 36: the fused SwiGLU (launch_dq_tma_swiglu: gate and up tiles side by side, silu(gate)·up
// written in bf16 by the tile's end) against the three launches (set_dq_tma_swiglu off), outputs
// starting as NaN: its f32 rows on demand must be the unfused f32 rows rounded to bf16, and the down
// projection of its bf16 copy the unfused one's, bit for bit. It must be taken (and the whole-wave
// cut where expected), and not with the switch off. Shapes: the cut at 512 and 300 rows (a partial
// last tile), Q6_K, Q8_0 (one launch), and a K split at 40 and 200 rows (the scratch path).
void check_dq_swiglu() {
  CudaBackend be(0);
  be.set_dq_swiglu_split_tail(false);  // round 36's fusion: the same sums (the split tail: check_dq_swiglu_split_tail)
  struct Case {
    TensorType t;
    int64_t n, k, m;
    bool cut;
  };
  for (const Case c : {Case{TensorType::Q4_K, 4608, 4096, 512, true}, Case{TensorType::Q4_K, 4600, 4096, 300, true},
                       Case{TensorType::Q6_K, 4600, 4096, 512, true}, Case{TensorType::Q8_0, 4600, 4096, 512, false},
                       Case{TensorType::Q4_K, 1000, 1024, 40, false}, Case{TensorType::Q6_K, 1000, 2048, 200, false},
                       Case{TensorType::Q8_0, 1000, 1024, 40, false}}) {
    SwigluCase sc(be, c.t, c.n, c.k, c.m);
    std::vector<float> got[2], dgot[2];
    int64_t taken[2] = {0, 0}, cuts[2] = {0, 0};
    for (int on = 1; on >= 0; --on) {
      be.set_dq_tma_swiglu(on == 1);
      const int64_t before = be.dq_tma_swiglu_calls(), cuts_before = be.dq_wave_split_calls();
      sc.run(be, got[on], dgot[on]);
      taken[on] = be.dq_tma_swiglu_calls() - before;
      cuts[on] = be.dq_wave_split_calls() - cuts_before;
    }
    be.set_dq_tma_swiglu(true);
    const std::string name = fmt::format("dq_tma fused SwiGLU {} {}x{} rows {}", tensor_type_name(c.t), c.n, c.k, c.m);
    record(name + " f32 rows vs the three launches' rounded to bf16", max_abs_diff(got[1], bf16_rounded(got[0])), 0, "bit for bit");
    record(name + " down projection of its bf16 copy vs the three launches'", max_abs_diff(dgot[1], dgot[0]), 0, "bit for bit");
    const bool ok = taken[1] == 1 && taken[0] == 0 && cuts[1] == (c.cut ? 1 : 0);
    record(name + (c.cut ? ": taken on (whole waves + a last wave), not off" : ": taken on (one launch), not off"), ok ? 0 : 1, 0,
           fmt::format("{} / {} fused, {} cut", taken[1], taken[0], cuts[1]));
    be.release_scratch();
  }
}

// Round 37 (set_dq_swiglu_split_tail; default on since round 38): the fused SwiGLU's last wave as
// 256-token tiles split two ways in K. Against it off (whole waves + 128-token tiles; Q8_0 one launch), outputs
// starting as NaN: the whole waves' rows bit for bit, the last wave's rows (other sums) within
// bf16's rounding, the split tail required to be taken; and its f32 rows and down projection
// against f64 through check_swiglu_rows. 4 600 rows (72 pair tiles): 66 + 6 at 512 token rows.
void check_dq_swiglu_split_tail(Pair& p) {
  CudaBackend be(0);
  const int64_t n = 4600, k = 4096, m = 512, main_rows = 66 * 64;
  for (const TensorType t : {TensorType::Q4_K, TensorType::Q8_0}) {
    SwigluCase sc(be, t, n, k, m);
    std::vector<float> got[2], dgot[2];
    int64_t cuts[2] = {0, 0};
    for (int on = 1; on >= 0; --on) {
      be.set_dq_swiglu_split_tail(on == 1);
      const int64_t before = be.dq_wave_split_calls();
      sc.run(be, got[on], dgot[on]);
      cuts[on] = be.dq_wave_split_calls() - before;
    }
    be.set_dq_swiglu_split_tail(false);
    std::vector<float> main_on, main_off, tail_on, tail_off;
    for (int64_t r = 0; r < m; ++r) {
      const auto row = [&](const std::vector<float>& v, int64_t c0, int64_t c1, std::vector<float>& to) {
        to.insert(to.end(), v.begin() + r * n + c0, v.begin() + r * n + c1);
      };
      row(got[1], 0, main_rows, main_on), row(got[0], 0, main_rows, main_off);
      row(got[1], main_rows, n, tail_on), row(got[0], main_rows, n, tail_off);
    }
    const std::string name = fmt::format("dq_tma fused SwiGLU {} {}x{} rows {}, split last wave", tensor_type_name(t), n, k, m);
    record(name + ": whole waves' rows vs the default", max_abs_diff(main_on, main_off), 0, "bit for bit");
    record(name + ": last wave's rows vs the default (other K sums)", rel_err(tail_on, tail_off), 2e-2,
           "max |diff| / max |default|: gate, up and the product each rounded to bf16");
    record(name + ": taken (on), the default's cut (off)", cuts[1] == 1 && cuts[0] == (t == TensorType::Q8_0 ? 0 : 1) ? 0 : 1, 0,
           fmt::format("{} / {} cuts", cuts[1], cuts[0]));
    be.release_scratch();
  }
  p.gpu.set_dq_swiglu_split_tail(true);
  check_swiglu_rows(p, TensorType::Q8_0, m, n, k, true);
  p.gpu.set_dq_swiglu_split_tail(false);
  p.cpu.release_scratch();
  p.gpu.release_scratch();
}

// "N,N,..." from the environment: its positive numbers, or `fallback` when the variable is unset.
std::vector<uint32_t> env_counts(const char* name, std::vector<uint32_t> fallback) {
  const char* e = std::getenv(name);
  if (e == nullptr) return fallback;
  std::vector<uint32_t> v;
  for (const char* p = e; *p != '\0';) {
    if (const int n = std::atoi(p); n > 0) v.push_back(uint32_t(n));
    while (*p != '\0' && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  return v;
}

// Round 33 (--plan-bench): llama3-8b's quantized matmuls at prefill row counts through the backend,
// µs a call: a layer's Q, K and V as three launches (each weight's own plan) against one grouped
// launch (the plan's choice, then forced token tiles / K splits), and the single weights' plans.
void bench_dq_plans() {
  CudaBackend be(0);
  using T = TensorType;
  struct Case {
    std::string name;
    std::vector<T> types;
    std::vector<int64_t> ns;
    int64_t k;
  };
  const std::vector<Case> cases = {{"Q/K/V Q4_K", {T::Q4_K, T::Q4_K, T::Q4_K}, {4096, 1024, 1024}, 4096},
                                   {"Q/K/V Q4_K+Q6_K", {T::Q4_K, T::Q4_K, T::Q6_K}, {4096, 1024, 1024}, 4096},
                                   {"Q/K/V Q8_0", {T::Q8_0, T::Q8_0, T::Q8_0}, {4096, 1024, 1024}, 4096},
                                   {"output Q4_K", {T::Q4_K}, {4096}, 4096},
                                   {"output Q8_0", {T::Q8_0}, {4096}, 4096},
                                   {"gate Q4_K", {T::Q4_K}, {14336}, 4096},
                                   {"down Q6_K", {T::Q6_K}, {4096}, 14336}};
  // VELLUM_BENCH_PLAN_ROWS=a,b,...: these row counts, every case and the decode-sized tiles' splits
  // (round 54); otherwise prefill sizes, and 64 / 128 rows for the groups only.
  const std::vector<uint32_t> asked = env_counts("VELLUM_BENCH_PLAN_ROWS", {});
  const bool decode_rows = !asked.empty();
  std::vector<int64_t> rows_list(asked.begin(), asked.end());
  if (!decode_rows) rows_list = {64, 128, 256, 512, 1024};
  const std::vector<std::pair<int, int>> forced =
      decode_rows ? std::vector<std::pair<int, int>>{{128, 1}, {64, 1}, {64, 2}, {64, 3}, {64, 4}, {64, 6}}
                  : std::vector<std::pair<int, int>>{{256, 1}, {256, 2}, {128, 1}, {128, 2}, {128, 3}, {64, 1}};
  for (const Case& c : cases) {
    std::vector<Weight> w;
    for (size_t i = 0; i < c.types.size(); ++i) w.push_back(upload_repeated(be, c.types[i], c.ns[i], c.k, c.ns[i] / 16));
    for (const int64_t m : rows_list) {
      if (!decode_rows && m < 256 && c.types.size() < 2) continue;  // decode-sized batches: the groups only
      Tensor x = be.scratch(m, c.k);
      const std::vector<float> xv = randn(size_t(m * c.k));
      be.write(x, xv.data());
      std::vector<Tensor> out;
      std::vector<backend::Backend::MatmulOut> outs;
      for (size_t i = 0; i < c.types.size(); ++i) out.push_back(be.scratch(m, c.ns[i]));
      for (size_t i = 0; i < c.types.size(); ++i) outs.push_back({&w[i], out[i], nullptr});
      const auto each = [&] {
        for (size_t i = 0; i < w.size(); ++i) be.matmul(w[i], x, out[i], nullptr);
      };
      const auto grouped = [&] { be.matmul_multi(x, outs); };
      const bool multi = w.size() >= 2;
      std::string line = fmt::format("plans {} x{} rows {}: {} {:.1f} us", c.name, c.k, m, multi ? "one launch each" : "default",
                                     time_ms(each, 20) * 1e3);
      if (multi) line += fmt::format(" | grouped {:.1f}", time_ms(grouped, 20) * 1e3);
      for (const auto& [bt, sp] : forced) {
        be.set_dq_tma_plan(bt, sp);
        line += fmt::format(" | {}/{} {:.1f}", bt, sp, time_ms(multi ? std::function<void()>(grouped) : std::function<void()>(each), 20) * 1e3);
      }
      be.set_dq_tma_plan(0, 0);
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
      be.release_scratch();
    }
  }
  // The many-row SwiGLU (gate, up, silu(gate)·up): two launches of gate/up and the SwiGLU kernel,
  // against whole waves + a last wave of smaller tiles (dq_tma_wave_split) where that applies, and
  // round 36's fused launch both ways.
  for (const TensorType t : {T::Q4_K, T::Q8_0}) {
    const Weight g = upload_repeated(be, t, 14336, 4096, 14336 / 16), u = upload_repeated(be, t, 14336, 4096, 14336 / 15);
    for (const int64_t m : decode_rows ? rows_list : std::vector<int64_t>{256, 384, 512, 1024}) {
      Tensor x = be.scratch(m, 4096), out = be.scratch(m, 14336), up = be.scratch(m, 14336);
      const std::vector<float> xv = randn(size_t(m * 4096));
      be.write(x, xv.data());
      double ms[4];  // unfused: one launch each, wave split; fused (round 36): one launch, wave split
      for (int v = 0; v < 4; ++v) {
        be.set_dq_tma_swiglu(v >= 2);
        be.set_dq_tma_group(v % 2 == 1);
        ms[v] = time_ms([&] { be.matmul_swiglu(g, u, x, out, up); }, 20);
      }
      be.set_dq_tma_group(true);
      be.set_dq_tma_swiglu(true);
      std::printf("plans SwiGLU %s 14336x4096 rows %lld: one launch each %.1f us | wave split %.1f | fused %.1f | fused, wave split %.1f (%lld "
                  "splits, %lld fused so far)\n",
                  std::string(tensor_type_name(t)).c_str(), (long long)m, ms[0] * 1e3, ms[1] * 1e3, ms[2] * 1e3, ms[3] * 1e3,
                  (long long)be.dq_wave_split_calls(), (long long)be.dq_tma_swiglu_calls());
      be.release_scratch();
    }
  }
}

// Rounds 26 and 28: the bulk-copy kernels (dq_tma.h) against dequantize + cuBLAS and round 15's
// kernel on llama3-8b's weight shapes at prefill row counts, µs and TFLOP/s (2·M·N·K) against the
// BF16 GEMM peak. The through-backend rows include the backend's own work (bf16 copy of x,
// dequantization); "kernel alone" rows time the kernel with x already in bf16.
void bench_dq_tma(double gemm_tflops) {
  CudaBackend be(0);
  be.set_dq_mma_rows(1, int64_t(1) << 30);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (TensorType t : {TensorType::Q4_K, TensorType::Q6_K, TensorType::Q8_0}) {
    for (auto [n, k] : {std::pair<int64_t, int64_t>{14336, 4096}, {4096, 14336}, {4096, 4096}, {1024, 4096}}) {
      const Weight wt = upload_repeated(be, t, n, k, n / 16);
      for (int64_t m : {256, 512, 2048}) {
        Tensor x = be.scratch(m, k), out = be.scratch(m, n);
        const std::vector<float> xv = randn(size_t(m * k));
        be.write(x, xv.data());
        const double flop = 2.0 * m * n * k;
        const auto tf = [&](double ms) { return flop / (ms * 1e-3) / 1e12; };
        be.set_dq_mma(false);
        be.set_dq_tma(0);
        const double cublas = time_ms([&] { be.matmul(wt, x, out, nullptr); }, 10);
        be.set_dq_tma(1);
        be.set_dq_mma(true);
        be.set_dq_rs(2);
        const double rs2 = time_ms([&] { be.matmul(wt, x, out, nullptr); }, 10);
        std::string line = fmt::format("dq_tma {} {}x{} rows {}: dequant+cuBLAS {:.1f} us ({:.0f} TFLOP/s), dq_mma {:.1f} ({:.0f})",
                                       tensor_type_name(t), n, k, m, cublas * 1e3, tf(cublas), rs2 * 1e3, tf(rs2));
        for (const int rs : {3, 4}) {
          be.set_dq_rs(rs);
          const double ms = time_ms([&] { be.matmul(wt, x, out, nullptr); }, 10);
          line += fmt::format(", tma{} {:.1f} ({:.0f} = {:.0f}% of peak)", rs == 3 ? "" : " rs", ms * 1e3, tf(ms), 100.0 * tf(ms) / gemm_tflops);
        }
        line += "; kernel alone:";
        for (const int rs : {3, 4}) {
          for (const int bt : {128, 192, 256}) {
            if (rs == 4 && bt == 192) continue;
            const cuda::DqMmaPlan plan = cuda::dq_tma_plan(n, k, m, sms, bt, 0, rs, t);
            const double ms = time_dq_plan(t, wt.data, n, k, m, 20, plan);
            line += fmt::format(" {}{} x{} {:.1f} us ({:.0f});", rs == 4 ? "rs" : "", bt, plan.splits, ms * 1e3, tf(ms));
            if (rs == 4) {  // round 32: each value stored from the accumulators, as before
              cuda::set_dq_tma_direct_store(true);
              const double dms = time_dq_plan(t, wt.data, n, k, m, 20, plan);
              cuda::set_dq_tma_direct_store(false);
              line += fmt::format(" direct {:.1f} us;", dms * 1e3);
            }
          }
        }
        bench_line(line);
        be.release_scratch();
      }
    }
  }
  be.set_dq_rs(2);
}

// Matmul of many token rows: wgmma on weights dequantized once a block into shared memory (dq_mma,
// round 11), int8 tensor cores (mmq) and dequantize + cuBLAS BF16: weight bytes / time (decode-sized
// batches are bandwidth bound) and 2·M·N·K / time against the BF16 GEMM peak.
void bench_mmq(double bw, double gemm_tflops) {
  CudaBackend be(0);
  be.set_mmq_max_rows(int64_t(1) << 30);  // each kernel at every size, also where the default skips it
  be.set_dq_mma_rows(1, int64_t(1) << 30);
  be.set_dq_tma(0);  // the kernels below, not the bulk-copy kernel the default takes at 33..1 024 rows
  const int rs_default = be.dq_rs();
  for (TensorType t : {TensorType::Q8_0, TensorType::Q4_K, TensorType::Q6_K}) {
    for (auto [n, k] : {std::pair<int64_t, int64_t>{14336, 4096}, {4096, 14336}, {4096, 4096}, {1024, 4096}}) {
      const size_t bytes = row_bytes(t, uint64_t(k)) * size_t(n);
      const Weight wt = upload_repeated(be, t, n, k, n / 16);
      for (int64_t m : {8, 16, 32, 64, 128, 256, 512, 2048}) {
        Tensor x = be.scratch(m, k), out = be.scratch(m, n);
        const std::vector<float> xv = randn(size_t(m * k));
        be.write(x, xv.data());
        for (const int mode : {0, 1, 2, 3, 4}) {  // dq_mma, mmq, dequantize + cuBLAS, dq_mma rs 1 / 2
          if (mode == 1 && m > 512) continue;
          if (mode >= 3 && !cuda::dq_mma_rs_supports(t, k)) continue;
          be.set_dq_mma(mode == 0 || mode >= 3);
          be.set_dq_rs(mode >= 3 ? mode - 2 : 0);
          be.set_mmq(mode == 1);
          const double ms = time_ms([&] { be.matmul(wt, x, out, nullptr); }, m >= 512 ? 10 : 30);
          const double gbs = bytes / (ms * 1e-3) / 1e9, tf = 2.0 * m * n * k / (ms * 1e-3) / 1e12;
          bench_line(fmt::format("matmul {} {}x{} rows {} ({}): {:.1f} us, weights {:.0f} GB/s = {:.0f}% of copy bw, "
                                 "{:.0f} TFLOP/s = {:.0f}% of the BF16 GEMM",
                                 tensor_type_name(t), n, k, m, mode == 0 ? "dq mma" : mode == 1 ? "int8 mma" : mode == 2 ? "dequant+cuBLAS" : mode == 3 ? "dq mma rs" : "dq mma rs2",
                                 ms * 1e3, gbs, 100.0 * gbs / bw, tf, 100.0 * tf / gemm_tflops));
        }
        for (int rs = 0; rs <= (cuda::dq_mma_rs_supports(t, k) ? 2 : 0); ++rs) {
          const double ms = time_dq_kernel(t, wt.data, n, k, m, 50, rs);
          const double gbs = bytes / (ms * 1e-3) / 1e9, tf = 2.0 * m * n * k / (ms * 1e-3) / 1e12;
          bench_line(fmt::format("matmul {} {}x{} rows {} (dq kernel{} alone): {:.1f} us, weights {:.0f} GB/s = {:.0f}% of copy bw, "
                                 "{:.0f} TFLOP/s = {:.0f}% of the BF16 GEMM",
                                 tensor_type_name(t), n, k, m, rs == 0 ? "" : rs == 1 ? " rs" : " rs2", ms * 1e3, gbs,
                                 100.0 * gbs / bw, tf, 100.0 * tf / gemm_tflops));
        }
        be.set_mmq(true);
        be.set_dq_mma(true);
        be.set_dq_rs(rs_default);
        be.release_scratch();
      }
    }
  }
}

// The GEMMs of a llama3-8b prefill layer as the backend issues them (round 7): gate/up and K/V as
// two calls with f32 out (round 6), gate/up with bf16 out, and as one strided-batched call;
// TFLOP/s against the measured peak. Random bf16 data (zeros run faster), 32 MiB workspace.
void bench_prefill_gemms(double gemm_tflops) {
  cublasHandle_t h;
  cuda::check(cublasCreate(&h), "cublasCreate");
  void* ws = cuda::device_alloc(size_t(32) << 20, "bench");
  cuda::check(cublasSetWorkspace(h, ws, size_t(32) << 20), "cublasSetWorkspace");
  const int64_t wmax = 2 * 14336 * 4096, xmax = 2048 * 14336;
  std::vector<__nv_bfloat16> host(size_t(1) << 20);
  for (auto& v : host) v = __float2bfloat16(std::normal_distribution<float>(0.0f, 0.05f)(g_rng));
  const auto fill = [&](void* d, int64_t n) {
    for (int64_t o = 0; o < n; o += int64_t(host.size())) {
      const int64_t c = std::min<int64_t>(int64_t(host.size()), n - o);
      cuda::check(cudaMemcpy(static_cast<__nv_bfloat16*>(d) + o, host.data(), size_t(c) * 2, cudaMemcpyHostToDevice), "h2d");
    }
  };
  void* w = cuda::device_alloc(size_t(wmax) * 2, "bench");
  void* x = cuda::device_alloc(size_t(xmax) * 2, "bench");
  void* c = cuda::device_alloc(size_t(2 * xmax) * 4, "bench");
  fill(w, wmax);
  fill(x, xmax);
  const float one = 1, zero = 0;
  const auto gemm = [&](int64_t n, int64_t k, int64_t m, const void* a, void* out, cudaDataType_t ot) {
    cuda::check(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, int(n), int(m), int(k), &one, a, CUDA_R_16BF, int(k), x, CUDA_R_16BF,
                             int(k), &zero, out, ot, int(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                "gemm");
  };
  const auto pair = [&](int64_t n, int64_t k, int64_t m, cudaDataType_t ot) {
    cuda::check(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, int(n), int(m), int(k), &one, w, CUDA_R_16BF, int(k),
                                           n * k, x, CUDA_R_16BF, int(k), 0, &zero, c, ot, int(n), n * m, 2,
                                           CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                "gemm pair");
  };
  for (int64_t m : {512, 2048}) {
    const auto line = [&](const std::string& what, double flop, const std::function<void()>& f) {
      const double ms = time_ms(f, 20);
      const double tf = flop / (ms * 1e-3) / 1e12;
      bench_line(fmt::format("prefill GEMM rows {} {}: {:.1f} us, {:.0f} TFLOP/s = {:.0f}% of the GEMM peak", m, what, ms * 1e3, tf,
                             100.0 * tf / gemm_tflops));
    };
    auto* w8 = static_cast<uint8_t*>(w);
    auto* c8 = static_cast<uint8_t*>(c);
    for (auto [n, k, what] : {std::tuple<int64_t, int64_t, const char*>{14336, 4096, "gate+up 2x14336x4096"},
                              {1024, 4096, "k+v 2x1024x4096"}}) {
      const double flop = 2.0 * 2 * n * k * m;
      line(fmt::format("{} two calls f32 out", what), flop, [&] {
        gemm(n, k, m, w8, c8, CUDA_R_32F);
        gemm(n, k, m, w8 + n * k * 2, c8 + n * m * 4, CUDA_R_32F);
      });
      line(fmt::format("{} two calls bf16 out", what), flop, [&] {
        gemm(n, k, m, w8, c8, CUDA_R_16BF);
        gemm(n, k, m, w8 + n * k * 2, c8 + n * m * 2, CUDA_R_16BF);
      });
      line(fmt::format("{} batched f32 out", what), flop, [&] { pair(n, k, m, CUDA_R_32F); });
      line(fmt::format("{} batched bf16 out", what), flop, [&] { pair(n, k, m, CUDA_R_16BF); });
    }
    line("q 4096x4096 f32 out", 2.0 * 4096 * 4096 * m, [&] { gemm(4096, 4096, m, w, c, CUDA_R_32F); });
    line("down 4096x14336 f32 out", 2.0 * 4096 * 14336 * m, [&] { gemm(4096, 14336, m, w, c, CUDA_R_32F); });
  }
  cublasDestroy(h);
  cudaFree(w);
  cudaFree(x);
  cudaFree(c);
  cudaFree(ws);
}

bool g_prefill_only = false;  // --prefill-only: of the model timings, prefill 512 / 2 048 only (round 25)
bool g_no_mmq = false;  // --no-mmq: model timings with the dequantize + cuBLAS path (before round 5)

void bench_model(const std::string& path, double bw, double gemm_tflops) {
  const gguf::GgufFile file = gguf::GgufFile::open(path);
  CudaBackend be(0);
  be.set_deterministic(g_deterministic);
  be.set_mmq(!g_no_mmq);
  be.set_swiglu_rows(g_swiglu_rows);
  const char* dq = std::getenv("VELLUM_CUDA_DQ_MMA");
  bench_line(fmt::format("model {}: many-row quantized matmul {}{}", path, g_no_mmq ? "dequant+cuBLAS (--no-mmq)" : "int8 mma",
                         dq != nullptr && std::string(dq) == "1" ? ", dq mma (VELLUM_CUDA_DQ_MMA=1)" : ""));
  const auto t0 = std::chrono::steady_clock::now();
  model::Transformer model(file, be);
  be.synchronize();
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto& hp = model.hparams();
  // Batch 1 decodes from position 16, or (round 49) after a prompt of VELLUM_BENCH_B1_CTX tokens,
  // prefilled in chunks of 2 048: the timed steps read that much K/V besides the weights.
  const char* b1_ctx_env = std::getenv("VELLUM_BENCH_B1_CTX");
  const uint32_t b1_ctx = std::max(16, b1_ctx_env != nullptr ? std::atoi(b1_ctx_env) : 16);
  const uint32_t bs = 16, ctx = std::max(1024u, (b1_ctx + 512 + bs - 1) / bs * bs);  // the timed steps add ~200
  be.init_kv(model.kv_layout(bs, g_kv_type), ctx / bs);
  std::vector<int32_t> table(ctx / bs);
  for (uint32_t i = 0; i < table.size(); ++i) table[i] = int32_t(i);
  for (uint32_t p0 = 0; p0 < b1_ctx; p0 += 2048) {
    engine::Batch prefill;
    prefill.block_size = bs;
    prefill.add_sequence(std::vector<int32_t>(std::min(2048u, b1_ctx - p0), 1), p0, table, engine::Batch::Logits::Last);
    model.forward(prefill);
  }
  uint32_t n_past = b1_ctx;
  const auto run_one = [&] {
    engine::Batch b;
    b.block_size = bs;
    b.add_sequence({int32_t(n_past % hp.vocab)}, n_past, table, engine::Batch::Logits::Last);
    model.forward(b, std::vector<int32_t>{1});  // greedy, as the engine runs it: argmax on the device
    ++n_past;
  };
  // Bytes a decode step must read: every weight but the embedding table (one row of it).
  const auto* embd = file.find_tensor("token_embd.weight");
  const bool tied = file.find_tensor("output.weight") == nullptr;
  const double bytes = double(be.weight_bytes()) - (tied ? 0.0 : double(file.tensor_data(*embd).size()));
  const double floor_tps = bw / (bytes / 1e9);  // HBM bytes moved per second, as the copy measured them
  // Eager, then CUDA graphs without and with programmatic dependent launch (first steps capture).
  for (const int variant : {0, 1, 2}) {
    if (g_prefill_only) break;
    const bool graphs = variant > 0;
    be.set_cuda_graphs(graphs);
    be.set_programmatic_launch(variant == 2);
    run_one();  // a class's first step runs eagerly, its second captures (time_ms's warm-up)
    const int n = 64;
    const double s = time_ms(run_one, n) * n / 1e3;
    bench_line(fmt::format("decode batch 1 {} ({:.2f} GB of weights read per token, loaded in {:.1f} s) [graphs {}]: {:.1f} tok/s; "
                           "bandwidth floor {:.1f} tok/s -> {:.0f}%",
                           path + (g_deterministic ? " [deterministic]" : "") +
                               (b1_ctx > 16 ? fmt::format(" [after {} tokens]", b1_ctx) : ""),
                           bytes / 1e9, load_s,
                           variant == 0 ? "off" : variant == 1 ? "on, PDL off" : "on", n / s, floor_tps,
                           100.0 * (n / s) / floor_tps));
  }
  be.set_cuda_graphs(false);  // prefill is eager either way
  if (g_batch1_only) return;

  // Prefill and many-sequence decode need a larger pool: as many 1k-context sequences as fit.
  const kv::KvLayout layout = model.kv_layout(bs, g_kv_type);
  size_t free_b = 0, total_b = 0;
  cuda::check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  be.init_kv(layout, 1);  // free the old pool first
  // VELLUM_BENCH_SEQ_CTX=N (round 53): the aggregate decode's context, 1 024 by default.
  const uint32_t seq_ctx = std::getenv("VELLUM_BENCH_SEQ_CTX") != nullptr ? uint32_t(std::max(16, std::atoi(std::getenv("VELLUM_BENCH_SEQ_CTX")))) : 1024u;
  const uint32_t per_seq = (seq_ctx + 16) / bs + 1;
  const uint64_t fit = uint64_t(double(free_b) * 0.85) / layout.bytes_per_block();
  const uint32_t blocks = uint32_t(std::min<uint64_t>(fit, uint64_t(per_seq) * 256));
  be.init_kv(layout, blocks);
  std::vector<int32_t> all(blocks);
  for (uint32_t i = 0; i < blocks; ++i) all[i] = int32_t(i);
  // Matmul FLOPs per token: 2 x the elements of every matrix but the (untied) embedding table.
  double params = 0;
  for (const auto& t : file.tensors()) {
    if (t.shape.size() != 2 || (t.name == "token_embd.weight" && !tied)) continue;
    params += double(t.shape[0]) * double(t.shape[1]);
  }
  const bool quick = std::getenv("VELLUM_BENCH_QUICK") != nullptr;
  // Prefill: round 6's path (f32 producers, conversions) and round 7's (bf16 producers, paired
  // GEMMs) in the same process, each timed twice (the spread says what is noise).
  // VELLUM_BENCH_PREFILL="N,N,...": other prefill lengths (round 28: 1 024).
  const std::vector<uint32_t> prefill_lengths = env_counts("VELLUM_BENCH_PREFILL", {512u, 2048u});
  for (uint32_t T : prefill_lengths) {
    if ((T + bs - 1) / bs > blocks || g_long_only) continue;
    const auto once = [&] {
      engine::Batch b;
      b.block_size = bs;
      b.add_sequence(std::vector<int32_t>(T, 7), 0, std::vector<int32_t>(all.begin(), all.begin() + (T + bs - 1) / bs),
                     engine::Batch::Logits::Last);
      model.forward(b);
    };
    // 0: round 6; 1: norm copies, K/V pairs; 2: the default (1 + the many-row SwiGLU, its f32 rows
    // on demand); 3: 2 with its f32 rows written at once; 4: 2 without batched pairs.
    // VELLUM_BENCH_QUICK: the default path only (twice), for experiments that change something else.
    const std::vector<int> paths = quick ? std::vector<int>{2, 2} : std::vector<int>{0, 1, 2, 3, 4, 0, 1, 2, 3, 4};
    for (const int v : paths) {
      be.set_bf16_activations(v > 0);
      be.set_swiglu_rows(v >= 2);
      be.set_lazy_swiglu(v != 3);
      be.set_gemm_pairs(v != 4);
      const double ps = time_ms(once, T >= 2048 ? 5 : 10) / 1e3;
      const double tflops = 2.0 * params * T / ps / 1e12;
      bench_line(fmt::format("prefill {} tokens [{}]: {:.0f} tok/s, {:.0f} matmul TFLOP/s = {:.1f}% of the measured GEMM peak", T,
                             v == 0   ? "round 6 path"
                             : v == 1 ? "bf16 norm copies, K/V pairs"
                             : v == 2 ? "default: + many-row SwiGLU, f32 rows on demand"
                             : v == 3 ? "+ many-row SwiGLU, f32 rows written"
                                      : "+ many-row SwiGLU, no batched pairs",
                             T / ps, tflops, 100.0 * tflops / gemm_tflops));
    }
  }
  if (g_prefill_only) return;
  {
    const auto st = be.dequant_ahead_stats();
    bench_line(fmt::format("dequantization ahead so far: {} right guesses, {} in line", st.hits, st.misses));
  }
  be.set_bf16_activations(true);
  be.set_swiglu_rows(g_swiglu_rows);
  be.set_lazy_swiglu(true);
  be.set_gemm_pairs(true);
  // VELLUM_BENCH_SEQS="N,N,...": only these sequence counts (a short device call).
  for (uint32_t B : env_counts("VELLUM_BENCH_SEQS", {1u, 2u, 4u, 8u, 32u, 64u, 128u, 256u})) {
    if (g_long_only) break;
    if (uint64_t(B) * per_seq > blocks) {
      bench_line(fmt::format("decode {} seqs x 1k context: does not fit ({} blocks)", B, blocks));
      continue;
    }
    // Greedy sequences (argmax on the device, as the engine runs them), with graphs off and on; then
    // with every row's logits copied back (what sampling on the host needed before round 18), graphs
    // off and on; then top-k sampled rows as the engine runs them since round 18 (the 40 best
    // candidates of each row found on the device, graphs on). Quick runs: the greedy rows, and the
    // sampled ones with graphs when VELLUM_BENCH_SAMPLED is set.
    int keep = 1;
    const auto step = [&] {
      engine::Batch b;
      b.block_size = bs;
      for (uint32_t q = 0; q < B; ++q) {
        b.add_sequence({int32_t(q % hp.vocab)}, seq_ctx, std::vector<int32_t>(all.begin() + q * per_seq, all.begin() + (q + 1) * per_seq),
                       engine::Batch::Logits::Last);
      }
      model.forward(b, std::vector<int32_t>(B, keep));
    };
    const bool sampled = !quick || std::getenv("VELLUM_BENCH_SAMPLED") != nullptr;
    for (const int variant : {0, 1, 2, 3, 4}) {
      if (quick && (variant == 2 || (variant > 2 && !sampled))) continue;
      const bool graphs = variant == 1 || variant >= 3;
      keep = variant < 2 ? 1 : variant < 4 ? 0 : 40;
      be.set_cuda_graphs(graphs);
      step();  // eager first step of the class; time_ms's warm-up captures
      const double ds = time_ms(step, 10) / 1e3;
      const auto st = be.graph_stats();
      bench_line(fmt::format("decode {} seqs x {} context, {} KV, {} [graphs {}]: {:.1f} ms/step, {:.0f} tok/s aggregate{}", B,
                             seq_ctx == 1024 ? std::string("1k") : std::to_string(seq_ctx),
                             tensor_type_name(g_kv_type),
                             keep == 1   ? "greedy (argmax on the GPU)"
                             : keep == 0 ? "all logits to the host"
                                         : "top-40 candidates (on the GPU)",
                             graphs ? "on" : "off", ds * 1e3, B / ds,
                             graphs ? fmt::format(" (so far: {} captures in {:.1f} ms, {} replays, {} eager fallbacks, {} programmatic edges)",
                                                  st.captures, st.capture_seconds * 1e3, st.replays, st.eager_fallbacks,
                                                  st.programmatic_edges)
                                    : ""));
    }
    be.set_cuda_graphs(false);
  }
  // One sequence at long context (round 14): batch-1 decode where attention is a large part of a
  // token (greedy, graphs on; the pool's K/V are whatever the blocks hold: timing only).
  for (const uint32_t ctx : {1024u, 2048u, 4096u, 8192u, 16384u, 32768u}) {
    const uint32_t need = ctx / bs + 1;
    if (ctx != 8192u && ctx != 32768u && !g_long_only) continue;  // --long-ctx-only: 1k, 2k, 4k and 16k too
    if (need > blocks) continue;
    const auto step = [&] {
      engine::Batch b;
      b.block_size = bs;
      b.add_sequence({1}, ctx, std::vector<int32_t>(all.begin(), all.begin() + need), engine::Batch::Logits::Last);
      model.forward(b, std::vector<int32_t>{1});
    };
    be.set_cuda_graphs(true);
    step();
    const double ds = time_ms(step, 20) / 1e3;
    bench_line(fmt::format("decode 1 seq x {}k context, {} KV, greedy [graphs on]: {:.3f} ms/token, {:.1f} tok/s", ctx / 1024,
                           tensor_type_name(g_kv_type), ds * 1e3, 1.0 / ds));
    be.set_cuda_graphs(false);
  }
}

// For a kernel profiler (ncu --profile-from-start off): eager (no graphs) steps of a model, each
// bracketed by cudaProfilerStart/Stop: one decode step of 1, 32 and 128 sequences at 1k context, and
// a 512-token prefill (VELLUM_PROFILE_BATCH1_ONLY: the first only; VELLUM_PROFILE_PREFILL=N: a prefill
// of N tokens only; VELLUM_PROFILE_SEQS=N: a decode step of N sequences only). Everything before
// (load, warm-up steps) is outside the profiled ranges.
void profile_model(const std::string& path) {
  const gguf::GgufFile file = gguf::GgufFile::open(path);
  CudaBackend be(0);
  be.set_cuda_graphs(false);
  be.set_deterministic(g_deterministic);
  model::Transformer model(file, be);
  const char* ctx_env = std::getenv("VELLUM_PROFILE_CTX");  // decode context, 1024 unless set
  const uint32_t ctx = ctx_env ? uint32_t(std::max(1, std::atoi(ctx_env))) : 1024u;
  // VELLUM_PROFILE_PREFILL=N: only a prefill of N tokens is profiled.
  const char* prefill_env = std::getenv("VELLUM_PROFILE_PREFILL");
  const uint32_t prefill_tokens = prefill_env ? uint32_t(std::max(1, std::atoi(prefill_env))) : 512u;
  const uint32_t bs = 16, per_seq = (std::max(ctx, prefill_tokens) + 16) / bs + 1;
  const uint32_t seqs = std::getenv("VELLUM_PROFILE_BATCH1_ONLY") != nullptr ? 1 : 128;
  be.init_kv(model.kv_layout(bs, g_kv_type), per_seq * seqs);
  const auto table = [&](uint32_t s) {
    std::vector<int32_t> t(per_seq);
    for (uint32_t i = 0; i < per_seq; ++i) t[i] = int32_t(s * per_seq + i);
    return t;
  };
  const auto decode = [&](uint32_t B) {
    engine::Batch b;
    b.block_size = bs;
    for (uint32_t q = 0; q < B; ++q) b.add_sequence({int32_t(q + 1)}, ctx, table(q), engine::Batch::Logits::Last);
    model.forward(b, std::vector<int32_t>(B, 1));
  };
  const auto prefill = [&] {
    engine::Batch b;
    b.block_size = bs;
    b.add_sequence(std::vector<int32_t>(prefill_tokens, 7), 0, table(0), engine::Batch::Logits::Last);
    model.forward(b);
  };
  const auto profiled = [&](const char* what, const std::function<void()>& f) {
    f();
    f();  // warm: workspaces sized, cuBLAS initialised
    be.synchronize();
    cuda::check(cudaProfilerStart(), "cudaProfilerStart");
    const auto t0 = std::chrono::steady_clock::now();
    f();
    be.synchronize();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    cuda::check(cudaProfilerStop(), "cudaProfilerStop");
    bench_line(fmt::format("profiled {} ({}): {:.3f} ms wall (under the profiler)", what, path, ms));
  };
  if (prefill_env != nullptr) {
    profiled(fmt::format("prefill {}", prefill_tokens).c_str(), prefill);
    return;
  }
  // VELLUM_PROFILE_SEQS=N: one decode step of N sequences only (N <= 128).
  if (const char* n = std::getenv("VELLUM_PROFILE_SEQS"); n != nullptr) {
    const uint32_t B = std::clamp<uint32_t>(uint32_t(std::max(1, std::atoi(n))), 1u, seqs);
    profiled(fmt::format("decode {} seqs x {}", B, ctx).c_str(), [&] { decode(B); });
    return;
  }
  profiled("decode 1 seq x 1k", [&] { decode(1); });
  if (std::getenv("VELLUM_PROFILE_BATCH1_ONLY")) return;  // one step only: a quicker profile
  profiled("decode 32 seqs x 1k", [&] { decode(32); });
  profiled("decode 128 seqs x 1k", [&] { decode(128); });
  profiled("prefill 512", prefill);
}

// Greedy decoding of the same GGUF on the CPU and the CUDA backend: 5 prompts of 8 random token
// ids, 64 new tokens each. Matmuls stay on the f32 GEMV path (≤ 8 rows), so the two should agree
// unless the top two logits are closer than the kernels' ~1e-6 relative difference: at a
// divergence the CPU's top-2 gap is printed.
void compare_greedy(const std::string& path) {
  const gguf::GgufFile file = gguf::GgufFile::open(path);
  CpuBackend cpu(0);
  CudaBackend gpu(0);
  gpu.set_gemv_max_rows(cuda::kMaxGemvRows);
  model::Transformer mc(file, cpu), mg(file, gpu);
  // VELLUM_COMPARE_PROMPT=N: prompts of N tokens (8 by default), so that long ones take the
  // tensor-core prefill attention.
  const char* pl = std::getenv("VELLUM_COMPARE_PROMPT");
  const uint32_t prompt_len = pl != nullptr ? uint32_t(std::clamp(std::atoi(pl), 1, 4096)) : 8u;
  const uint32_t bs = 16, ctx = (prompt_len + 64 + bs - 1) / bs * bs;
  cpu.init_kv(mc.kv_layout(bs), ctx / bs);
  gpu.init_kv(mg.kv_layout(bs), ctx / bs);
  std::vector<int32_t> table(ctx / bs);
  for (uint32_t i = 0; i < table.size(); ++i) table[i] = int32_t(i);
  const uint32_t vocab = mc.hparams().vocab;
  std::uniform_int_distribution<int32_t> tok(0, int32_t(vocab - 1));
  int total_match = 0;
  for (int prompt = 0; prompt < 5; ++prompt) {
    std::vector<int32_t> ids(prompt_len);
    for (auto& t : ids) t = tok(g_rng);
    uint32_t n_past = 0;
    std::vector<int32_t> next_in = ids;
    int matched = 0;
    std::string note = "all 64 match";
    for (int step = 0; step < 64; ++step) {
      engine::Batch b;
      b.block_size = bs;
      b.add_sequence(next_in, n_past, table, engine::Batch::Logits::Last);
      const std::vector<float> lc = mc.forward(b), lg = mg.forward(b);
      const auto ac = int32_t(std::max_element(lc.begin(), lc.end()) - lc.begin());
      const auto ag = int32_t(std::max_element(lg.begin(), lg.end()) - lg.begin());
      if (ac != ag) {
        std::vector<float> sorted = lc;
        std::nth_element(sorted.begin(), sorted.begin() + 1, sorted.end(), std::greater<float>());
        note = fmt::format("diverge at token {}: cpu {} gpu {}; cpu top-2 logit gap {:.3g}, gpu-cpu logit diff at those ids {:.3g}/{:.3g}",
                           step, ac, ag, sorted[0] - sorted[1], lg[ac] - lc[ac], lg[ag] - lc[ag]);
        break;
      }
      ++matched;
      n_past += uint32_t(next_in.size());
      next_in = {ac};
    }
    total_match += matched;
    record(fmt::format("greedy cpu vs gpu, prompt {} ({} new tokens)", prompt, matched), 64.0 - matched, 0, note);
  }
  std::fprintf(stderr, "greedy cpu vs gpu: %d/320 tokens match\n", total_match);
}

// CUDA graph replay against the eager path: the same greedy decode (one sequence: an 8-token prompt
// then 24 single-token steps; four sequences: 3-token prompts then 12 steps together; 2, 12, 20,
// then 40 sequences: 2-token prompts then 6 steps together, through the many-row matmul paths) with
// graphs off and on must give bit-identical logits, and the second run must have replayed graphs
// whose kernels launch programmatically (pdl.cuh).
void check_graphs(const std::string& path) {
  const gguf::GgufFile file = gguf::GgufFile::open(path);
  CudaBackend gpu(0);
  gpu.set_deterministic(g_deterministic);  // --deterministic: the mode's graphs against its eager steps
  model::Transformer mg(file, gpu);
  const uint32_t bs = 16, per_seq = 4;  // 64 positions per sequence
  constexpr uint32_t kManyRows = 40, kLongBlocks = 72;  // 1 152 positions for the long sequence
  const bool long_phase = mg.hparams().context_train >= 1200;
  const uint32_t vocab = mg.hparams().vocab;
  std::uniform_int_distribution<int32_t> tok(0, int32_t(vocab - 1));
  std::vector<int32_t> prompt(8 + 4 * 3);
  for (auto& t : prompt) t = tok(g_rng);
  const auto table = [&](uint32_t s) {
    std::vector<int32_t> t(per_seq);
    for (uint32_t i = 0; i < per_seq; ++i) t[i] = int32_t(s * per_seq + i);
    return t;
  };
  // A run records its greedy choices; a replaying run feeds the recorded ones instead, so that two
  // configurations whose logits differ slightly (round 43's row norm) see the same tokens: one flipped
  // near-tie would otherwise make every later logit of its sequence incomparable.
  std::vector<int32_t> chosen;
  size_t replay_at = 0;
  bool replay = false;
  const auto argmax = [&](const float* l) {
    if (replay) return replay_at < chosen.size() ? chosen[replay_at++] : 0;
    chosen.push_back(int32_t(std::max_element(l, l + vocab) - l));
    return chosen.back();
  };
  const auto decode = [&](bool graphs) {
    gpu.set_cuda_graphs(graphs);
    if (!replay) chosen.clear();
    replay_at = 0;
    gpu.init_kv(mg.kv_layout(bs, g_kv_type), (5 + kManyRows) * per_seq + kLongBlocks);  // zeroed (--kv-dtype, default F16)
    std::vector<float> all;
    std::vector<int32_t> next(prompt.begin(), prompt.begin() + 8);
    uint32_t n_past = 0;
    for (int step = 0; step < 25; ++step) {
      engine::Batch b;
      b.block_size = bs;
      b.add_sequence(next, n_past, table(0), engine::Batch::Logits::Last);
      const std::vector<float> l = mg.forward(b);
      all.insert(all.end(), l.begin(), l.end());
      n_past += uint32_t(next.size());
      next = {argmax(l.data())};
    }
    std::vector<std::vector<int32_t>> nx(4);
    for (uint32_t q = 0; q < 4; ++q) nx[q].assign(prompt.begin() + 8 + 3 * q, prompt.begin() + 11 + 3 * q);
    uint32_t past = 0;
    for (int step = 0; step < 13; ++step) {
      engine::Batch b;
      b.block_size = bs;
      for (uint32_t q = 0; q < 4; ++q) b.add_sequence(nx[q], past, table(1 + q), engine::Batch::Logits::Last);
      const std::vector<float> l = mg.forward(b);
      all.insert(all.end(), l.begin(), l.end());
      past += uint32_t(nx[0].size());
      for (uint32_t q = 0; q < 4; ++q) nx[q] = {argmax(l.data() + size_t(q) * vocab)};
    }
    // Round 17: one sequence of 1 100 positions, then one-row steps on the long attention kernel
    // (forced at any context). Its runs follow the row's context, not the launch's padded split
    // count (here 18 eager, 32 in the graph), so a graph's wider grid must give the same bits. Past
    // 1 024 positions the steps get a graph of their own (the key holds the padded split count), so
    // the knob's change is captured. Models of a shorter context (stories260K) skip it.
    if (long_phase) {
      const int lv = cuda::attn_long_variant(), lmin = cuda::attn_long_min();
      cuda::set_attn_long(lv > 0 ? lv : 1, 0);
      std::vector<int32_t> lt(kLongBlocks);
      for (uint32_t i = 0; i < kLongBlocks; ++i) lt[i] = int32_t((5 + kManyRows) * per_seq + i);
      std::vector<int32_t> nxt(1100);
      for (size_t i = 0; i < nxt.size(); ++i) nxt[i] = prompt[(i * 5) % prompt.size()];
      uint32_t lp = 0;
      for (int step = 0; step < 7; ++step) {
        engine::Batch b;
        b.block_size = bs;
        b.add_sequence(nxt, lp, lt, engine::Batch::Logits::Last);
        const std::vector<float> l = mg.forward(b);
        all.insert(all.end(), l.begin(), l.end());
        lp += uint32_t(nxt.size());
        nxt = {argmax(l.data())};
      }
      cuda::set_attn_long(lv, lmin);
    }
    // Many rows (a quantized model's matmuls: the rows GEMV at 2 rows (round 53), the int8
    // tensor-core rows kernel in two tiles at 12 rows, dq_tma at 20 and 40 since round 51; a plain
    // model's: cuBLAS), under capture: 2-token prompts, then 6 steps together.
    for (const uint32_t rows : {2u, 12u, 20u, kManyRows}) {
      std::vector<std::vector<int32_t>> mx(rows);
      for (uint32_t q = 0; q < rows; ++q) mx[q] = {prompt[q % prompt.size()], prompt[(q * 7 + rows) % prompt.size()]};
      past = 0;
      for (int step = 0; step < 7; ++step) {
        engine::Batch b;
        b.block_size = bs;
        for (uint32_t q = 0; q < rows; ++q) b.add_sequence(mx[q], past, table(5 + q), engine::Batch::Logits::Last);
        const std::vector<float> l = mg.forward(b);
        all.insert(all.end(), l.begin(), l.end());
        past += uint32_t(mx[0].size());
        for (uint32_t q = 0; q < rows; ++q) mx[q] = {argmax(l.data() + size_t(q) * vocab)};
      }
    }
    return all;
  };
  // The defaults first (round 43's row norm on where the weights are its types).
  const int64_t row_calls = gpu.row_norm_calls();
  const auto fused0 = gpu.rows_fused_stats();
  const std::vector<float> eager = decode(false), graph = decode(true);
  const auto fused1 = gpu.rows_fused_stats();
  const auto st = gpu.graph_stats();
  const int64_t row_took = gpu.row_norm_calls() - row_calls;
  // Round 43: the same steps with the norm kernels. Other bits (z = x ⊙ gain quantized, not y),
  // within the int8 path's bound; a model whose weights it does not take gives the same bits.
  gpu.set_row_norm(false);
  replay = true;  // the graph run's tokens
  const std::vector<float> ops = decode(true);
  record(fmt::format("row norm vs norm kernels, {} logits (graphs)", graph.size()),
         ops.size() == graph.size() && !graph.empty() ? rel_err(graph, ops) : INFINITY, 5e-2,
         fmt::format("row-norm layer tails {}{}", row_took, row_took == 0 ? " (the model's weights are not its types)" : ""));
  // Round 19: the layer kernel (graphs on) must give the ops' bits.
  gpu.set_layer_kernel(true);
  const int64_t layer_calls = gpu.layer_kernel_calls();
  const std::vector<float> kernel = decode(true);
  const int64_t took = gpu.layer_kernel_calls() - layer_calls;
  gpu.set_layer_kernel(false);
  gpu.set_row_norm(true);
  replay = false;
  {
    size_t d = 0;
    for (size_t i = 0; i < ops.size() && i < kernel.size(); ++i) d += std::memcmp(&ops[i], &kernel[i], sizeof(float)) != 0;
    record(fmt::format("layer kernel vs its ops, {} logits (graphs)", kernel.size()),
           ops.size() == kernel.size() && !kernel.empty() ? double(d) : 1.0, 0,
           fmt::format("{} differ; layer kernel calls {} (0: the model's weights are not its types)", d, took));
  }
  {
    // Round 53: round 52's fused 2-16-row launches and the int8 rows copies the norms and the
    // attention write for them, against the ops unfused (set_rows_fused(false): a quantize kernel
    // before each int8 rows matmul), the graph run's tokens: bit for bit.
    replay = true;
    gpu.set_rows_fused(false);
    const std::vector<float> unfused = decode(true);
    gpu.set_rows_fused(true);
    replay = false;
    size_t d = 0;
    for (size_t i = 0; i < graph.size() && i < unfused.size(); ++i) d += std::memcmp(&graph[i], &unfused[i], sizeof(float)) != 0;
    // Where the model's matmuls took the fused launches (int8 rows weights), the norms and the
    // attention must have written their copies too: a comparison without them would prove nothing.
    const bool fused_ran = fused1.calls > fused0.calls;
    const bool copies_ran = fused1.norm_copies > fused0.norm_copies && fused1.attn_copies > fused0.attn_copies;
    record(fmt::format("rows fused vs unfused, {} logits (graphs)", graph.size()),
           graph.size() == unfused.size() && !graph.empty() && (!fused_ran || copies_ran) ? double(d) : 1.0, 0,
           fmt::format("{} differ; fused calls {}, norm copies {}, attention copies {} (eager and graphs)", d,
                       fused1.calls - fused0.calls, fused1.norm_copies - fused0.norm_copies, fused1.attn_copies - fused0.attn_copies));
  }
  size_t differ = 0;
  double max_diff = 0;
  for (size_t i = 0; i < eager.size(); ++i) {
    if (std::memcmp(&eager[i], &graph[i], sizeof(float)) != 0) ++differ;
    max_diff = std::max(max_diff, double(std::fabs(eager[i] - graph[i])));
  }
  const bool same_size = eager.size() == graph.size() && !eager.empty();
  record(fmt::format("cuda graphs vs eager{}, {} KV, {} logits of {} steps (1, 4, 2, 12, 20, 40 rows{})", g_deterministic ? " (deterministic)" : "",
                     tensor_type_name(g_kv_type), eager.size(),
                     long_phase ? 73 : 66, long_phase ? "; 1 row at 1 100+" : ""),
         same_size && st.replays > 0 && st.programmatic_edges > 0 ? double(differ) : 1.0, 0,
         fmt::format("{} differ (max |diff| {:.3g}); {} captures, {} replays, {} eager fallbacks, {} programmatic edges", differ,
                     max_diff, st.captures, st.replays, st.eager_fallbacks, st.programmatic_edges));
}

#ifdef VELLUM_CHAIN_TRACE
// --chain-trace GGUF (builds with VELLUM_CHAIN_TRACE only; round 30): one decode step of one token
// row at 208 positions, graphs + programmatic launch, with every kernel block's dependency wait
// stamped (chain_trace.h), grouped by launch (%gridid) and ordered by release. Per kernel, relative
// to the step's first release: when its first block became resident, when its wait first returned
// (its predecessor done) and when its last block's did (later waves), and the time to the next
// kernel's release: what the kernel holds the chain for. VELLUM_TRACE_PREFILL=N traces an eager
// N-token prefill instead (round 40).
void chain_trace_model(const std::string& path) {
  const gguf::GgufFile file = gguf::GgufFile::open(path);
  CudaBackend gpu(0);
  model::Transformer mg(file, gpu);
  const uint32_t bs = 16, blocks = 16;
  gpu.init_kv(mg.kv_layout(bs, g_kv_type), blocks);
  std::vector<int32_t> table(blocks);
  for (uint32_t i = 0; i < blocks; ++i) table[i] = int32_t(i);
  const uint32_t vocab = mg.hparams().vocab;
  std::vector<int32_t> next(8);
  for (size_t i = 0; i < next.size(); ++i) next[i] = int32_t((i * 7919) % vocab);
  constexpr uint32_t kCap = 1 << 20;
  cuda::DeviceBuffer stamps, counter;
  cuda::ChainTrace t;
  t.stamps = static_cast<cuda::ChainStamp*>(stamps.ensure(kCap * sizeof(cuda::ChainStamp), "chain stamps"));
  t.next = static_cast<uint32_t*>(counter.ensure(sizeof(uint32_t), "chain counter"));
  t.cap = kCap;
  uint32_t n_past = 0;
  // VELLUM_TRACE_PREFILL=N (round 40): a prefill of N tokens (eager, as the engine runs prefills),
  // after 3 untraced ones, instead of a decode step.
  const char* pre = std::getenv("VELLUM_TRACE_PREFILL");
  const uint32_t prefill = pre != nullptr ? uint32_t(std::max(0, std::atoi(pre))) : 0u;
  if (prefill > 0 && (prefill + bs - 1) / bs > blocks) {
    table.resize((prefill + bs - 1) / bs);
    for (size_t i = 0; i < table.size(); ++i) table[i] = int32_t(i);
    gpu.init_kv(mg.kv_layout(bs, g_kv_type), uint32_t(table.size()));
  }
  // VELLUM_TRACE_CTX=N (round 49): the decode steps follow a prompt of N tokens (prefilled eagerly in
  // chunks of 2 048, untraced), so the traced step reads N + 208 positions of K/V.
  const char* ctx_env = std::getenv("VELLUM_TRACE_CTX");
  const uint32_t ctx = prefill == 0 && ctx_env != nullptr ? uint32_t(std::max(0, std::atoi(ctx_env))) : 0u;
  if (ctx > 0) {
    table.resize((ctx + 256 + bs - 1) / bs);
    for (size_t i = 0; i < table.size(); ++i) table[i] = int32_t(i);
    gpu.init_kv(mg.kv_layout(bs, g_kv_type), uint32_t(table.size()));
    for (uint32_t p0 = 0; p0 < ctx; p0 += 2048) {
      engine::Batch b;
      b.block_size = bs;
      b.add_sequence(std::vector<int32_t>(std::min(2048u, ctx - p0), 7), p0, table, engine::Batch::Logits::Last);
      mg.forward(b);
    }
    n_past = ctx;
  }
  const int traced = prefill > 0 ? 3 : 200;  // steps before the traced one: warm-up (decode: graphs captured and replayed)
  for (int step = 0; step <= traced; ++step) {
    engine::Batch b;
    b.block_size = bs;
    if (prefill > 0) {
      b.add_sequence(std::vector<int32_t>(prefill, 7), 0, table, engine::Batch::Logits::Last);
      next.clear();
    } else {
      b.add_sequence(next, n_past, table, engine::Batch::Logits::Last);
    }
    if (step == traced) {
      gpu.synchronize();
      cuda::check(cudaMemset(t.next, 0, sizeof(uint32_t)), "chain counter");
      cuda::chain_trace_attach(t);
    }
    const std::vector<float> l = mg.forward(b);
    if (step == traced) {
      gpu.synchronize();
      cuda::chain_trace_attach(cuda::ChainTrace{});
    }
    if (prefill > 0) continue;
    n_past += uint32_t(next.size());
    next = {int32_t(std::max_element(l.begin(), l.end()) - l.begin())};
  }
  if (prefill > 0) n_past = prefill;
  uint32_t n = 0;
  cuda::check(cudaMemcpy(&n, t.next, sizeof n, cudaMemcpyDeviceToHost), "chain counter");
  n = std::min(n, kCap);
  std::vector<cuda::ChainStamp> h(n);
  cuda::check(cudaMemcpy(h.data(), t.stamps, n * sizeof(cuda::ChainStamp), cudaMemcpyDeviceToHost), "chain stamps");
  struct Kernel {
    uint32_t grid = 0, blocks = 0, sms = 0;
    unsigned long long first_resident = ~0ull, first_release = ~0ull, last_release = 0;
    std::vector<bool> seen = std::vector<bool>(256, false);
  };
  std::map<unsigned long long, Kernel> by_id;  // a launch's stamps share its %gridid
  for (const cuda::ChainStamp& st : h) {
    Kernel& k = by_id[st.grid_id];
    k.grid = st.grid, ++k.blocks;
    k.first_resident = std::min(k.first_resident, st.resident_ns);
    k.first_release = std::min(k.first_release, st.released_ns);
    k.last_release = std::max(k.last_release, st.released_ns);
    if (st.sm < k.seen.size() && !k.seen[st.sm]) k.seen[st.sm] = true, ++k.sms;
  }
  std::vector<Kernel> ks;
  for (auto& [id, k] : by_id) ks.push_back(std::move(k));
  std::sort(ks.begin(), ks.end(), [](const Kernel& a, const Kernel& b) { return a.first_release < b.first_release; });
  bool ok = true;
  for (const Kernel& k : ks) ok = ok && k.blocks == k.grid;
  bench_line(fmt::format("chain trace of one {} ({} positions, {}): {} stamps, {} kernels{}", prefill > 0 ? "prefill" : "decode step", n_past, path, n, ks.size(),
                         ok ? "" : " (some launch without a stamp for every block)"));
  if (ks.empty()) return;
  const unsigned long long t0 = ks.front().first_release;
  const auto us = [&](unsigned long long t) { return (double(t) - double(t0)) / 1000.0; };
  std::fprintf(stdout, "| # | grid | SMs | first resident us | released us | last block released us | until next release us |\n");
  std::fprintf(stdout, "| --- | --- | --- | --- | --- | --- | --- |\n");
  for (size_t i = 0; i < ks.size(); ++i) {
    const double span = i + 1 < ks.size() ? us(ks[i + 1].first_release) - us(ks[i].first_release) : 0.0;
    std::fprintf(stdout, "| %zu | %u | %u | %.2f | %.2f | %.2f | %.2f |\n", i, ks[i].grid, ks[i].sms, us(ks[i].first_resident),
                 us(ks[i].first_release), us(ks[i].last_release), span);
  }
}
#endif

// Early launch (round 20, StepGraphs::launch_early): a decode step's graph starts as soon as its
// inputs are up, guessed from the class's last step. Steps whose end changes (whole logits, argmax,
// top-k, a draw) make the guess wrong: the early graph runs, then the step's own graph redoes the
// step. Both kinds must give the bits of early launch off: 1 row and 4 rows, 24 steps each, the
// next tokens the rows' argmax, the end op following a fixed irregular pattern.
// One decode step of rows nx[q] (each its sequence's new tokens after `past`), sequence q owning
// blocks (first + q)·per_seq .. + per_seq − 1 of a pool of block size bs; every row's last logits kept.
engine::Batch decode_batch(const std::vector<std::vector<int32_t>>& nx, uint32_t past, uint32_t bs, uint32_t per_seq,
                           uint32_t first) {
  engine::Batch b;
  b.block_size = bs;
  for (uint32_t q = 0; q < nx.size(); ++q) {
    std::vector<int32_t> t(per_seq);
    for (uint32_t i = 0; i < per_seq; ++i) t[i] = int32_t((first + q) * per_seq + i);
    b.add_sequence(nx[q], past, t, engine::Batch::Logits::Last);
  }
  return b;
}

// Logprobs of rows reduced on the GPU (round 21) against the host's from whole rows: 8 decode steps
// of 4 rows (argmax with 5 alternatives, top-40 with 20, a draw with top-p 0.9 with 3, a draw with 0),
// each step run once reduced and once whole (the same inputs: the same logits). Tokens and
// alternatives' ids must be equal; values within 1e-5 (the GPU sums the normalizer in another order).
void check_logprobs_model(const std::string& path) {
  const gguf::GgufFile file = gguf::GgufFile::open(path);
  CudaBackend gpu(0);
  model::Transformer mg(file, gpu);
  const uint32_t bs = 16, per_seq = 4, vocab = mg.hparams().vocab, rows = 4;
  gpu.init_kv(mg.kv_layout(bs, g_kv_type), rows * per_seq);
  std::uniform_int_distribution<int32_t> tok(0, int32_t(vocab - 1));
  std::vector<std::vector<int32_t>> nx(rows);
  for (auto& p : nx) p = {tok(g_rng), tok(g_rng), tok(g_rng)};
  const std::vector<int32_t> keep = {1, 40, model::Transformer::kDraw, model::Transformer::kDraw};
  const std::vector<int32_t> lps = {5, 20, 3, 0};
  uint32_t past = 0;
  int64_t token_differ = 0, id_differ = 0, entries = 0;
  double max_diff = 0;
  for (int step = 0; step < 8; ++step) {
    const engine::Batch b = decode_batch(nx, past, bs, per_seq, 0);
    std::vector<backend::RowDraw> draws(rows);
    draws[2] = {0.3 + 0.05 * step, 0.9f, 0.0f, 0.9f};
    draws[3] = {0.7 - 0.05 * step, 1.1f};
    const auto red = mg.forward(b, keep, draws, {}, {}, lps);
    const auto whole = mg.forward(b, std::vector<int32_t>(rows, 0));
    past += uint32_t(nx[0].size());
    for (uint32_t q = 0; q < rows; ++q) {
      const std::span<const float> row(whole.logits.data() + size_t(q) * vocab, vocab);
      const size_t at = size_t(q) * size_t(red.top_k);
      int32_t token;
      float value;
      if (keep[q] == 40) {  // the first candidate, as a stand-in for the sampled one
        token = red.top_ids[at];
        value = red.top_values[at];
      } else {
        token = keep[q] == 1 ? red.argmax[q] : red.drawn[q];
        value = red.token_logit[q];
      }
      const auto want = engine::compute_logprobs(row, token, uint32_t(lps[q]));
      const auto got = engine::logprobs_from_candidates(red.log_z[q], token, value, {red.top_values.data() + at, size_t(red.top_k)},
                                                        {red.top_ids.data() + at, size_t(red.top_k)}, uint32_t(lps[q]));
      token_differ += keep[q] == 1 && token != int32_t(std::max_element(row.begin(), row.end()) - row.begin());
      max_diff = std::max(max_diff, double(std::abs(want.logprob - got.logprob)));
      id_differ += want.top.size() != got.top.size();
      for (size_t j = 0; j < want.top.size() && j < got.top.size(); ++j, ++entries) {
        id_differ += want.top[j].first != got.top[j].first;
        max_diff = std::max(max_diff, double(std::abs(want.top[j].second - got.top[j].second)));
      }
      nx[q] = {token};
    }
  }
  record(fmt::format("logprobs of reduced rows vs whole rows, 8 steps x 4 rows ({} alternatives)", entries),
         token_differ + id_differ > 0 ? 1.0 : max_diff, 1e-5,
         fmt::format("{} argmax tokens and {} alternatives' ids differ; max |logprob diff| {:.2g}", token_differ, id_differ, max_diff));
}

void check_early_launch(const std::string& path) {
  const gguf::GgufFile file = gguf::GgufFile::open(path);
  CudaBackend gpu(0);
  model::Transformer mg(file, gpu);
  const uint32_t bs = 16, per_seq = 4, vocab = mg.hparams().vocab;
  std::uniform_int_distribution<int32_t> tok(0, int32_t(vocab - 1));
  std::vector<int32_t> prompt(12);
  for (auto& t : prompt) t = tok(g_rng);
  // whole, argmax, top-40, draw: runs of three (the third step of a run is launched early and
  // right, the next run's first early and wrong), and single steps (never launched early).
  const int pattern[] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 0, 3, 3, 3, 1, 2, 0};
  const auto run = [&](bool early) {
    gpu.set_early_launch(early);
    gpu.init_kv(mg.kv_layout(bs, g_kv_type), 5 * per_seq);
    std::vector<float> out;  // per step and row: the whole row, or the chosen token
    for (const uint32_t rows : {1u, 4u}) {
      std::vector<std::vector<int32_t>> nx(rows);
      for (uint32_t q = 0; q < rows; ++q) nx[q].assign(prompt.begin() + 3 * q, prompt.begin() + 3 * q + 3);
      uint32_t past = 0;
      for (int step = 0; step < 24; ++step) {
        const engine::Batch b = decode_batch(nx, past, bs, per_seq, 1);
        const int kind = pattern[step % 16];
        std::vector<int32_t> keep(rows, kind == 0 ? 0 : kind == 1 ? 1 : kind == 2 ? 40 : model::Transformer::kDraw);
        // Draws with nothing cut, and (every other step) with top-p and min-p: a step's narrowing
        // passes make its graph differ from the last one's.
        std::vector<backend::RowDraw> draws(rows, step % 2 == 0 ? backend::RowDraw{0.5 + 0.01 * step, 0.9f}
                                                                : backend::RowDraw{0.5 + 0.01 * step, 0.9f, 0.05f, 0.8f});
        // Top-k steps edit their rows (a bias and penalties on tokens that move with the step): the
        // edits differ in every step a graph replays.
        std::vector<backend::LogitEdit> edits;
        std::vector<uint32_t> edit_rows;
        if (kind == 2) {
          for (uint32_t q = 0; q < rows; ++q) {
            edit_rows.push_back(uint32_t(edits.size()));
            const uint32_t all = backend::LogitEdit::kBias | backend::LogitEdit::kRepetition | backend::LogitEdit::kSubtract;
            for (const int32_t t : {int32_t(5 + q), int32_t(77 + step), int32_t(300 + 7 * step)}) {
              edits.push_back({t, all, 1.5f + 0.1f * float(step), 1.3f, 0.25f * float(q)});
            }
          }
          edit_rows.push_back(uint32_t(edits.size()));
        }
        const auto o = mg.forward(b, keep, kind == 3 ? std::span<const backend::RowDraw>(draws) : std::span<const backend::RowDraw>{},
                                  edits, edit_rows);
        past += uint32_t(nx[0].size());
        for (uint32_t q = 0; q < rows; ++q) {
          int32_t next;
          if (kind == 0) {
            const float* l = o.logits.data() + size_t(q) * vocab;
            out.insert(out.end(), l, l + vocab);
            next = int32_t(std::max_element(l, l + vocab) - l);
          } else {
            next = kind == 1 ? o.argmax[q] : kind == 2 ? o.top_ids[size_t(q) * 40] : o.drawn[q];
            out.push_back(float(next));
          }
          nx[q] = {next};
        }
      }
    }
    return out;
  };
  const auto st0 = gpu.graph_stats();
  const std::vector<float> on = run(true);
  const auto st1 = gpu.graph_stats();
  const std::vector<float> off = run(false);
  const auto st2 = gpu.graph_stats();
  size_t differ = on.size() == off.size() ? 0 : 1;
  for (size_t i = 0; i < on.size() && i < off.size(); ++i) differ += std::memcmp(&on[i], &off[i], sizeof(float)) != 0;
  const int64_t hits = st1.early_hits - st0.early_hits, misses = st1.early_misses - st0.early_misses;
  const bool exercised = hits > 0 && misses > 0 && st2.early_hits == st1.early_hits && st2.early_misses == st1.early_misses;
  record(fmt::format("early launch vs none, {} values of 48 steps (1 and 4 rows; whole, argmax, edited top-k, draw ends)", on.size()),
         exercised ? double(differ) : 1.0, 0,
         fmt::format("{} differ; early guesses {} right, {} done again (off: {} / {})", differ, hits, misses,
                     st2.early_hits - st1.early_hits, st2.early_misses - st1.early_misses));
}

// Batch invariance of a whole model in the deterministic mode: sequence A's logits when it runs
// alone (its 8-token prompt as one chunk, then 12 single-token steps) must equal bit for bit those it
// gets batched (its prompt in chunks of 3 and 5 beside other prompts, then steps beside 3 sequences
// of other lengths, some still in prefill). A's step inputs are fixed tokens, not its argmax, so the
// default mode, whose kernels depend on the batch, runs the same inputs; its difference is printed.
// Round 38 (--qkv-rope MODEL, a model of 128-dim heads without q/k norms: llama3-8b): a model's
// logits with RoPE and the K/V store in the grouped Q/K/V launch's end against them without, bit for
// bit (check_qkv_rope holds the launch alone): a 300-token prefill, a 200-token chunk after it, 6
// decode steps, then 4 sequences of 40 tokens together; the fusion taken on, never off.
void check_qkv_rope_model(const std::string& path) {
  const gguf::GgufFile file = gguf::GgufFile::open(path);
  CudaBackend gpu(0);
  model::Transformer mg(file, gpu);
  const uint32_t bs = 16, vocab = mg.hparams().vocab;
  std::uniform_int_distribution<int32_t> tok(0, int32_t(vocab - 1));
  std::vector<int32_t> prompt(500 + 4 * 40);
  for (auto& t : prompt) t = tok(g_rng);
  const auto table = [&](uint32_t first, uint32_t blocks) {
    std::vector<int32_t> t(blocks);
    for (uint32_t i = 0; i < blocks; ++i) t[i] = int32_t(first + i);
    return t;
  };
  const auto run = [&](bool fuse, int64_t& calls) {
    gpu.set_qkv_rope(fuse);
    gpu.init_kv(mg.kv_layout(bs, g_kv_type), 64 + 4 * 4);
    const int64_t before = gpu.qkv_rope_calls();
    std::vector<float> all;
    const auto step = [&](engine::Batch& b) {
      const std::vector<float> l = mg.forward(b);
      all.insert(all.end(), l.begin(), l.end());
      return l;
    };
    uint32_t past = 0;
    std::vector<int32_t> next;
    for (const uint32_t rows : {300u, 200u}) {
      engine::Batch b;
      b.block_size = bs;
      b.add_sequence(std::vector<int32_t>(prompt.begin() + past, prompt.begin() + past + rows), past, table(0, 64), engine::Batch::Logits::Last);
      const auto l = step(b);
      past += rows;
      next = {int32_t(std::max_element(l.begin(), l.end()) - l.begin())};
    }
    for (int i = 0; i < 6; ++i, ++past) {
      engine::Batch b;
      b.block_size = bs;
      b.add_sequence(next, past, table(0, 64), engine::Batch::Logits::Last);
      const auto l = step(b);
      next = {int32_t(std::max_element(l.begin(), l.end()) - l.begin())};
    }
    engine::Batch b;
    b.block_size = bs;
    for (uint32_t q = 0; q < 4; ++q) {
      b.add_sequence(std::vector<int32_t>(prompt.begin() + 500 + 40 * q, prompt.begin() + 540 + 40 * q), 0, table(64 + 4 * q, 4),
                     engine::Batch::Logits::Last);
    }
    step(b);
    calls = gpu.qkv_rope_calls() - before;
    return all;
  };
  int64_t on_calls = 0, off_calls = 0;
  const std::vector<float> on = run(true, on_calls), off = run(false, off_calls);
  gpu.set_qkv_rope(true);
  const std::string name = fmt::format("model {} logits, RoPE in the Q/K/V launch's end vs rope_kv_rows ({} logits)", path.substr(path.find_last_of('/') + 1), on.size());
  record(name, max_abs_diff(on, off), 0, "bit for bit");
  record(name + ": taken on, not off", on_calls > 0 && off_calls == 0 ? 0 : 1, 0,
         fmt::format("{} / {} layer calls", on_calls, off_calls));
}

void check_model_invariance(const std::string& path) {
  const gguf::GgufFile file = gguf::GgufFile::open(path);
  CudaBackend gpu(0);
  model::Transformer mg(file, gpu);
  const uint32_t bs = 16, per_seq = 4;  // 64 positions per sequence
  const uint32_t vocab = mg.hparams().vocab;
  std::uniform_int_distribution<int32_t> tok(0, int32_t(vocab - 1));
  const auto tokens = [&](size_t n) {
    std::vector<int32_t> t(n);
    for (auto& v : t) v = tok(g_rng);
    return t;
  };
  const std::vector<int32_t> a_prompt = tokens(8), a_steps = tokens(12), b_prompt = tokens(6), c_prompt = tokens(11),
                             d_prompt = tokens(3), others = tokens(64);
  const auto table = [&](uint32_t s) {
    std::vector<int32_t> t(per_seq);
    for (uint32_t i = 0; i < per_seq; ++i) t[i] = int32_t(s * per_seq + i);
    return t;
  };
  using L = engine::Batch::Logits;
  // A's logits after its prompt and after each step: alone, or batched as sequence 0 of each batch.
  const auto run_a = [&](bool det, bool batched) {
    gpu.set_deterministic(det);
    gpu.init_kv(mg.kv_layout(bs, g_kv_type), 4 * per_seq);
    std::vector<float> got;
    const auto keep = [&](const std::vector<float>& l) { got.insert(got.end(), l.begin(), l.begin() + vocab); };
    size_t o = 0;  // next of the other sequences' fixed tokens
    const auto one = [&] { return std::vector<int32_t>{others[o++ % others.size()]}; };
    if (!batched) {
      engine::Batch b;
      b.block_size = bs;
      b.add_sequence(a_prompt, 0, table(0), L::Last);
      keep(mg.forward(b));
    } else {
      engine::Batch b1;
      b1.block_size = bs;
      b1.add_sequence({a_prompt.begin(), a_prompt.begin() + 3}, 0, table(0), L::None);
      b1.add_sequence(b_prompt, 0, table(1), L::Last);
      (void)mg.forward(b1);
      engine::Batch b2;
      b2.block_size = bs;
      b2.add_sequence({a_prompt.begin() + 3, a_prompt.end()}, 3, table(0), L::Last);
      b2.add_sequence(one(), uint32_t(b_prompt.size()), table(1), L::Last);
      b2.add_sequence(c_prompt, 0, table(2), L::Last);
      keep(mg.forward(b2));
    }
    uint32_t a_past = uint32_t(a_prompt.size()), b_past = uint32_t(b_prompt.size()) + 1, c_past = uint32_t(c_prompt.size());
    uint32_t d_past = 0;
    for (size_t step = 0; step < a_steps.size(); ++step) {
      engine::Batch b;
      b.block_size = bs;
      b.add_sequence({a_steps[step]}, a_past, table(0), L::Last);
      if (batched) {
        b.add_sequence(one(), b_past++, table(1), L::Last);
        b.add_sequence(one(), c_past++, table(2), L::Last);
        if (step == 2) {  // D's prompt joins a decode step
          b.add_sequence(d_prompt, 0, table(3), L::Last);
          d_past = uint32_t(d_prompt.size());
        } else if (step > 2) {
          b.add_sequence(one(), d_past++, table(3), L::Last);
        }
      }
      keep(mg.forward(b));
      ++a_past;
    }
    return got;
  };
  double diff[2] = {0, 0};
  for (int det = 0; det < 2; ++det) diff[det] = max_abs_diff(run_a(det == 1, false), run_a(det == 1, true));
  gpu.set_deterministic(false);
  record(fmt::format("deterministic model: {} logits of 13 steps, alone vs batched ({} KV)", vocab,
                     tensor_type_name(g_kv_type)),
         diff[1], 0, fmt::format("bit for bit [max |diff| in default mode: {:.3g}]", diff[0]));
}

int run(int argc, char** argv) {
  bool bench = false;
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--bench") {
      bench = true;
    } else if (a == "--model" && i + 1 < argc) {
      models.push_back(argv[++i]);
    } else if (a == "--compare" && i + 1 < argc) {
      compare_greedy(argv[++i]);
    } else if (a == "--graphs" && i + 1 < argc) {
      check_graphs(argv[++i]);
    } else if (a == "--qkv-rope" && i + 1 < argc) {
      check_qkv_rope_model(argv[++i]);
    } else if (a == "--invariance" && i + 1 < argc) {
      check_model_invariance(argv[++i]);
    } else if (a == "--kv-dtype" && i + 1 < argc) {
      const auto t = parse_tensor_type(argv[++i]);
      if (!t || !cuda::kv_type_supported(*t)) throw_error("--kv-dtype {}: expected f32, f16 or bf16", argv[i]);
      g_kv_type = *t;
    } else if (a == "--profile" && i + 1 < argc) {
      g_rows.push_back({"(checks skipped)", 0, 0, true, ""});
      profile_model(argv[++i]);
    } else if (a == "--no-mmq") {
      g_no_mmq = true;
    } else if (a == "--mmq-bench") {
      g_mmq_bench = true;
    } else if (a == "--dq-probe" && i + 4 < argc) {  // TYPE N K M: dq_mma's kernel alone, for a profiler
      const auto t = parse_tensor_type(argv[i + 1]);
      const int64_t n = std::atoll(argv[i + 2]), k = std::atoll(argv[i + 3]), m = std::atoll(argv[i + 4]);
      i += 4;
      if (!t || !cuda::dq_mma_supports(*t, k) || n <= 0 || m <= 0) {
        std::fprintf(stderr, "--dq-probe: a Q8_0/Q4_K/Q6_K type, n, k (multiple of 256), m\n");
        return 2;
      }
      CudaBackend be(0);
      const size_t bytes = row_bytes(*t, uint64_t(k)) * size_t(n);
      const Weight wt = upload_repeated(be, *t, n, k, std::min<int64_t>(n, 64));
      const double ms = time_dq_kernel(*t, wt.data, n, k, m, 20, be.dq_rs());
      std::printf("dq probe %s %lldx%lld rows %lld: %.1f us, %.0f GB/s\n", argv[i - 3], (long long)n, (long long)k, (long long)m,
                  ms * 1e3, bytes / (ms * 1e-3) / 1e9);
      if (const char* d = std::getenv("VELLUM_CUDA_DQ_DBG"); d != nullptr && (std::atoi(d) & 8)) {
        const char* sp = std::getenv("VELLUM_CUDA_DQ_MMA_SPLITS");
        const cuda::DqMmaPlan plan = cuda::dq_mma_plan(n, k, m, 132, sp != nullptr ? std::atoi(sp) : 0);
        const int blocks = int(plan.tok_tiles * plan.row_tiles * plan.splits);
        const auto t = cuda::dq_mma_debug_times(blocks);
        unsigned long long t0 = ~0ull, t2 = 0, s0 = 0;
        double walk = 0, tail = 0, walk_max = 0, tail_max = 0;
        for (int b = 0; b < blocks && b < 8192; ++b) {
          t0 = std::min(t0, t[3 * b]), t2 = std::max(t2, t[3 * b + 2]), s0 = std::max(s0, t[3 * b]);
          walk += double(t[3 * b + 1] - t[3 * b]), tail += double(t[3 * b + 2] - t[3 * b + 1]);
          walk_max = std::max(walk_max, double(t[3 * b + 1] - t[3 * b])), tail_max = std::max(tail_max, double(t[3 * b + 2] - t[3 * b + 1]));
        }
        std::printf("dq timeline: %d blocks (splits %u), span %.1f us, last start %.1f us, K walk mean %.1f max %.1f us, end mean %.1f max %.1f us\n",
                    blocks, plan.splits, (t2 - t0) / 1e3, (s0 - t0) / 1e3, walk / blocks / 1e3, walk_max / 1e3, tail / blocks / 1e3, tail_max / 1e3);
      }
      return 0;
    } else if (a == "--topk-probe" && i + 3 < argc) {  // ROWS COLS K: top_k_rows' kernels alone against the argmax's
      const int64_t rows = std::atoll(argv[i + 1]), cols = std::atoll(argv[i + 2]);
      const int k = std::atoi(argv[i + 3]);
      i += 3;
      if (rows < 1 || rows > 65535 || cols < 1 || k < 1 || k > cuda::kMaxTopKDevice || k > cols) {
        std::fprintf(stderr, "--topk-probe: 1..65535 rows, k in 1..min(%d, cols)\n", cuda::kMaxTopKDevice);
        return 2;
      }
      const std::vector<float> v = randn(size_t(rows * cols), 3.0f);
      float* x = static_cast<float*>(cuda::device_alloc(v.size() * 4, "probe logits"));
      cuda::check(cudaMemcpy(x, v.data(), v.size() * 4, cudaMemcpyHostToDevice), "h2d");
      void* out = cuda::device_alloc(size_t(rows * k) * 8 + 16, "probe results");
      void* ws = cuda::device_alloc(std::max(cuda::top_k_workspace_bytes(rows, cols, k), cuda::argmax_workspace_bytes(rows, cols)), "probe ws");
      auto* ov = static_cast<float*>(out);
      auto* oi = reinterpret_cast<int32_t*>(ov + rows * k);
      const double tk = time_ms([&] { cuda::check(cuda::launch_top_k_rows(x, rows, cols, k, ov, oi, ws, nullptr), "top-k"); }, 200);
      const double am = time_ms([&] { cuda::check(cuda::launch_argmax_rows(x, rows, cols, oi, ws, nullptr), "argmax"); }, 200);
      std::printf("topk probe %lld x %lld, k %d: top_k_rows %.1f us, argmax_rows %.1f us (host-timed, launches included)\n",
                  (long long)rows, (long long)cols, k, tk * 1e3, am * 1e3);
      return 0;
    } else if (a == "--draw-probe" && i + 2 < argc) {  // ROWS COLS: draw_rows' kernels alone against the argmax's
      const int64_t rows = std::atoll(argv[i + 1]), cols = std::atoll(argv[i + 2]);
      i += 2;
      if (rows < 1 || rows > 65535 || cols < 1) {
        std::fprintf(stderr, "--draw-probe: 1..65535 rows, cols >= 1\n");
        return 2;
      }
      const std::vector<float> v = randn(size_t(rows * cols), 3.0f);
      float* x = static_cast<float*>(cuda::device_alloc(v.size() * 4, "probe logits"));
      cuda::check(cudaMemcpy(x, v.data(), v.size() * 4, cudaMemcpyHostToDevice), "h2d");
      // The same rows drawn with nothing cut and with top-p 0.9 and min-p 0.05 (the narrowing passes).
      std::vector<cuda::DrawArg> args(static_cast<size_t>(rows), cuda::DrawArg{0.37, 0.8f, 0.0f, 1.0f, 0.0f});
      args.resize(2 * args.size(), cuda::DrawArg{0.37, 0.8f, 0.05f, 0.9f, 0.0f});
      auto* d_args = static_cast<cuda::DrawArg*>(cuda::device_alloc(args.size() * sizeof(cuda::DrawArg), "probe draws"));
      cuda::check(cudaMemcpy(d_args, args.data(), args.size() * sizeof(cuda::DrawArg), cudaMemcpyHostToDevice), "h2d");
      auto* oi = static_cast<int32_t*>(cuda::device_alloc(size_t(rows) * 4, "probe results"));
      void* ws = cuda::device_alloc(std::max(cuda::draw_rows_workspace_bytes(rows, cols), cuda::argmax_workspace_bytes(rows, cols)), "probe ws");
      const double dr = time_ms([&] { cuda::check(cuda::launch_draw_rows(x, rows, cols, d_args, false, oi, ws, nullptr), "draw"); }, 200);
      const double dc = time_ms([&] { cuda::check(cuda::launch_draw_rows(x, rows, cols, d_args + rows, true, oi, ws, nullptr), "draw"); }, 200);
      const double am = time_ms([&] { cuda::check(cuda::launch_argmax_rows(x, rows, cols, oi, ws, nullptr), "argmax"); }, 200);
      std::printf("draw probe %lld x %lld: draw_rows %.1f us (nothing cut), %.1f us (top-p 0.9, min-p 0.05), argmax_rows %.1f us "
                  "(host-timed, launches included)\n",
                  (long long)rows, (long long)cols, dr * 1e3, dc * 1e3, am * 1e3);
      return 0;
    } else if (a == "--attn-probe" && i + 2 < argc) {  // CTX NSEQ: one decode attention case, for a profiler
      const uint32_t ctx = uint32_t(std::atoi(argv[i + 1])), nseq = uint32_t(std::atoi(argv[i + 2]));
      i += 2;
      if (ctx < 2 || nseq < 1) {
        std::fprintf(stderr, "--attn-probe: context >= 2, sequences >= 1\n");
        return 2;
      }
      const double ms = attention_ms(TensorType::F16, nseq, ctx - 1, 1, 0, 5);
      const double bytes = double(nseq) * ctx * 8 * 128 * 2 * 2.0;
      std::printf("attn probe %u x %u (F16 KV, decode variant %d): %.4f ms, %.0f GB/s\n", ctx, nseq, cuda::attn_decode_variant(), ms,
                  bytes / (ms * 1e-3) / 1e9);
      return 0;
    } else if (a == "--skip-op-bench") {
      g_skip_op_bench = true;
    } else if (a == "--deterministic") {
      g_deterministic = true;
    } else if (a == "--batch1-only") {
      g_batch1_only = true;
    } else if (a == "--prefill-only") {
      g_prefill_only = true;
    } else if (a == "--long-ctx-only") {
      g_long_only = true;
    } else if (a == "--gemv-only") {
      g_gemv_only = true;
    } else if (a == "--attn-bench") {  // copy bandwidth and the attention timings only
      g_rows.push_back({"(checks skipped)", 0, 0, true, ""});
      bench_attention(bench_copy());
    } else if (a == "--prefill-attn-only") {  // the tensor-core prefill attention at 512 / 2 048 / 8 192 tokens
      g_rows.push_back({"(checks skipped)", 0, 0, true, ""});
      g_prefill_attn_only = true;
      bench_attention(0.0);
    } else if (a == "--bf16-rows") {  // round 7's many-row bf16 checks only
      Pair p;
      p.gpu.set_gemv_max_rows(cuda::kMaxGemvRows);
      p.gpu.set_mmq_max_rows(int64_t(1) << 30);
      check_bf16_rows(p);
    } else if (a == "--swiglu-rows") {  // the default; kept for the round-7 scripts
      g_swiglu_rows = true;
    } else if (a == "--no-swiglu-rows") {
      g_swiglu_rows = false;
    } else if (a == "--layer-trace") {
      trace_layer_kernel();
    } else if (a == "--logprobs" && i + 1 < argc) {  // logprobs of reduced rows vs whole rows on a model
      check_logprobs_model(argv[++i]);
    } else if (a == "--early" && i + 1 < argc) {  // early launch vs none on a model
      check_early_launch(argv[++i]);
    } else if (a == "--sampling-only") {  // argmax, top-k and draw checks only
      Pair p;
      check_sampling(p);
    } else if (a == "--plan-bench") {  // round 33: grouped and single dequantizing GEMM plans through the backend
      g_rows.push_back({"(checks skipped)", 0, 0, true, ""});
      bench_dq_plans();
    } else if (a == "--tma-bench") {  // rounds 26 and 28: the bulk-copy dequantizing GEMMs' speed
      g_rows.push_back({"(checks skipped)", 0, 0, true, ""});
      bench_dq_tma(bench_gemm());
    } else if (a == "--dq-only") {  // the quantized many-row matmul checks (dq_mma's kernels, mmq, cuBLAS; round 26)
      Pair p;
      p.gpu.set_gemv_max_rows(cuda::kMaxGemvRows);  // as the full check
      p.gpu.set_mmq_max_rows(int64_t(1) << 30);
      p.gpu.set_dq_mma_rows(2, int64_t(1) << 30);
      for (TensorType t : {TensorType::Q4_K, TensorType::Q6_K, TensorType::Q8_0}) {
        check_matmul(p, t, 2048, 1000, {2, 32, 128, 300}, false);
        check_matmul(p, t, 256, 77, {3, 200}, true);
        check_matmul(p, t, 1280, 1000, {40}, true);
        check_matmul(p, t, 4096, 256, {512}, false);
        p.cpu.release_scratch();
        p.gpu.release_scratch();
      }
      check_gemv_mma_shapes(p);
      // The many-row SwiGLU with the backend's defaults: at 33..1 024 rows the register-A kernel
      // writes bf16 gate/up rows (round 28), its f32 path in the round-6 comparison.
      Pair d;
      for (TensorType t : {TensorType::Q4_K, TensorType::Q6_K, TensorType::Q8_0}) {
        check_swiglu_rows(d, t, 200, 1000, 1024);
        check_swiglu_rows(d, t, 700, 512, 2048);
        check_swiglu_rows(d, t, 200, 1004, 1024);  // rows not a multiple of 8: the two matmuls and the f32 SwiGLU
        d.cpu.release_scratch();
        d.gpu.release_scratch();
      }
      check_dq_store();
      check_dq_group(d);
      check_dq_wave_split();
      check_dq_swiglu();
      check_dq_swiglu_split_tail(d);
      check_swiglu16_exhaustive();
      check_frag_probe();
      check_swiglu_rows(d, TensorType::Q4_K, 300, 4600, 4096);  // the wave split against f64
    } else if (a == "--dense-only") {  // round 21's dense weight copies only
      Pair p;
      check_dense_copies(p);
    } else if (a == "--attn-only") {  // the attention checks only (round 25)
      Pair p;
      check_attention_all(p);
      check_rope_attention_all(p);
    } else if (a == "--det-only") {  // the deterministic mode's matmul checks only (round 22)
      Pair p;
      for (TensorType t : {TensorType::Q8_0, TensorType::Q4_K, TensorType::Q6_K, TensorType::BF16, TensorType::F16}) {
        check_batch_invariance(p, t, 4096, 1024);
      }
      check_rows_mma_all(p);
      check_det16_all(p);
      for (const bool tc : {false, true}) {
        check_det_attention(p, TensorType::F16, 32, 8, 128, tc);
        check_det_attention(p, TensorType::BF16, 14, 2, 64, tc);
      }
    } else if (a == "--wgmma-probe") {  // round 23 experiment: wgmma vs mma.sync bits
      g_rows.push_back({"(checks skipped)", 0, 0, true, ""});
      ::wgmma_probe(4096);
    } else if (a == "--det16-bench") {
      g_rows.push_back({"(checks skipped)", 0, 0, true, ""});
      bench_det16();
    } else if (a == "--rows-mma-bench") {
      g_rows.push_back({"(checks skipped)", 0, 0, true, ""});
      bench_rows_mma();
#ifdef VELLUM_CHAIN_TRACE
    } else if (a == "--chain-trace" && i + 1 < argc) {  // round 30: one decode step's kernel chain
      g_rows.push_back({"(checks skipped)", 0, 0, true, ""});
      chain_trace_model(argv[++i]);
#endif
    } else if (a == "--embed-only") {  // the embedding checks only (round 34)
      Pair p;
      check_embed_all(p);
    } else if (a == "--tail-rows-only") {  // round 34's many-row layer tails only (the first checks of --layer-only)
      Pair p;
      check_layer_tail_rows_all(p);
    } else if (a == "--layer-only") {  // round 19's layer kernel checks only
      Pair p;
      check_layer_kernel(p);
    } else if (a == "--row-norm-only") {  // round 43's one-row layer tails (and round 19's kernel)
      Pair p;
      check_layer_tails_row1(p);
    } else if (a == "--multi-only") {  // the fused one-row launches (matmul_multi's pair, SwiGLU, norms) alone
      Pair p;
      check_fused(p);
    } else if (a == "--rows-fused-only") {  // round 52: 2-16 rows' Q/K/V and SwiGLU launches
      Pair p;
      check_rows_fused(p);
    } else if (a == "--norm-out-only") {  // round 43's producer alone
      Pair p;
      check_gemv_norm_out_all(p);
    } else if (a == "--mma-x-only") {  // round 44's staged x of the int8 tensor-core rows kernel (round 51: its tiles, its shapes)
      Pair p;
      p.gpu.set_gemv_max_rows(cuda::kMaxGemvRows);  // as the full check: check_matmul's mode 2 is the f32 GEMV
      check_mma_stage_x(p);
      check_gemv_mma_shapes(p);
    } else if (a == "--attn-clusters") {  // round 49: the one-row attention's clusters held at once
      g_rows.push_back({"(checks skipped)", 0, 0, true, ""});
      cuda::AttnParams p;
      p.kv.head_dim = 128, p.kv.kv_heads = 8, p.kv.type = TensorType::BF16, p.heads = 32;
      for (const int slices : {1, 2, 4, 6, 8}) {
        p.max_splits = slices * cuda::kRopeRowSpan / cuda::kAttnSplit;
        std::printf("one-row attention, 32 heads x %d slices (clusters of %d), 128-dim BF16: %d clusters at once with V in "
                    "registers, %d with V in shared memory (%d needed)\n",
                    slices, slices, cuda::attn_rope_row_max_clusters(p, false), cuda::attn_rope_row_max_clusters(p, true), p.heads);
      }
      // Round 50: the long kernel's runs as one cluster (variant 6), llama3-8b / llama3.2-1b /
      // qwen2.5-0.5b / qwen2.5-1.5b's attention shapes: a cluster a KV head and group of 4 query heads.
      p.max_splits = 4096 / cuda::kAttnSplit;
      for (const auto& [heads, kvh, hd] : std::vector<std::tuple<int, int, int>>{{32, 8, 128}, {32, 8, 64}, {14, 2, 64}, {12, 2, 128}}) {
        p.heads = heads, p.kv.kv_heads = kvh, p.kv.head_dim = hd;
        const int groups = kvh * ((heads / kvh + 3) / 4);
        for (const int runs : {8, 12, 16}) {
          std::printf("long kernel 6, %dq/%dkv x%d BF16, 4096 positions, clusters of %d runs: %d at once (%d needed)\n", heads, kvh, hd,
                      runs, cuda::attn_long_max_clusters(p, runs), groups);
        }
      }
    } else if (a == "--barrier-probe") {  // round 47: a grid barrier against a kernel edge
      g_rows.push_back({"(checks skipped)", 0, 0, true, ""});
      vellum::cuda_probe::barrier_probe();
    } else if (a == "--cluster-probe") {  // round 45: clusters a KV group (docs/cuda.md, round 45)
      g_rows.push_back({"(checks skipped)", 0, 0, true, ""});
      vellum::cuda_probe::cluster_probe();
    } else if (a == "--pair-probe") {
      g_rows.push_back({"(checks skipped)", 0, 0, true, ""});
      pair_probe();
    } else if (a == "--only-bench") {
      bench = true;
      g_rows.push_back({"(checks skipped)", 0, 0, true, ""});
    } else {
      std::fprintf(stderr, "usage: vellum_cuda_check [--bench] [--only-bench] [--deterministic] [--batch1-only] [--prefill-only] [--long-ctx-only] [--gemv-only] [--no-mmq] [--mmq-bench] [--skip-op-bench] [--attn-bench] [--prefill-attn-only] [--no-swiglu-rows] [--bf16-rows] [--layer-only] [--tail-rows-only] [--row-norm-only] [--norm-out-only] [--multi-only] [--rows-fused-only] [--mma-x-only] [--cluster-probe] [--barrier-probe] [--attn-clusters] [--attn-only] [--det-only] [--dq-only] [--tma-bench] [--plan-bench] [--dense-only] [--det16-bench] [--wgmma-probe] [--rows-mma-bench] [--sampling-only] [--early GGUF] [--layer-trace] [--chain-trace GGUF (VELLUM_CHAIN_TRACE builds)] [--pair-probe] [--kv-dtype f32|f16|bf16] [--model GGUF]... [--compare GGUF] [--graphs GGUF] [--invariance GGUF] [--profile GGUF]\n");
      return 2;
    }
  }
  if (g_rows.empty()) {
    Pair p;
    p.gpu.set_gemv_max_rows(cuda::kMaxGemvRows);  // rows 1..8: GEMV kernels for every type; 9+: cuBLAS
    p.gpu.set_mmq_max_rows(int64_t(1) << 30);     // mmq at every row count it is checked at
    p.gpu.set_dq_mma_rows(2, int64_t(1) << 30);   // dq_mma likewise
    const std::vector<TensorType> types = {TensorType::F32,  TensorType::F16,  TensorType::BF16, TensorType::Q8_0,
                                           TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1,
                                           TensorType::Q2_K, TensorType::Q3_K, TensorType::Q4_K, TensorType::Q5_K,
                                           TensorType::Q6_K};
    for (TensorType t : types) {
      check_matmul(p, t, 4096, 512, {1, 5, 8, 40}, false);
      p.cpu.release_scratch();
      p.gpu.release_scratch();
    }
    check_matmul(p, TensorType::Q8_0, 2048, 1000, {3, 24}, true);
    // Int8 tensor-core matmul (mmq) at decode and prefill row counts, ragged n and m, bias, k of
    // one 256-element step; Q8_0 with k not a multiple of 256 falls back to dequantize + cuBLAS.
    for (TensorType t : {TensorType::Q8_0, TensorType::Q4_K, TensorType::Q6_K}) {
      check_matmul(p, t, 2048, 1000, {2, 8, 32, 128, 512}, false);
      check_matmul(p, t, 256, 77, {3, 37, 200}, true);
      p.cpu.release_scratch();
      p.gpu.release_scratch();
    }
    for (TensorType t : {TensorType::Q4_0, TensorType::Q5_0, TensorType::Q5_K}) {
      check_matmul(p, t, 2048, 1000, {2, 32, 512}, false);
      check_matmul(p, t, 256, 77, {37}, true);
      p.cpu.release_scratch();
      p.gpu.release_scratch();
    }
    check_matmul(p, TensorType::Q8_0, 1056, 300, {16}, false);
    check_gemv_mma_shapes(p);
    // Batch-1 GEMV takes 4 / 2 / 1 output rows per warp by output size; ragged ends.
    check_matmul(p, TensorType::Q4_K, 1024, 4098, {1}, false);
    for (TensorType t : {TensorType::Q4_K, TensorType::Q6_K}) {  // re-laid rows that end in a short group
      check_matmul(p, t, 1280, 1000, {1, 2, 40}, true);
    }
    check_matmul(p, TensorType::Q6_K, 1024, 2049, {1}, true);
    check_matmul(p, TensorType::BF16, 1024, 4103, {1}, false);
    check_matmul(p, TensorType::Q8_0, 1024, 3001, {1}, false);
    check_matmul(p, TensorType::F32, 172, 64, {1, 7, 19}, true);  // a width that takes the scalar path
    check_matmul(p, TensorType::F16, 172, 64, {2, 19}, false);
    for (TensorType t : {TensorType::BF16, TensorType::F16, TensorType::Q8_0, TensorType::Q4_K, TensorType::Q6_K,
                         TensorType::Q5_K, TensorType::Q4_0, TensorType::F32}) {
      check_batch_invariance(p, t, 4096, 1024);
    }
    check_rows_mma_all(p);
    check_det16_all(p);
    check_dequant_ahead(p);
    check_attention_q8_copy(TensorType::F16, 600);
    check_attention_q8_copy(TensorType::BF16, 600);
    check_attention_q8_copy(TensorType::F16, 3000);
    check_embed_all(p);
    check_rms_norm(p, 37, 4096, 4096, false);
    check_rms_norm(p, 37, 4096, 4096, true);
    check_rms_norm(p, 37, 32 * 128, 128, true);
    backend::RopeConfig rc;
    rc.dims = 128;
    rc.base = 500000.0f;
    check_rope(p, rc, "interleaved", 128, 32);
    rc.order = backend::RopeOrder::Halves;
    check_rope(p, rc, "halves", 128, 32);
    rc.scaling = backend::RopeScaling::Yarn;
    rc.factor = 4.0f;
    rc.original_context = 8192;
    check_rope(p, rc, "halves yarn x4", 128, 32);
    rc = {};
    rc.dims = 128;
    rc.base = 500000.0f;
    rc.scaling = backend::RopeScaling::Linear;
    rc.factor = 2.0f;
    for (int i = 0; i < 64; ++i) rc.freq_factors.push_back(1.0f + i * 0.1f);
    check_rope(p, rc, "interleaved linear x2 + freq factors", 128, 8);
    rc = {};
    rc.dims = 32;
    rc.order = backend::RopeOrder::Halves;
    check_rope(p, rc, "halves partial 32 of 64", 64, 16);
    check_elementwise(p);
    check_sampling(p);
    p.cpu.release_scratch();
    p.gpu.release_scratch();
    check_fused(p);
    check_rows_fused(p);
    check_layer_kernel(p);
    check_mma_stage_x(p);
    check_bf16_rows(p);
    check_dense_copies(p);
    check_attention_all(p);
    check_rope_attention_all(p);
  }
  if (bench) {
    const double bw = bench_copy();
    const bool b1 = g_batch1_only || g_long_only;
    const bool ops = !b1 && !g_skip_op_bench;
    const double tflops = !b1 && !g_gemv_only ? bench_gemm() : 0.0;
    if (ops && !g_gemv_only) bench_attention(bw);
    if (ops && std::getenv("VELLUM_BENCH_MMA_ONLY") == nullptr) bench_gemv(bw);  // round 41: the rows kernels alone
    if (ops) bench_gemv_mma(bw);
    if (g_mmq_bench) bench_mmq(bw, tflops);
    if (!b1 && !g_gemv_only && !models.empty()) bench_prefill_gemms(tflops);
    for (const auto& m : models) bench_model(m, bw, tflops);
  }
  int failed = 0;
  std::printf("\n%-60s %10s %8s  %s\n", "check", "error", "bound", "result");
  for (const Row& r : g_rows) {
    std::printf("%-60s %10.2e %8.0e  %s %s\n", r.name.c_str(), r.err, r.bound, r.pass ? "PASS" : "FAIL", r.note.c_str());
    failed += r.pass ? 0 : 1;
  }
  for (const auto& b : g_bench) std::printf("%s\n", b.c_str());
  std::printf("%zu checks, %d failed\n", g_rows.size(), failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vellum_cuda_check: %s\n", e.what());
    return 2;
  }
}
