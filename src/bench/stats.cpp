#include "bench/stats.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace vellum::bench {

Summary summarize(const std::vector<double>& v) {
  Summary s;
  s.count = v.size();
  if (v.empty()) return s;
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  if (v.size() > 1) {
    double sq = 0;
    for (double x : v) sq += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(sq / static_cast<double>(v.size() - 1));
  }
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  s.min = *lo;
  s.max = *hi;
  return s;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) throw_error("percentile of no values");
  if (!(p >= 0 && p <= 100)) throw_error("percentile {} is outside [0, 100]", p);
  std::sort(v.begin(), v.end());
  const double rank = p / 100.0 * static_cast<double>(v.size() - 1);
  const size_t i = static_cast<size_t>(std::floor(rank));
  if (i + 1 >= v.size()) return v.back();
  return v[i] + (rank - static_cast<double>(i)) * (v[i + 1] - v[i]);
}

}  // namespace vellum::bench
