#include "backend/backend.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "core/logit_order.h"

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

void Backend::top_k_rows(const Tensor& x, int k, std::span<float> values, std::span<int32_t> ids) {
  if (k < 1 || k > kMaxTopK || k > x.cols) throw_error("top_k_rows: k = {} for rows of {} (1..{})", k, x.cols, kMaxTopK);
  const size_t want = static_cast<size_t>(x.rows) * static_cast<size_t>(k);
  if (values.size() != want || ids.size() != want) {
    throw_error("top_k_rows: {} values and {} ids for {} rows of {}", values.size(), ids.size(), x.rows, k);
  }
  std::vector<float> host(x.elements());
  read(x, host.data());
  std::vector<int32_t> order(static_cast<size_t>(x.cols));
  for (int64_t r = 0; r < x.rows; ++r) {
    const float* row = host.data() + r * x.cols;
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](int32_t a, int32_t b) { return logit_before(row[a], a, row[b], b); });
    for (int j = 0; j < k; ++j) {
      values[static_cast<size_t>(r * k + j)] = row[order[static_cast<size_t>(j)]];
      ids[static_cast<size_t>(r * k + j)] = order[static_cast<size_t>(j)];
    }
  }
}

}  // namespace vellum::backend
