#pragma once
// The engine: an EngineCore driven by its own thread. submit() queues a request from any thread and
// returns a handle whose stream yields events (new token ids, a UTF-8-safe text delta, and once per
// branch the finish reason with usage); cancel() aborts a request and frees its blocks at the next
// step. Stop strings are applied here, on text, and may span tokens.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

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
  void push(StreamEvent event);

  const RequestId id_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<StreamEvent> events_;
  uint32_t open_branches_;
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
    std::map<uint32_t, Branch> outputs;  // per branch
    GenerationOptions options;
    size_t prompt_tokens = 0;
    uint32_t min_tokens = 0;
  };
  void loop();
  void deliver(const RequestUpdate& update);

  EngineCore core_;
  tokenizer::Tokenizer tokenizer_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::tuple<RequestId, Request, GenerationOptions, std::shared_ptr<RequestHandle>>> incoming_;
  std::vector<RequestId> cancels_;
  std::map<RequestId, Active> active_;  // engine thread only
  kv::KvStats stats_;
  EngineStats core_stats_;  // snapshot after the last step
  double deliver_seconds_ = 0;  // the engine thread's time in deliver() (EngineStats::time)
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::atomic<uint64_t> rejected_{0};  // requests refused when handed to the core (counted as finished)
  RequestId next_id_ = 1;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace vellum::engine
