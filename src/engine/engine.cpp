#include "engine/engine.h"

#include <chrono>
#include <iterator>

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

bool RequestHandle::enqueue(StreamEvent event) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (event.finish != FinishReason::None && open_branches_ > 0) --open_branches_;
  events_.push_back(std::move(event));
  return waiters_ > 0;
}

std::optional<StreamEvent> RequestHandle::next() {
  std::unique_lock<std::mutex> lock(mutex_);
  ++waiters_;
  cv_.wait(lock, [&] { return !events_.empty() || open_branches_ == 0; });
  --waiters_;
  if (events_.empty()) return std::nullopt;
  StreamEvent e = std::move(events_.front());
  events_.pop_front();
  return e;
}

std::optional<StreamEvent> RequestHandle::next_for(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  ++waiters_;
  const bool ready = cv_.wait_for(lock, timeout, [&] { return !events_.empty() || open_branches_ == 0; });
  --waiters_;
  if (!ready || events_.empty()) return std::nullopt;
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
      waker_([this] { wake_loop(); }), thread_([this] { loop(); }) {}

Engine::~Engine() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  {
    std::lock_guard<std::mutex> lock(wake_mutex_);
    wake_stop_ = true;
  }
  wake_cv_.notify_all();
  waker_.join();  // after the wake-ups the engine thread handed it last
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

bool Engine::deliver(const RequestUpdate& u, Active& a) {
  if (u.index >= a.outputs.size()) a.outputs.resize(u.index + 1);
  std::optional<Branch>& slot = a.outputs[u.index];
  if (!slot) slot.emplace(Branch{TextOutput(tokenizer_, a.options.stop, a.options.strip_leading_space), 0});
  Branch& branch = *slot;
  if (branch.text.stopped()) return false;  // a stop string ended this branch already (its abort is in flight)
  StreamEvent e;
  e.index = u.index;
  e.finish = u.finish;
  e.error = u.error;
  e.tokens.reserve(u.new_tokens.size());
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
    if (a.open_branches > 0) --a.open_branches;  // as the handle counts them
  }
  return a.handle->enqueue(std::move(e));
}

void Engine::wake(std::vector<std::shared_ptr<RequestHandle>>& handles) {
  // A single reader is woken here: the hand-off would cost the engine thread a wake-up as well (of
  // the waker), and the reader a second hop.
  if (handles.size() <= 1) {
    for (auto& h : handles) h->wake();
    handles.clear();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(wake_mutex_);
    if (wake_queue_.empty()) {
      wake_queue_.swap(handles);
    } else {  // the waker is behind: a later step's wake-ups go after the earlier ones
      wake_queue_.insert(wake_queue_.end(), std::make_move_iterator(handles.begin()), std::make_move_iterator(handles.end()));
    }
  }
  handles.clear();
  wake_cv_.notify_one();
}

void Engine::wake_loop() {
  std::vector<std::shared_ptr<RequestHandle>> batch;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(wake_mutex_);
      wake_cv_.wait(lock, [&] { return wake_stop_ || !wake_queue_.empty(); });
      if (wake_queue_.empty()) return;  // stopping, and nothing left to wake
      batch.swap(wake_queue_);
    }
    for (auto& h : batch) h->wake();
    batch.clear();
  }
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
        active_.emplace(id, Active{handle, std::vector<std::optional<Branch>>(n), std::move(options), prompt_tokens,
                                   min_tokens, n, 0});
      } catch (const Error& e) {
        ++rejected_;
        for (uint32_t i = 0; i < n; ++i) handle->push(final_event(i, FinishReason::Error, e.what()));
      }
    }
    for (RequestId id : cancels) core_.abort(id);
    const std::vector<RequestUpdate> updates = core_.step();
    const auto t0 = std::chrono::steady_clock::now();
    ++steps_;
    // Every event of the step is queued before any reader is woken, each reader once (the branches
    // of an n > 1 request come as separate updates).
    std::vector<std::shared_ptr<RequestHandle>> to_wake;
    for (const auto& u : updates) {
      auto it = active_.find(u.id);
      if (it == active_.end()) continue;
      Active& a = it->second;
      if (deliver(u, a) && a.wake_step != steps_) {
        a.wake_step = steps_;
        to_wake.push_back(a.handle);
      }
    }
    wake(to_wake);
    deliver_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Forget requests whose every branch has finished (counted here, so that no handle's lock is
    // taken while its reader, just woken, holds it).
    std::erase_if(active_, [](const auto& entry) { return entry.second.open_branches == 0; });
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
