#pragma once
// Server-side metrics and the Prometheus text of GET /metrics. Latencies the engine cannot see
// (time to first token, time between tokens as the client receives them) are measured here, per
// request, into fixed-bucket histograms; queue, token, prefix-cache, KV-block and preemption figures
// come from a fresh engine::EngineStats snapshot at scrape time. Thread-safe.

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace vellum::server {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}
  void observe(double v);
  // Appends the _bucket/_sum/_count lines of `name`.
  void render(std::string& out, const std::string& name, const std::string& help) const;

 private:
  mutable std::mutex mutex_;
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket (not cumulative); the last is +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

class Metrics {
 public:
  Metrics();
  void observe_ttft(double seconds) { ttft_.observe(seconds); }
  void observe_inter_token(double seconds) { itl_.observe(seconds); }
  void request_finished(const char* endpoint, int status);
  void tokens(uint64_t prompt, uint64_t completion) {
    prompt_tokens_ += prompt;
    completion_tokens_ += completion;
  }
  std::atomic<int64_t> in_flight{0};  // generation requests the server is handling

  std::string render(const engine::EngineStats& stats) const;

 private:
  Histogram ttft_, itl_;
  mutable std::mutex mutex_;
  std::vector<std::tuple<std::string, int, uint64_t>> requests_;  // (endpoint, status, count)
  std::atomic<uint64_t> prompt_tokens_{0}, completion_tokens_{0};
};

}  // namespace vellum::server
