// vellum bench-serve --url URL [--workload fixed|shared-prefix|long-prompt] …: a load generator for any
// OpenAI-compatible server (vellum serve, llama-server, vLLM). Streams /v1/completions with ignore_eos,
// times every chunk and reports TTFT, ITL, E2E percentiles, output tok/s, req/s and the worst decode gap.
// It sends only to the URL given and stops by itself (--num-requests, --max-duration).

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "bench/progress.h"
#include "bench/prompt_builder.h"
#include "bench/serve_report.h"
#include "bench/sse_client.h"
#include "bench/workload.h"
#include "cli/command.h"
#include "core/error.h"

namespace vellum::cli {
namespace {

struct ServeOptions {
  std::string url, model;
  bench::WorkloadSpec spec;
  uint32_t max_concurrency = 0;  // 0: --clients for shared-prefix, unlimited otherwise
  double max_duration_s = 300;
  bool json = false, progress = false;
};

void bench_serve(const ServeOptions& o) {
  o.spec.validate();
  if (!(o.max_duration_s > 0)) throw_error("--max-duration must be positive");
  const std::string base = bench::normalize_base_url(o.url);
  bench::PromptBuilder builder(base, o.model);
  const auto plan = bench::plan_workload(o.spec, builder);
  std::fprintf(stderr, "bench-serve: %zu requests to %s; prompt lengths: %s\n", plan.size(), base.c_str(),
               builder.method().c_str());
  uint32_t limit = o.max_concurrency;
  if (limit == 0) limit = o.spec.kind == "shared-prefix" ? o.spec.clients : static_cast<uint32_t>(plan.size());

  const auto start = bench::Clock::now();
  const auto deadline = start + std::chrono::duration_cast<bench::Clock::duration>(std::chrono::duration<double>(o.max_duration_s));
  std::vector<bench::CompletionTiming> timings(plan.size());
  std::vector<bool> issued(plan.size(), false);
  std::mutex mutex;
  std::condition_variable cv;
  uint32_t in_flight = 0;
  size_t finished = 0;
  uint32_t steady_streaming = 0, steady_done = 0;  // long-prompt: decoders past their first token, finished
  const uint32_t steady_total = o.spec.kind == "long-prompt" ? o.spec.clients : 0;
  bool overlapped = true;  // long-prompt: every steady decoder was still running when the long prompt was sent
  bench::ProgressBar bar(plan.size(), o.progress || bench::ProgressBar::stderr_is_tty());
  std::vector<std::thread> workers;
  for (size_t i = 0; i < plan.size(); ++i) {
    std::unique_lock lock(mutex);
    auto from = start;
    if (plan[i].group == "long") {
      // Inject among decoders that are really decoding: after each has streamed its first token.
      cv.wait_until(lock, deadline, [&] { return steady_streaming >= steady_total; });
      from = bench::Clock::now();
    }
    const auto at = from + std::chrono::duration_cast<bench::Clock::duration>(std::chrono::duration<double>(plan[i].at_s));
    // Wait for the arrival time and a free slot, but never past the deadline.
    cv.wait_until(lock, std::min(at, deadline), [&] { return false; });
    cv.wait_until(lock, deadline, [&] { return in_flight < limit; });
    if (bench::Clock::now() >= deadline) break;
    ++in_flight;
    issued[i] = true;
    if (plan[i].group == "long" && steady_done > 0) overlapped = false;
    workers.emplace_back([&, i] {
      bench::CompletionRequest req;
      req.model = o.model;
      req.prompt = plan[i].prompt;
      req.max_tokens = plan[i].max_tokens;
      const bool steady = plan[i].group == "steady";
      auto t = bench::stream_completion(base, req, deadline, [&, steady] {
        if (!steady) return;
        std::lock_guard g(mutex);
        ++steady_streaming;
        cv.notify_all();
      });
      std::lock_guard g(mutex);
      if (steady) ++steady_done, steady_streaming += t.chunks.empty();  // a failed decoder never streams
      timings[i] = std::move(t);
      --in_flight;
      bar.update(++finished);
      cv.notify_all();
    });
  }
  for (auto& w : workers) w.join();
  bar.finish();
  auto last = start;
  std::vector<bench::CompletionTiming> done, steady, longp;
  size_t not_issued = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    if (!issued[i]) {
      ++not_issued;
      continue;
    }
    last = std::max(last, timings[i].done);
    done.push_back(timings[i]);
    (plan[i].group == "long" ? longp : steady).push_back(timings[i]);
  }
  const double wall = std::chrono::duration<double>(last - start).count();
  const auto report = bench::make_report(done, wall);
  nlohmann::json j = bench::to_json(report);
  j["url"] = base;
  j["workload"] = o.spec.kind;
  j["prompt_lengths"] = builder.method();
  j["not_issued_before_deadline"] = not_issued;
  j["config"] = {{"num_requests", o.spec.num_requests}, {"input_len", o.spec.input_len}, {"output_len", o.spec.output_len},
                 {"prefix_len", o.spec.prefix_len},     {"clients", o.spec.clients},     {"long_len", o.spec.long_len},
                 {"rate", o.spec.rate},                 {"arrivals", o.spec.arrivals},   {"max_concurrency", limit}};
  if (o.spec.kind == "long-prompt") {
    // The question this workload asks: how long did the steady decoders stall while the long prompt ran?
    j["steady"] = bench::to_json(bench::make_report(steady, wall));
    j["long"] = bench::to_json(bench::make_report(longp, wall));
    j["overlapped"] = overlapped;
  }
  if (o.json) {
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("bench-serve %s on %s (prompt lengths: %s)\n%s", o.spec.kind.c_str(), base.c_str(),
                builder.method().c_str(), bench::to_text(report).c_str());
    if (o.spec.kind == "long-prompt")
      std::printf("steady decoders' worst gap: %.2f ms; long prompt TTFT: %.2f ms\n",
                  j["steady"]["worst_decode_gap_ms"].get<double>(), j["long"]["ttft_ms"]["max"].get<double>());
    if (o.spec.kind == "long-prompt" && !overlapped)
      std::printf("warning: a steady decoder finished before the long prompt was sent; raise --output-len\n");
    if (not_issued) std::printf("%zu requests not sent before --max-duration\n", not_issued);
  }
  std::fflush(stdout);
  if (report.completed == 0) throw_error("no request completed ({})", report.errors.empty() ? "none sent" : report.errors.front());
}

const CommandRegistration registration("", [](CLI::App& parent) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* cmd = parent.add_subcommand("bench-serve", "Load-test an OpenAI-compatible server (streams /v1/completions)");
  cmd->add_option("--url", o->url, "Server root, e.g. http://127.0.0.1:8080")->required();
  cmd->add_option("--model", o->model, "Model name to send (default: none, for single-model servers)");
  auto& s = o->spec;
  cmd->add_option("--workload", s.kind, "fixed | shared-prefix | long-prompt")->capture_default_str();
  cmd->add_option("--num-requests", s.num_requests, "Requests to send (fixed, shared-prefix)")->capture_default_str();
  cmd->add_option("--input-len", s.input_len, "Prompt tokens (shared-prefix: the distinct suffix)")->capture_default_str();
  cmd->add_option("--output-len", s.output_len, "Generated tokens per request (ignore_eos)")->capture_default_str();
  cmd->add_option("--prefix-len", s.prefix_len, "shared-prefix: tokens of the common prefix")->capture_default_str();
  cmd->add_option("--clients", s.clients, "shared-prefix: concurrent clients; long-prompt: steady decoders")->capture_default_str();
  cmd->add_option("--long-len", s.long_len, "long-prompt: tokens of the injected prompt")->capture_default_str();
  cmd->add_option("--inject-at", s.inject_at_s, "long-prompt: seconds after every steady decoder streams to inject it")->capture_default_str();
  cmd->add_option("--rate", s.rate, "Arrival rate in requests/s (0: all at once)")->capture_default_str();
  cmd->add_option("--arrivals", s.arrivals, "poisson | staggered")->capture_default_str();
  cmd->add_option("--seed", s.seed, "Seed of arrivals and prompt texts")->capture_default_str();
  cmd->add_option("--max-concurrency", o->max_concurrency, "Requests in flight at most (0: --clients for shared-prefix, else no limit)");
  cmd->add_option("--max-duration", o->max_duration_s, "Stop after this many seconds")->capture_default_str();
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->add_flag("--progress", o->progress, "Show the progress bar even when stderr is not a terminal");
  cmd->callback([o] { bench_serve(*o); });
});

}  // namespace
}  // namespace vellum::cli
