#include "bench/offline_run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <thread>

#include "core/error.h"

namespace vellum::bench {
namespace {
using Clock = std::chrono::steady_clock;
double secs(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

engine::StepTimes minus(const engine::StepTimes& a, const engine::StepTimes& b) {
  return {a.schedule - b.schedule, a.forward - b.forward, a.device_wait - b.device_wait, a.sample - b.sample,
          a.deliver - b.deliver, a.elapsed - b.elapsed};
}
}  // namespace

engine::SamplingParams greedy() {
  engine::SamplingParams p;
  p.temperature = 0;
  return p;
}

OfflineResult run_offline(app::LoadedEngine& loaded, const GridPoint& pt, uint64_t salt, uint64_t kv_bytes_per_block,
                          const engine::SamplingParams& sampling) {
  if (uint64_t(pt.prompt) + pt.generate > loaded.context())
    throw_error("-p {} + -n {} exceed the context of {} tokens (give -c)", pt.prompt, pt.generate, loaded.context());
  const uint32_t vocab = loaded.tokenizer().vocab_size();
  std::mt19937_64 rng(salt);
  std::vector<std::shared_ptr<engine::RequestHandle>> handles;
  std::vector<engine::Request> requests(pt.batch);
  for (size_t i = 0; i < requests.size(); ++i) {
    auto& req = requests[i];
    // Random ids (control tokens included, harmless to the forward pass) make every prompt distinct.
    req.prompt.resize(pt.prompt);
    for (auto& t : req.prompt) t = static_cast<int32_t>(rng() % vocab);
    req.max_tokens = pt.generate;
    req.ignore_eos = true;
    req.sampling = sampling;
    req.sampling.seed = sampling.seed + i;
  }
  std::vector<Clock::time_point> first(pt.batch), last(pt.batch);
  std::vector<std::vector<Clock::time_point>> stamps(pt.batch);  // arrival of every token
  std::atomic<uint64_t> peak_blocks{0};
  std::mutex error_mutex;
  std::string error;
  auto note_kv = [&] {
    const uint64_t used = loaded.engine().kv_stats().blocks_used;
    uint64_t seen = peak_blocks.load();
    while (used > seen && !peak_blocks.compare_exchange_weak(seen, used)) {
    }
  };
  // KV use is sampled at every event and, so that a reader descheduled on a busy machine misses no
  // peak, every millisecond by a thread of its own.
  std::atomic<bool> running{true};
  // Engine counters when the last sequence got its first token and when the first one finished:
  // the steady span, in which every sequence decodes.
  std::atomic<uint32_t> firsts{0};
  std::atomic<bool> one_finished{false};
  engine::EngineStats at_steady, at_first_finish;
  std::thread sampler([&] {
    while (running.load()) {
      note_kv();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  const auto start = Clock::now();
  handles = loaded.engine().submit_all(std::move(requests));  // one step sees them all
  std::vector<std::thread> readers;
  for (uint32_t i = 0; i < pt.batch; ++i) {
    readers.emplace_back([&, i] {
      bool got_first = false;
      while (auto e = handles[i]->next()) {
        const auto now = Clock::now();
        if (!got_first && !e->tokens.empty()) {
          first[i] = now, got_first = true;
          if (firsts.fetch_add(1) + 1 == pt.batch) at_steady = loaded.engine().stats();
        }
        last[i] = now;
        stamps[i].insert(stamps[i].end(), e->tokens.size(), now);
        if (e->finish != engine::FinishReason::None && !one_finished.exchange(true)) at_first_finish = loaded.engine().stats();
        note_kv();
        if (e->finish == engine::FinishReason::Error || e->finish == engine::FinishReason::Aborted) {
          std::lock_guard lock(error_mutex);
          error = e->error.empty() ? "request aborted" : e->error;
        }
      }
      if (!got_first) first[i] = last[i] = Clock::now();
    });
  }
  for (auto& t : readers) t.join();
  running = false;
  sampler.join();
  if (!error.empty()) throw_error("bench request failed: {}", error);
  const auto all_first = *std::max_element(first.begin(), first.end());
  const auto end = *std::max_element(last.begin(), last.end());
  OfflineResult r;
  r.total_s = secs(start, end);
  const double prefill_s = std::max(secs(start, all_first), 1e-9);
  r.prefill_tok_s = double(pt.batch) * pt.prompt / prefill_s;
  r.decode_tok_s = double(pt.batch) * pt.generate / std::max(r.total_s, 1e-9);
  // Steady state: every sequence is past its prompt and none has finished. Prompts are prefilled
  // within the step budget (--max-num-batched-tokens), so with many long prompts and few generated
  // tokens the first sequences can finish before the last start: then there is no steady span (0).
  const auto first_end = *std::min_element(last.begin(), last.end());
  uint64_t steady_tokens = 0;
  for (const auto& s : stamps) {
    steady_tokens += std::count_if(s.begin(), s.end(), [&](auto t) { return t > all_first && t <= first_end; });
  }
  const double steady_s = first_end > all_first ? secs(all_first, first_end) : 0;
  r.steady_tok_s = steady_s > 0 ? double(steady_tokens) / steady_s : 0;
  double ttft = 0;
  for (const auto& f : first) ttft += secs(start, f);
  r.ttft_ms = ttft / pt.batch * 1000;
  r.peak_kv_bytes = peak_blocks.load() * kv_bytes_per_block;
  // The profile's span is the engine's own between the two snapshots (a reader thread may take one
  // late on a busy machine, so it covers about the steady span; its steps and times agree).
  if (steady_s > 0 && at_first_finish.steps > at_steady.steps) {
    r.steady_steps = at_first_finish.steps - at_steady.steps;
    r.steady_time = minus(at_first_finish.time, at_steady.time);
  }
  return r;
}

}  // namespace vellum::bench
