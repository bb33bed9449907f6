#include "backend/logit_rows.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "core/logit_order.h"

namespace vellum::backend {

int32_t first_max(const float* row, int64_t cols) {
  // std::max_element's answer without its serial chain of compares: the first element equal to the
  // largest (NaNs never compare greater, -0 equals +0; a NaN first element makes the largest NaN,
  // which nothing equals: 0, as std::max_element keeps it). The maximum is taken over 8 independent
  // lanes, which the compiler turns into vector max instructions.
  if (cols <= 0) return 0;
  constexpr int kLanes = 8;
  float lane[kLanes];
  for (float& l : lane) l = row[0];
  int64_t i = 0;
  for (; i + kLanes <= cols; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lane[j] = row[i + j] > lane[j] ? row[i + j] : lane[j];
  }
  for (; i < cols; ++i) lane[0] = row[i] > lane[0] ? row[i] : lane[0];
  float m = lane[0];
  for (int j = 1; j < kLanes; ++j) m = lane[j] > m ? lane[j] : m;
  for (i = 0; i < cols; ++i) {
    if (row[i] == m) return static_cast<int32_t>(i);
  }
  return 0;
}

void top_k_of_row(const float* row, int64_t cols, int k, float* values, int32_t* ids, std::vector<int32_t>& order) {
  order.resize(static_cast<size_t>(cols));
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int32_t a, int32_t b) { return logit_before(row[a], a, row[b], b); });
  for (int j = 0; j < k; ++j) {
    ids[j] = order[static_cast<size_t>(j)];
    values[j] = row[ids[j]];
  }
}

RowWeights softmax_weights(const float* row, int64_t cols, float temperature, std::vector<double>& w) {
  RowWeights r;
  if (cols <= 0) return r;
  for (int32_t i = 1; i < static_cast<int32_t>(cols); ++i) r.best = logit_before(row[i], i, row[r.best], r.best) ? i : r.best;
  const float max_logit = row[r.best];
  if (!std::isfinite(max_logit)) return r;  // no finite logit: nothing to weigh
  r.finite = true;
  w.resize(static_cast<size_t>(cols));
  for (size_t i = 0; i < w.size(); ++i) {
    w[i] = std::isnan(row[i]) ? 0.0 : std::exp((row[i] - static_cast<double>(max_logit)) / temperature);
    r.sum += w[i];
  }
  return r;
}

int32_t draw_of_row(const float* row, int64_t cols, float temperature, double u, std::vector<double>& w) {
  const RowWeights rw = softmax_weights(row, cols, temperature, w);
  if (!rw.finite) return rw.best;
  const double r = u * rw.sum;
  double acc = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    acc += w[i];
    if (r < acc) return static_cast<int32_t>(i);
  }
  return rw.best;
}

void check_top_k_args(int64_t rows, int64_t cols, int k, int max_k, size_t values, size_t ids) {
  if (k < 1 || k > max_k || k > cols) throw_error("top_k_rows: k = {} for rows of {} (1..{})", k, cols, max_k);
  const size_t want = static_cast<size_t>(rows) * static_cast<size_t>(k);
  if (values != want || ids != want) throw_error("top_k_rows: {} values and {} ids for {} rows of {}", values, ids, rows, k);
}

void check_draw_args(int64_t rows, std::span<const RowDraw> draws, size_t out) {
  if (draws.size() != static_cast<size_t>(rows) || out != static_cast<size_t>(rows)) {
    throw_error("draw_rows: {} draws and {} outputs for {} rows", draws.size(), out, rows);
  }
  for (size_t r = 0; r < draws.size(); ++r) {
    const RowDraw& d = draws[r];
    if (!(d.temperature > 0.0f) || !std::isfinite(d.temperature)) {
      throw_error("draw_rows: row {} has temperature {} (must be finite and above 0)", r, d.temperature);
    }
    if (!(d.u >= 0.0 && d.u < 1.0)) throw_error("draw_rows: row {} has u = {} (must be in [0, 1))", r, d.u);
  }
}

}  // namespace vellum::backend
