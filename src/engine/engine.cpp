#include "engine/engine.h"

#include <chrono>

#include "core/error.h"

namespace vellum::engine {
namespace {

// The last event of a branch that ends without output (refused, or aborted at shutdown).
StreamEvent final_event(uint32_t index, FinishReason reason, std::string error = {}) {
  StreamEvent e;
  e.index = index;
  e.finish = reason;
  e.error = std::move(error);
  return e;
}

}  // namespace

void RequestHandle::push(StreamEvent event) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (event.finish != FinishReason::None && open_branches_ > 0) --open_branches_;
    events_.push_back(std::move(event));
  }
  cv_.notify_all();
}

std::optional<StreamEvent> RequestHandle::next() {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return !events_.empty() || open_branches_ == 0; });
  if (events_.empty()) return std::nullopt;
  StreamEvent e = std::move(events_.front());
  events_.pop_front();
  return e;
}

std::optional<StreamEvent> RequestHandle::next_for(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!cv_.wait_for(lock, timeout, [&] { return !events_.empty() || open_branches_ == 0; })) return std::nullopt;
  if (events_.empty()) return std::nullopt;
  StreamEvent e = std::move(events_.front());
  events_.pop_front();
  return e;
}

bool RequestHandle::done() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return open_branches_ == 0 && events_.empty();
}

Engine::Engine(model::Transformer& model, backend::Backend& backend, const EngineConfig& config,
               tokenizer::Tokenizer tokenizer, std::vector<int32_t> eog_tokens)
    : core_(model, backend, config, std::move(eog_tokens)), tokenizer_(std::move(tokenizer)),
      stats_(core_.kv().stats()), core_stats_(core_.stats()),  // a fresh engine reports its empty pool
      thread_([this] { loop(); }) {}

Engine::~Engine() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::shared_ptr<RequestHandle> Engine::submit(Request request, GenerationOptions options) {
  core_.validate(request);  // immutable state only: safe from this thread
  std::lock_guard<std::mutex> lock(mutex_);
  const RequestId id = next_id_++;
  auto handle = std::make_shared<RequestHandle>(id, request.n);
  incoming_.emplace_back(id, std::move(request), std::move(options), handle);
  cv_.notify_all();
  return handle;
}

std::vector<std::shared_ptr<RequestHandle>> Engine::submit_all(std::vector<Request> requests) {
  for (const Request& r : requests) core_.validate(r);
  std::vector<std::shared_ptr<RequestHandle>> handles;
  std::lock_guard<std::mutex> lock(mutex_);
  for (Request& r : requests) {
    const RequestId id = next_id_++;
    handles.push_back(std::make_shared<RequestHandle>(id, r.n));
    incoming_.emplace_back(id, std::move(r), GenerationOptions{}, handles.back());
  }
  cv_.notify_all();
  return handles;
}

void Engine::cancel(RequestId id) {
  std::lock_guard<std::mutex> lock(mutex_);
  cancels_.push_back(id);
  cv_.notify_all();
}

kv::KvStats Engine::kv_stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

EngineStats Engine::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  EngineStats s = core_stats_;
  s.waiting += static_cast<uint32_t>(incoming_.size());  // submitted, not yet handed to the core
  s.requests_finished += rejected_;
  return s;
}

void Engine::deliver(const RequestUpdate& u) {
  auto it = active_.find(u.id);
  if (it == active_.end()) return;
  Active& a = it->second;
  auto out = a.outputs.find(u.index);
  if (out == a.outputs.end()) {
    out = a.outputs.emplace(u.index, Branch{TextOutput(tokenizer_, a.options.stop, a.options.strip_leading_space), 0}).first;
  }
  Branch& branch = out->second;
  if (branch.text.stopped()) return;  // a stop string ended this branch already (its abort is in flight)
  StreamEvent e;
  e.index = u.index;
  e.finish = u.finish;
  e.error = u.error;
  for (size_t i = 0; i < u.new_tokens.size(); ++i) {
    const int32_t t = u.new_tokens[i];
    e.tokens.push_back(t);
    if (i < u.logprobs.size()) e.logprobs.push_back(u.logprobs[i]);
    ++branch.generated;
    const bool stop_token = u.finish == FinishReason::Stop && i + 1 == u.new_tokens.size();
    if (stop_token) break;  // an end-of-generation or stop token has no text
    // Like stop ids, stop strings cannot end a completion shorter than min_tokens (vLLM's rule).
    const auto d = branch.text.push(t, branch.generated >= a.min_tokens);
    e.text += d.text;
    if (d.stopped) {  // a stop string: this branch ends here
      e.finish = FinishReason::Stop;
      core_.abort_branch(u.id, u.index);
      break;
    }
  }
  if (e.finish != FinishReason::None) {
    if (!branch.text.stopped()) e.text += branch.text.finish();
    e.prompt_tokens = static_cast<uint32_t>(a.prompt_tokens);
    e.cached_tokens = u.cached_tokens;
    e.completion_tokens = branch.generated;
  }
  a.handle->push(std::move(e));
}

void Engine::loop() {
  for (;;) {
    decltype(incoming_) incoming;
    std::vector<RequestId> cancels;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return stop_ || !incoming_.empty() || !cancels_.empty() || core_.has_work(); });
      if (stop_) break;
      incoming.swap(incoming_);
      cancels.swap(cancels_);
    }
    for (auto& [id, request, options, handle] : incoming) {
      const uint32_t n = request.n;
      try {
        const size_t prompt_tokens = request.prompt.size();
        const uint32_t min_tokens = request.min_tokens;
        core_.add_request(std::move(request), id);
        active_.emplace(id, Active{handle, {}, std::move(options), prompt_tokens, min_tokens});
      } catch (const Error& e) {
        ++rejected_;
        for (uint32_t i = 0; i < n; ++i) handle->push(final_event(i, FinishReason::Error, e.what()));
      }
    }
    for (RequestId id : cancels) core_.abort(id);
    const std::vector<RequestUpdate> updates = core_.step();
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& u : updates) deliver(u);
    deliver_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Forget requests whose every branch has finished.
    for (auto it = active_.begin(); it != active_.end();) {
      bool open = false;
      {
        std::lock_guard<std::mutex> lock(it->second.handle->mutex_);
        open = it->second.handle->open_branches_ > 0;
      }
      it = open ? std::next(it) : active_.erase(it);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    core_stats_ = core_.stats();
    core_stats_.time.deliver = deliver_seconds_;
    core_stats_.time.elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    stats_ = core_stats_.kv;
  }
  // Shutdown: everything still open ends aborted.
  for (auto& [id, a] : active_) {
    uint32_t open;
    {
      std::lock_guard<std::mutex> lock(a.handle->mutex_);
      open = a.handle->open_branches_;
    }
    for (uint32_t i = 0; i < open; ++i) a.handle->push(final_event(i, FinishReason::Aborted));
  }
}

}  // namespace vellum::engine
