#include "backend/cpu/cpu_matmul.h"

#include <algorithm>

#include "backend/cpu/matmul_kernels.h"
#include "core/error.h"

namespace vellum::backend::cpu {
namespace {

// Weight rows per block: the block is reused for every tile of token rows, so it should fit in L1/L2
// (16 rows of 4864 F16 weights are 156 KB; of Q8_0 83 KB).
constexpr int64_t kWeightBlock = 16;
// Below this many multiply-adds a fork costs more than it saves: one thread does it all.
constexpr int64_t kMinParallelMacs = int64_t(1) << 16;

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
  const int64_t grain = rows * k * w.rows < kMinParallelMacs ? w.rows : kWeightBlock;
  pool.parallel_for(w.rows, [&](int64_t begin, int64_t end, unsigned) {
    for (int64_t o0 = begin; o0 < end; o0 += kWeightBlock) {
      const int64_t o1 = std::min(end, o0 + kWeightBlock);
      for (int64_t r = 0; r < rows; r += tile) {
        const int nr = static_cast<int>(std::min<int64_t>(tile, rows - r));
        int64_t o = o0;
        if (kernel.fn2 != nullptr) {
          for (; o + 2 <= o1; o += 2) {
            kernel.fn2(wdata + static_cast<size_t>(o) * wbytes, wbytes, act, r, nr, k, out.data + r * out.cols + o, out.cols);
          }
        }
        for (; o < o1; ++o) {
          kernel.fn(wdata + static_cast<size_t>(o) * wbytes, act, r, nr, k, out.data + r * out.cols + o, out.cols);
        }
      }
      if (bias != nullptr) {
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t o = o0; o < o1; ++o) out.data[r * out.cols + o] += bias[o];
        }
      }
    }
  }, grain);
}

}  // namespace vellum::backend::cpu
