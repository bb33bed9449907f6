#pragma once
// Summary statistics of repeated measurements: mean ± sample standard deviation, and percentiles
// (linear interpolation between closest ranks, numpy's default) for latency distributions.

#include <cstddef>
#include <vector>

namespace vellum::bench {

struct Summary {
  double mean = 0, stddev = 0, min = 0, max = 0;
  size_t count = 0;
};

// Sample standard deviation (n - 1); 0 for fewer than two values. An empty input gives all zeros.
Summary summarize(const std::vector<double>& values);

// p in [0, 100]; throws vellum::Error for an empty input or p out of range.
double percentile(std::vector<double> values, double p);

}  // namespace vellum::bench
