#include "backend/cpu/cpu_matmul.h"

#include <algorithm>
#include <atomic>
#include <vector>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/matmul_kernels.h"
#include "core/error.h"

namespace vellum::backend::cpu {
namespace {

// Weight rows per block: the block is reused for every tile of token rows, so it should fit in L1/L2
// (16 rows of 4864 F16 weights are 156 KB; of Q8_0 83 KB).
constexpr int64_t kWeightBlock = 16;
// At one token row (decode) a unit is pure weight streaming: bigger units spend less on handing
// them out (a shared atomic counter) per byte. Units only partition the outputs, so the bits are
// those of any other partition.
constexpr int64_t kDecodeWeightBlock = 64;
// Below this many multiply-adds a fork costs more than it saves: one thread does it all.
constexpr int64_t kMinParallelMacs = int64_t(1) << 16;
// Activation bytes of one chunk of token rows (see run): about half of a 2 MB L2.
constexpr int64_t kActivationChunkBytes = int64_t(1) << 20;
// Token rows from which a block of weight rows is decoded once for all tiles (MatmulKernel::predecode).
constexpr int64_t kPredecodeMinRows = 16;
struct alignas(64) CacheLine {
  uint8_t bytes[64];
};

}  // namespace

bool CpuMatmul::supported(TensorType type, int64_t cols) {
  const MatmulKernel k = scalar_kernel(type);
  return k.fn != nullptr && cols % k.k_multiple == 0;
}

bool CpuMatmul::can_share(std::span<const Weight* const> ws, IsaLevel level) {
  if (ws.empty()) return false;
  const MatmulKernel k0 = kernel_for(ws[0]->type, level);
  for (const Weight* w : ws) {
    const MatmulKernel k = kernel_for(w->type, level);
    if (k.fn == nullptr || w->cols % k.k_multiple != 0 || w->cols != ws[0]->cols) return false;
    if (k.q8_activations != k0.q8_activations || k.q8_records != k0.q8_records) return false;
  }
  return true;
}

void CpuMatmul::run(ThreadPool& pool, const Weight& w, const Tensor& x, Tensor out, const float* bias, IsaLevel level) {
  const MatmulJob job{&w, out, bias};
  run_many(pool, x, std::span<const MatmulJob>(&job, 1), level);
}

void CpuMatmul::run_many(ThreadPool& pool, const Tensor& x, std::span<const MatmulJob> jobs, IsaLevel level,
                         bool swiglu) {
  struct Prepared {
    MatmulKernel kernel;
    const uint8_t* wdata;
    size_t wbytes;
    int64_t n_blocks;
  };
  std::vector<Prepared> prep;
  prep.reserve(jobs.size());
  const int64_t wblock = x.rows == 1 ? kDecodeWeightBlock : kWeightBlock;  // weight rows per unit
  int64_t macs = 0;
  for (const MatmulJob& j : jobs) {
    const Weight& w = *j.w;
    const MatmulKernel kernel = kernel_for(w.type, level);
    if (kernel.fn == nullptr || w.cols % kernel.k_multiple != 0) {
      throw_error("matmul: no CPU kernel for {} weights of {} columns", tensor_type_name(w.type), w.cols);
    }
    if (x.cols != w.cols) throw_error("matmul {}: input has {} columns, weight {}", w.name, x.cols, w.cols);
    if (!prep.empty() && (kernel.q8_activations != prep[0].kernel.q8_activations ||
                          kernel.q8_records != prep[0].kernel.q8_records)) {
      throw_error("matmul {}: activation format differs from {}'s in one dispatch", w.name, jobs[0].w->name);
    }
    prep.push_back({kernel, static_cast<const uint8_t*>(w.data), row_bytes(w.type, static_cast<uint64_t>(w.cols)),
                    (w.rows + wblock - 1) / wblock});
    macs += x.rows * w.cols * w.rows;
  }
  if (swiglu && (jobs.size() != 2 || jobs[0].w->rows != jobs[1].w->rows || jobs[0].bias || jobs[1].bias)) {
    throw_error("matmul_swiglu: gate and up must have the same shape and no bias");
  }
  const MatmulKernel& k0 = prep[0].kernel;
  const int64_t k = x.cols, rows = x.rows;
  ActRows act{x.data, x.cols, {}};
  if (k0.q8_activations) {
    act_.resize(rows, k, k0.q8_records);
    pool.parallel_for(rows, [&](int64_t begin, int64_t end, unsigned) {
      for (int64_t r = begin; r < end; ++r) act_.quantize_row(r, x.data + r * x.cols, level);
    });
    act.q8 = act_.view();
  }
  // Token rows are taken in chunks whose activations (f32 rows, or Q8 rows + records) stay in L2
  // while every weight block of the matrices passes over them; a chunk is a multiple of 8 rows so
  // that tiles still start at multiples of 8 (the records' grouping).
  const int64_t act_row_bytes = k0.q8_activations ? (k0.q8_records ? act_.view().pairs * kRecordBytes : k + k / 8)
                                                  : k * int64_t(sizeof(float));
  const int64_t chunk = std::max<int64_t>(8, kActivationChunkBytes / std::max<int64_t>(1, act_row_bytes) / 8 * 8);
  const int64_t n_chunks = (rows + chunk - 1) / chunk;
  // Blocks of 16 weight rows: job after job (with swiglu, a block of gate and the same block of up).
  std::vector<int64_t> block_start{0};
  for (const Prepared& p : prep) block_start.push_back(block_start.back() + p.n_blocks);
  const int64_t n_blocks = swiglu ? prep[0].n_blocks : block_start.back();

  // Rows [r_begin, r_end) × weight rows [o0, o1) of job j.
  auto do_block = [&](size_t j, int64_t r_begin, int64_t r_end, int64_t o0, int64_t o1) {
    const Prepared& p = prep[j];
    const MatmulKernel& kernel = p.kernel;
    const Tensor& out = jobs[j].out;
    const float* bias = jobs[j].bias;
    const int tile = kernel.tile_rows;
    // With enough token rows, decode the block's weight rows once instead of once per tile.
    const bool pre = kernel.predecode != nullptr && r_end - r_begin >= kPredecodeMinRows;
    const uint8_t* wbase = p.wdata + static_cast<size_t>(o0) * p.wbytes;
    size_t wstride = p.wbytes;
    if (pre) {
      wstride = static_cast<size_t>((k / 32 + 1) / 2 * kernel.pre_pair_bytes);
      thread_local std::vector<CacheLine> buffer;
      buffer.resize((wstride * kWeightBlock + sizeof(CacheLine) - 1) / sizeof(CacheLine));
      auto* dst = reinterpret_cast<uint8_t*>(buffer.data());
      kernel.predecode(wbase, p.wbytes, static_cast<int>(o1 - o0), k, dst);
      wbase = dst;
    }
    const TileFn fn = pre ? kernel.fn_pre : kernel.fn;
    const TileFn2 fn2 = pre ? kernel.fn2_pre : kernel.fn2;
    for (int64_t r = r_begin; r < r_end; r += tile) {
      const int nr = static_cast<int>(std::min<int64_t>(tile, r_end - r));
      int64_t o = o0;
      if (fn2 != nullptr) {
        for (; o + kernel.wide <= o1; o += kernel.wide) {
          fn2(wbase + static_cast<size_t>(o - o0) * wstride, wstride, act, r, nr, k, out.data + r * out.cols + o, out.cols);
        }
      }
      for (; o < o1; ++o) fn(wbase + static_cast<size_t>(o - o0) * wstride, act, r, nr, k, out.data + r * out.cols + o, out.cols);
      if (bias != nullptr) {
        for (int64_t rr = r; rr < r + nr; ++rr) {
          for (int64_t oo = o0; oo < o1; ++oo) out.data[rr * out.cols + oo] += bias[oo];
        }
      }
    }
  };
  // Work units (row chunk, weight block), chunk-major, handed out dynamically: on a shared machine
  // a preempted thread delays only its current unit, not a fixed half of the matmul. Which thread
  // computes a unit does not change its bits (one kernel call per output, fixed order).
  auto do_unit = [&](int64_t u) {
    const int64_t r_begin = (u / n_blocks) * chunk, r_end = std::min(rows, r_begin + chunk);
    const int64_t blk = u % n_blocks;
    if (swiglu) {
      const int64_t o0 = blk * wblock, o1 = std::min(jobs[0].w->rows, o0 + wblock);
      do_block(0, r_begin, r_end, o0, o1);
      do_block(1, r_begin, r_end, o0, o1);
      const Tensor &g = jobs[0].out, &up = jobs[1].out;
      for (int64_t r = r_begin; r < r_end; ++r) {
        swiglu_f32(g.data + r * g.cols + o0, up.data + r * up.cols + o0, g.data + r * g.cols + o0, o1 - o0);
      }
      return;
    }
    const size_t j = static_cast<size_t>(std::upper_bound(block_start.begin(), block_start.end(), blk) - block_start.begin() - 1);
    const int64_t o0 = (blk - block_start[j]) * wblock, o1 = std::min(jobs[j].w->rows, o0 + wblock);
    do_block(j, r_begin, r_end, o0, o1);
  };
  const int64_t units = n_chunks * n_blocks;
  if (macs < kMinParallelMacs || pool.size() == 1) {
    for (int64_t u = 0; u < units; ++u) do_unit(u);
    return;
  }
  std::atomic<int64_t> next{0};
  pool.parallel_for(pool.size(), [&](int64_t, int64_t, unsigned) {
    for (int64_t u; (u = next.fetch_add(1, std::memory_order_relaxed)) < units;) do_unit(u);
  });
}

}  // namespace vellum::backend::cpu
