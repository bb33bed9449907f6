#include "backend/logit_rows.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
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

int mass_shift(int64_t cols) {
  return std::min(44, 63 - static_cast<int>(std::bit_width(static_cast<uint64_t>(std::max<int64_t>(cols, 1)))));
}

uint64_t mass_of(double weight, int shift) {
  return weight > 0.0 ? static_cast<uint64_t>(std::nearbyint(std::ldexp(weight, shift))) : 0;  // to nearest, ties even
}

uint64_t top_p_target(float top_p, uint64_t mass) {
  return static_cast<uint64_t>(std::ceil(static_cast<double>(top_p) * static_cast<double>(mass)));
}

uint64_t draw_point(double u, uint64_t total) {
  const auto r = static_cast<uint64_t>(std::floor(u * static_cast<double>(total)));
  return r < total ? r : total - 1;
}

namespace {

// The largest logit V such that the candidates (`ids`, reordered here) with logits >= V weigh at
// least `target`; their total must reach it. A weighted quickselect: partition around a pivot value
// into larger, equal and smaller, keep the part where the mass runs out. Linear time, nothing sorted
// but a last short run.
float nucleus_floor(const float* row, const uint64_t* mass, std::vector<int32_t>& ids, uint64_t target) {
  size_t lo = 0, hi = ids.size();
  uint64_t before = 0;  // mass of ids[0, lo): logits above every one in [lo, hi)
  while (hi - lo > 32) {
    const float pivot = row[ids[lo + (hi - lo) / 2]];
    const auto first = ids.begin() + static_cast<ptrdiff_t>(lo), last = ids.begin() + static_cast<ptrdiff_t>(hi);
    const auto eq = std::partition(first, last, [&](int32_t i) { return row[i] > pivot; });
    const auto lt = std::partition(eq, last, [&](int32_t i) { return row[i] == pivot; });
    uint64_t larger = 0, equal = 0;
    for (auto it = first; it != eq; ++it) larger += mass[*it];
    for (auto it = eq; it != lt; ++it) equal += mass[*it];
    if (before + larger >= target) {
      hi = static_cast<size_t>(eq - ids.begin());
    } else if (before + larger + equal >= target) {
      return pivot;
    } else {
      before += larger + equal;
      lo = static_cast<size_t>(lt - ids.begin());
    }
  }
  std::sort(ids.begin() + static_cast<ptrdiff_t>(lo), ids.begin() + static_cast<ptrdiff_t>(hi),
            [&](int32_t a, int32_t b) { return row[a] > row[b]; });
  for (size_t i = lo; i < hi; ++i) {
    before += mass[ids[i]];
    if (before >= target) return row[ids[i]];
  }
  return row[ids[hi - 1]];  // not reached when the candidates weigh at least the target
}

}  // namespace

int32_t draw_of_row(const float* row, int64_t cols, const RowDraw& d, DrawScratch& s) {
  const RowWeights rw = softmax_weights(row, cols, d.temperature, s.w);
  if (!rw.finite) return rw.best;  // no finite logit: nothing to weigh
  const int shift = mass_shift(cols);
  const auto n = static_cast<size_t>(cols);
  s.mass.resize(n);
  // Masses; min-p's cut columns weigh nothing from here on, but count in the row's mass S.
  uint64_t row_mass = 0, kept = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t m = mass_of(s.w[i], shift);
    row_mass += m;
    s.mass[i] = s.w[i] >= d.min_p ? m : 0;
    kept += s.mass[i];
  }
  float floor = -std::numeric_limits<float>::infinity();  // top-p's V: kept columns have logits >= it
  if (d.top_p < 1.0f) {
    const uint64_t target = top_p_target(d.top_p, row_mass);
    if (kept >= target) {
      s.ids.clear();
      for (size_t i = 0; i < n; ++i) {
        if (s.mass[i] > 0) s.ids.push_back(static_cast<int32_t>(i));
      }
      floor = nucleus_floor(row, s.mass.data(), s.ids, target);
      kept = 0;
      for (size_t i = 0; i < n; ++i) kept += row[i] >= floor ? s.mass[i] : 0;
    }
  }
  // kept >= the best column's mass, 2^shift: the best always survives both cuts.
  const uint64_t r = draw_point(d.u, kept);
  uint64_t acc = 0;
  for (size_t i = 0; i < n; ++i) {
    if (row[i] >= floor) acc += s.mass[i];
    if (acc > r) return static_cast<int32_t>(i);
  }
  return rw.best;  // not reached: the running mass ends at kept > r
}

double log_normalizer(const float* row, int64_t cols) {
  double max_logit = -INFINITY;
  for (int64_t i = 0; i < cols; ++i) max_logit = std::max<double>(max_logit, row[i]);
  double sum = 0;
  for (int64_t i = 0; i < cols; ++i) sum += std::exp(static_cast<double>(row[i]) - max_logit);
  return max_logit + std::log(sum);
}

float logprob_of(float value, double log_z) { return static_cast<float>(static_cast<double>(value) - log_z); }

void check_top_k_args(int64_t rows, int64_t cols, int k, int max_k, size_t values, size_t ids) {
  if (k < 1 || k > max_k || k > cols) throw_error("top_k_rows: k = {} for rows of {} (1..{})", k, cols, max_k);
  const size_t want = static_cast<size_t>(rows) * static_cast<size_t>(k);
  if (values != want || ids != want) throw_error("top_k_rows: {} values and {} ids for {} rows of {}", values, ids, rows, k);
}

void check_pick_args(int64_t rows, int64_t cols, std::span<const int32_t> picks, size_t out) {
  if (picks.size() != static_cast<size_t>(rows) || out != static_cast<size_t>(rows)) {
    throw_error("pick_values: {} columns and {} outputs for {} rows", picks.size(), out, rows);
  }
  for (size_t r = 0; r < picks.size(); ++r) {
    if (picks[r] < 0 || picks[r] >= cols) throw_error("pick_values: column {} of row {} outside [0, {})", picks[r], r, cols);
  }
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
    if (!(d.min_p >= 0.0f && d.min_p <= 1.0f)) throw_error("draw_rows: row {} has min_p {} (must be in [0, 1])", r, d.min_p);
    if (!(d.top_p > 0.0f && d.top_p <= 1.0f)) throw_error("draw_rows: row {} has top_p {} (must be in (0, 1])", r, d.top_p);
  }
}

}  // namespace vellum::backend
