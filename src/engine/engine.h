#pragma once
// The engine: an EngineCore driven by its own thread. submit() queues a request from any thread and
// returns a handle whose stream yields events (new token ids, a UTF-8-safe text delta, and once per
// branch the finish reason with usage); cancel() aborts a request and frees its blocks at the next
// step. Stop strings are applied here, on text, and may span tokens.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "engine/engine_core.h"
#include "engine/text_output.h"
#include "tokenizer/tokenizer.h"

namespace vellum::engine {

struct StreamEvent {
  uint32_t index = 0;               // branch (choice) of an n > 1 request
  std::vector<int32_t> tokens;      // new token ids
  std::string text;                 // new text (valid UTF-8; stop strings removed)
  FinishReason finish = FinishReason::None;
  std::string error;                // with FinishReason::Error
  uint32_t prompt_tokens = 0, cached_tokens = 0, completion_tokens = 0;  // with a finish
  std::vector<TokenLogprob> logprobs;  // parallel to tokens when the request asked for logprobs
};

struct GenerationOptions {
  std::vector<std::string> stop;     // stop strings
  bool strip_leading_space = false;  // the text starts the document (SentencePiece dummy prefix)
};

// The caller's end of one request. Thread-safe.
class RequestHandle {
 public:
  explicit RequestHandle(RequestId id, uint32_t branches) : id_(id), open_branches_(branches) {}
  RequestId id() const { return id_; }
  // Blocks for the next event; nullopt after every branch has finished and its events were read.
  std::optional<StreamEvent> next();
  // Like next() but gives up after `timeout` (nullopt; check done()).
  std::optional<StreamEvent> next_for(std::chrono::milliseconds timeout);
  bool done() const;

 private:
  friend class Engine;
  // Queues an event without waking the reader. True when a reader is blocked waiting and needs a
  // wake() (which may come later and from another thread: the event is already visible).
  bool enqueue(StreamEvent event);
  void wake() { cv_.notify_all(); }
  void push(StreamEvent event) {
    if (enqueue(std::move(event))) wake();
  }

  const RequestId id_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<StreamEvent> events_;
  uint32_t open_branches_;
  uint32_t waiters_ = 0;  // readers blocked in next()/next_for(): only they need a wake-up
};

class Engine {
 public:
  Engine(model::Transformer& model, backend::Backend& backend, const EngineConfig& config,
         tokenizer::Tokenizer tokenizer, std::vector<int32_t> eog_tokens);
  ~Engine();  // stops the thread; unfinished requests end with FinishReason::Aborted
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Validates (throws vellum::Error for an invalid request) and queues.
  std::shared_ptr<RequestHandle> submit(Request request, GenerationOptions options = {});
  // Validates every request, then queues them all at once, so that the engine's next step sees all
  // of them: the steps' batches then do not depend on when the engine thread woke up (a backend that
  // is not batch invariant gives the same tokens run after run). Nothing is queued if one is invalid.
  std::vector<std::shared_ptr<RequestHandle>> submit_all(std::vector<Request> requests);
  void cancel(RequestId id);

  // Snapshot of the KV statistics (taken between steps).
  kv::KvStats kv_stats() const;
  EngineStats stats() const;

 private:
  struct Branch {
    TextOutput text;
    uint32_t generated = 0;
  };
  struct Active {
    std::shared_ptr<RequestHandle> handle;
    std::vector<std::optional<Branch>> outputs;  // per branch index, made at the branch's first update
    GenerationOptions options;
    size_t prompt_tokens = 0;
    uint32_t min_tokens = 0;
    uint32_t open_branches = 0;  // branches whose finish event has not been pushed yet
    uint64_t wake_step = 0;      // the last step whose wake-ups include this handle
  };
  void loop();
  // Pushes the update's event; true when the handle's reader is waiting and must be woken.
  bool deliver(const RequestUpdate& update, Active& active);
  // Wakes the readers of `handles` (every event is already queued): on the waker thread when there
  // are several, so that the engine thread goes on with the next step.
  void wake(std::vector<std::shared_ptr<RequestHandle>>& handles);
  void wake_loop();

  EngineCore core_;
  tokenizer::Tokenizer tokenizer_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::tuple<RequestId, Request, GenerationOptions, std::shared_ptr<RequestHandle>>> incoming_;
  std::vector<RequestId> cancels_;
  std::unordered_map<RequestId, Active> active_;  // engine thread only
  uint64_t steps_ = 0;                              // engine thread only: steps delivered
  kv::KvStats stats_;
  EngineStats core_stats_;  // snapshot after the last step
  double deliver_seconds_ = 0;  // the engine thread's time in deliver() (EngineStats::time)
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::atomic<uint64_t> rejected_{0};  // requests refused when handed to the core (counted as finished)
  RequestId next_id_ = 1;
  bool stop_ = false;
  // Waking a blocked reader is a futex wake of another thread (the kernel's try_to_wake_up, an IPI to
  // an idle core): microseconds each, ~85% of the engine thread's delivery time at 256 streams. The
  // engine thread queues the events and hands the wake-ups to this thread instead.
  std::mutex wake_mutex_;
  std::condition_variable wake_cv_;
  std::vector<std::shared_ptr<RequestHandle>> wake_queue_;
  bool wake_stop_ = false;
  std::thread waker_;
  std::thread thread_;
};

}  // namespace vellum::engine
