#include "bench/serve_report.h"

#include <fmt/format.h>

#include "bench/stats.h"

namespace vellum::bench {
namespace {
double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }
}  // namespace

Percentiles percentiles_of(const std::vector<double>& v) {
  Percentiles p;
  if (v.empty()) return p;
  const auto s = summarize(v);
  p.mean = s.mean;
  p.max = s.max;
  p.count = v.size();
  p.p50 = percentile(v, 50);
  p.p90 = percentile(v, 90);
  p.p99 = percentile(v, 99);
  return p;
}

ServeReport make_report(const std::vector<CompletionTiming>& timings, double wall_s) {
  ServeReport r;
  r.wall_s = wall_s;
  std::vector<double> ttft, itl, e2e;
  for (const auto& t : timings) {
    if (!t.ok) {
      ++r.failed;
      if (r.errors.size() < 5) r.errors.push_back(t.error);
      continue;
    }
    ++r.completed;
    r.output_tokens += t.completion_tokens;
    ttft.push_back(ms(t.first_token - t.sent));
    e2e.push_back(ms(t.done - t.sent));
    for (size_t i = 1; i < t.chunks.size(); ++i) {
      itl.push_back(ms(t.chunks[i] - t.chunks[i - 1]));
      r.worst_gap_ms = std::max(r.worst_gap_ms, itl.back());
    }
  }
  r.ttft_ms = percentiles_of(ttft);
  r.itl_ms = percentiles_of(itl);
  r.e2e_ms = percentiles_of(e2e);
  if (wall_s > 0) {
    r.output_tok_s = double(r.output_tokens) / wall_s;
    r.req_s = double(r.completed) / wall_s;
  }
  return r;
}

nlohmann::json to_json(const ServeReport& r) {
  auto pj = [](const Percentiles& p) {
    return nlohmann::json{{"mean", p.mean}, {"p50", p.p50}, {"p90", p.p90}, {"p99", p.p99}, {"max", p.max}, {"count", p.count}};
  };
  return {{"completed", r.completed}, {"failed", r.failed},         {"wall_s", r.wall_s},
          {"output_tokens", r.output_tokens}, {"output_tok_s", r.output_tok_s}, {"req_s", r.req_s},
          {"worst_decode_gap_ms", r.worst_gap_ms}, {"ttft_ms", pj(r.ttft_ms)}, {"itl_ms", pj(r.itl_ms)},
          {"e2e_ms", pj(r.e2e_ms)}, {"errors", r.errors}};
}

std::string to_text(const ServeReport& r) {
  std::string s = fmt::format("requests: {} completed, {} failed in {:.2f} s ({:.2f} req/s); output {} tokens ({:.1f} tok/s)\n",
                              r.completed, r.failed, r.wall_s, r.req_s, r.output_tokens, r.output_tok_s);
  s += "| metric (ms) |     mean |      p50 |      p90 |      p99 |      max |\n";
  s += "|-------------|----------|----------|----------|----------|----------|\n";
  auto row = [&](const char* name, const Percentiles& p) {
    s += fmt::format("| {:<11} | {:>8.2f} | {:>8.2f} | {:>8.2f} | {:>8.2f} | {:>8.2f} |\n", name, p.mean, p.p50, p.p90, p.p99, p.max);
  };
  row("TTFT", r.ttft_ms);
  row("ITL", r.itl_ms);
  row("E2E", r.e2e_ms);
  s += fmt::format("worst decode gap: {:.2f} ms\n", r.worst_gap_ms);
  for (const auto& e : r.errors) s += "error: " + e + "\n";
  return s;
}

}  // namespace vellum::bench
