#include "backend/backend.h"

#include <algorithm>

#include "core/error.h"

namespace vellum::backend {

void Backend::argmax_rows(const Tensor& x, std::span<int32_t> out) {
  if (out.size() != static_cast<size_t>(x.rows)) throw_error("argmax_rows: {} outputs for {} rows", out.size(), x.rows);
  std::vector<float> host(x.elements());
  read(x, host.data());
  for (int64_t r = 0; r < x.rows; ++r) {
    const float* row = host.data() + r * x.cols;
    out[static_cast<size_t>(r)] = static_cast<int32_t>(std::max_element(row, row + x.cols) - row);
  }
}

}  // namespace vellum::backend
