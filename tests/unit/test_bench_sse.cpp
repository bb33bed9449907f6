// The bench-serve SSE parser on byte streams split anywhere, URL checks and the progress bar text.
#include <gtest/gtest.h>

#include "bench/progress.h"
#include "bench/sse_client.h"
#include "bench/workload.h"
#include "core/error.h"

using namespace vellum::bench;

TEST(BenchSse, ParsesDataLinesAcrossAnySplit) {
  const std::string stream =
      ": keep-alive\r\n\r\ndata: {\"a\":1}\r\n\r\nevent: x\ndata:{\"b\":2}\n\ndata: [DONE]\n\n";
  for (size_t split = 0; split <= stream.size(); ++split) {
    std::vector<std::string> got;
    SseParser p([&](const std::string& d) { got.push_back(d); });
    p.feed(stream.data(), split);
    p.feed(stream.data() + split, stream.size() - split);
    EXPECT_EQ(got, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "[DONE]"})) << split;
  }
}

TEST(BenchSse, NormalizesUrls) {
  EXPECT_EQ(normalize_base_url("http://127.0.0.1:8080/"), "http://127.0.0.1:8080");
  EXPECT_EQ(normalize_base_url("http://localhost:8080/v1"), "http://localhost:8080");
  EXPECT_THROW(normalize_base_url("https://example.com"), vellum::Error);
  EXPECT_THROW(normalize_base_url("localhost:8080"), vellum::Error);
  EXPECT_THROW(normalize_base_url("http://h:1/api/x"), vellum::Error);
}

TEST(BenchSse, ArrivalTimes) {
  EXPECT_EQ(arrival_times(3, 0, "poisson", 1), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(arrival_times(3, 2, "staggered", 1), (std::vector<double>{0, 0.5, 1.0}));
  const auto p = arrival_times(2000, 10, "poisson", 7);
  // Exponential gaps of mean 1/rate: the last arrival near (n-1)/rate.
  EXPECT_NEAR(p.back() / 1999.0, 0.1, 0.01);
  for (size_t i = 1; i < p.size(); ++i) EXPECT_GE(p[i], p[i - 1]);
  WorkloadSpec s;
  s.kind = "bogus";
  EXPECT_THROW(s.validate(), vellum::Error);
  s = {};
  s.rate = -1;
  EXPECT_THROW(s.validate(), vellum::Error);
}

TEST(BenchProgress, Render) {
  EXPECT_EQ(ProgressBar::render(3, 12, 8, "b=8"), "[##......] 3/12 b=8");
  EXPECT_EQ(ProgressBar::render(12, 12, 4, ""), "[####] 12/12");
  EXPECT_EQ(ProgressBar::render(0, 0, 2, ""), "[##] 0/0");
}
