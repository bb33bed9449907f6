#include "backend/cpu/cpu_matmul.h"

#include <algorithm>
#include <atomic>

#include "backend/cpu/matmul_kernels.h"
#include "core/error.h"

namespace vellum::backend::cpu {
namespace {

// Weight rows per block: the block is reused for every tile of token rows, so it should fit in L1/L2
// (16 rows of 4864 F16 weights are 156 KB; of Q8_0 83 KB).
constexpr int64_t kWeightBlock = 16;
// Below this many multiply-adds a fork costs more than it saves: one thread does it all.
constexpr int64_t kMinParallelMacs = int64_t(1) << 16;
// Activation bytes of one chunk of token rows (see run): about half of a 2 MB L2.
constexpr int64_t kActivationChunkBytes = int64_t(1) << 20;

}  // namespace

bool CpuMatmul::supported(TensorType type, int64_t cols) {
  const MatmulKernel k = scalar_kernel(type);
  return k.fn != nullptr && cols % k.k_multiple == 0;
}

void CpuMatmul::run(ThreadPool& pool, const Weight& w, const Tensor& x, Tensor out, const float* bias, IsaLevel level) {
  const MatmulKernel kernel = kernel_for(w.type, level);
  if (kernel.fn == nullptr || w.cols % kernel.k_multiple != 0) {
    throw_error("matmul: no CPU kernel for {} weights of {} columns", tensor_type_name(w.type), w.cols);
  }
  if (x.cols != w.cols) throw_error("matmul {}: input has {} columns, weight {}", w.name, x.cols, w.cols);
  const int64_t k = w.cols, rows = x.rows;
  ActRows act{x.data, x.cols, {}};
  if (kernel.q8_activations) {
    act_.resize(rows, k, kernel.q8_records);
    pool.parallel_for(rows, [&](int64_t begin, int64_t end, unsigned) {
      for (int64_t r = begin; r < end; ++r) act_.quantize_row(r, x.data + r * x.cols, level);
    });
    act.q8 = act_.view();
  }
  const size_t wbytes = row_bytes(w.type, static_cast<uint64_t>(k));
  const auto* wdata = static_cast<const uint8_t*>(w.data);
  const int tile = kernel.tile_rows;
  // Token rows are taken in chunks whose activations (f32 rows, or Q8 rows + records) stay in L2
  // while every weight block of the matrix passes over them; a chunk is a multiple of 8 rows so
  // that tiles still start at multiples of 8 (the records' grouping).
  const int64_t act_row_bytes = kernel.q8_activations ? (kernel.q8_records ? act_.view().pairs * kRecordBytes : k + k / 8)
                                                      : k * int64_t(sizeof(float));
  const int64_t chunk = std::max<int64_t>(8, kActivationChunkBytes / std::max<int64_t>(1, act_row_bytes) / 8 * 8);
  const int64_t n_chunks = (rows + chunk - 1) / chunk, n_blocks = (w.rows + kWeightBlock - 1) / kWeightBlock;
  // Work units (row chunk, weight block), chunk-major, handed out dynamically: on a shared machine
  // a preempted thread delays only its current unit, not a fixed half of the matmul. Which thread
  // computes a unit does not change its bits (one kernel call per output, fixed order).
  auto do_unit = [&](int64_t u) {
    const int64_t r_begin = (u / n_blocks) * chunk, r_end = std::min(rows, r_begin + chunk);
    const int64_t o0 = (u % n_blocks) * kWeightBlock, o1 = std::min(w.rows, o0 + kWeightBlock);
    for (int64_t r = r_begin; r < r_end; r += tile) {
      const int nr = static_cast<int>(std::min<int64_t>(tile, r_end - r));
      int64_t o = o0;
      if (kernel.fn2 != nullptr) {
        for (; o + kernel.wide <= o1; o += kernel.wide) {
          kernel.fn2(wdata + static_cast<size_t>(o) * wbytes, wbytes, act, r, nr, k, out.data + r * out.cols + o, out.cols);
        }
      }
      for (; o < o1; ++o) {
        kernel.fn(wdata + static_cast<size_t>(o) * wbytes, act, r, nr, k, out.data + r * out.cols + o, out.cols);
      }
      if (bias != nullptr) {
        for (int64_t rr = r; rr < r + nr; ++rr) {
          for (int64_t oo = o0; oo < o1; ++oo) out.data[rr * out.cols + oo] += bias[oo];
        }
      }
    }
  };
  const int64_t units = n_chunks * n_blocks;
  if (rows * k * w.rows < kMinParallelMacs || pool.size() == 1) {
    for (int64_t u = 0; u < units; ++u) do_unit(u);
    return;
  }
  std::atomic<int64_t> next{0};
  pool.parallel_for(pool.size(), [&](int64_t, int64_t, unsigned) {
    for (int64_t u; (u = next.fetch_add(1, std::memory_order_relaxed)) < units;) do_unit(u);
  });
}

}  // namespace vellum::backend::cpu
