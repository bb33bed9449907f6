// bench statistics against numpy: np.mean, np.std(ddof=1), np.percentile (linear) of the same values.
#include <gtest/gtest.h>

#include "bench/stats.h"
#include "core/error.h"

using namespace vellum::bench;

namespace {
const std::vector<double> kValues = {12.5, 3.0, 7.25, 100.0, 42.0, 8.0, 15.5};
}

TEST(BenchStats, SummaryMatchesNumpy) {
  const auto s = summarize(kValues);
  EXPECT_NEAR(s.mean, 26.892857142857142, 1e-12);
  EXPECT_NEAR(s.stddev, 34.697459423943286, 1e-12);
  EXPECT_EQ(s.min, 3.0);
  EXPECT_EQ(s.max, 100.0);
  EXPECT_EQ(s.count, 7u);
}

TEST(BenchStats, PercentilesMatchNumpyLinear) {
  EXPECT_DOUBLE_EQ(percentile(kValues, 0), 3.0);
  EXPECT_DOUBLE_EQ(percentile(kValues, 50), 12.5);
  EXPECT_NEAR(percentile(kValues, 90), 65.20000000000002, 1e-9);
  EXPECT_NEAR(percentile(kValues, 99), 96.51999999999997, 1e-9);
  EXPECT_DOUBLE_EQ(percentile(kValues, 100), 100.0);
}

TEST(BenchStats, EdgeCases) {
  EXPECT_EQ(summarize({}).count, 0u);
  EXPECT_EQ(summarize({5.0}).stddev, 0.0);
  EXPECT_EQ(percentile({4.0}, 99), 4.0);
  EXPECT_THROW(percentile({}, 50), vellum::Error);
  EXPECT_THROW(percentile({1.0}, 101), vellum::Error);
  EXPECT_THROW(percentile({1.0}, -1), vellum::Error);
}
