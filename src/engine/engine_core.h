#pragma once
// The engine's synchronous core: requests in, one scheduled forward step at a time, token updates
// out. The threaded Engine (submit/cancel/streams) wraps it; tests drive it directly so that every
// step is deterministic and observable.

#include <memory>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"
#include "core/thread_pool.h"
#include "engine/request.h"
#include "engine/scheduler.h"
#include "engine/sequence.h"
#include "kv/kv_manager.h"
#include "model/transformer.h"

namespace vellum::engine {

struct EngineConfig {
  SchedulerConfig scheduler;
  uint32_t block_size = 16;
  uint32_t num_blocks = 0;      // KV pool size in blocks (0: enough for max_seq_len × max_num_seqs)
  uint32_t max_seq_len = 0;     // 0: the model's training context
  bool prefix_caching = true;
  TensorType kv_type = TensorType::F32;  // KV element type (the backend must support it)
  // Greedy and top-k sampled rows reduced on the backend (their first maximum, their top_k best
  // candidates) instead of copied back whole; the same tokens either way (false: for comparisons).
  bool reduce_logits = true;
  // Threads that sample the rows copied back whole, one row each at a time (0: the cores, at most 8;
  // 1: the engine's thread alone). The tokens do not depend on it: each sequence has its own generator.
  unsigned sampling_threads = 0;
};

struct StepStats {
  uint32_t scheduled_tokens = 0;   // tokens the forward pass computed
  uint32_t sequences = 0;
  uint32_t preempted = 0;
};

// Counters for monitoring (the server's /metrics), a snapshot taken between steps. Requests
// are counted once whatever their n; running wins over waiting for a request with both.
// Where the engine thread's time goes, cumulative seconds (steady clock): the step's host work
// around the forward pass, the forward pass itself (host work plus `device_wait`, the part spent
// blocked until the device finished), sampling and accepting tokens, and delivering them to the
// request streams (the threaded Engine only). `vellum bench --step-profile` prints them per step.
struct StepTimes {
  double schedule = 0;     // aborts, scheduling, block copies and building the batch
  double forward = 0;      // Transformer::forward, device wait included
  double device_wait = 0;  // of forward: blocked on the device (Backend::device_wait_seconds)
  double sample = 0;       // drawing and accepting tokens
  double deliver = 0;      // detokenizing and pushing stream events (Engine)
  double elapsed = 0;      // since the Engine started, when the snapshot was taken (Engine)
};

struct EngineStats {
  uint32_t running = 0;                  // requests with a sequence in the scheduler's running set
  uint32_t waiting = 0;                  // requests queued or waiting for admission
  uint64_t requests_finished = 0;
  uint64_t prompt_tokens = 0;            // prompt tokens of admitted requests
  uint64_t cached_prompt_tokens = 0;     // of which served from the prefix cache
  uint64_t generation_tokens = 0;
  uint64_t preemptions = 0;
  uint64_t steps = 0;
  StepTimes time;
  kv::KvStats kv;
};

class EngineCore {
 public:
  // `model` must be bound to `backend`; the core initialises the backend's KV pool.
  EngineCore(model::Transformer& model, backend::Backend& backend, const EngineConfig& config,
             std::vector<int32_t> eog_tokens);

  // Validates and queues a request; throws vellum::Error for an invalid one (empty prompt, a token
  // outside the vocabulary, a prompt that can never fit, bad sampling parameters).
  RequestId add_request(Request request);
  // The same with a caller-chosen id (unique, not 0), for a front end that names requests itself.
  void add_request(Request request, RequestId id);
  // The checks add_request makes; touches only immutable state, so any thread may call it.
  void validate(const Request& request) const;
  // Aborts a request, every branch of it (finished with FinishReason::Aborted at the next step);
  // unknown ids are ignored.
  void abort(RequestId id);
  // Aborts one branch of an n > 1 request.
  void abort_branch(RequestId id, uint32_t index);
  bool has_work() const { return !sequences_.empty(); }

  // One scheduled forward pass; returns what each affected request gained.
  std::vector<RequestUpdate> step();

  const StepStats& last_step() const { return last_; }
  // Counters since construction plus the current running / waiting requests and KV statistics.
  EngineStats stats() const;
  uint64_t total_computed_tokens() const { return total_computed_; }
  const kv::KvManager& kv() const { return kv_; }
  const EngineConfig& config() const { return config_; }

 private:
  RequestUpdate finish(Sequence& seq, FinishReason reason, std::string error = {});
  bool stops(const Sequence& seq, int32_t token) const;
  // `seq`'s next token drawn from its whole logit row (bias, penalties and suppression applied
  // first) and its logprobs if asked; touches nothing but the sequence's sampler, so rows can be
  // drawn on several threads at once.
  struct Drawn {
    int32_t token = -1;
    std::vector<TokenLogprob> logprobs;
  };
  Drawn draw(Sequence& seq, std::span<const float> logits) const;
  // Appends a sampled token and reports it (stop, length, update with its logprobs).
  void accept_token(Sequence& seq, int32_t token, std::vector<TokenLogprob> logprobs, std::vector<RequestUpdate>& updates);
  // What the sampler needs of the sequence's logit row (Transformer::forward's keep): 1 its first
  // maximum, k its top_k best candidates, 0 the whole row.
  int32_t logits_kept(const Sequence& seq) const;
  // Tokens that cannot be drawn yet (end of generation and stop ids before min_tokens).
  std::vector<int32_t> suppressed_tokens(const Sequence& seq) const;
  // Creates branches 1 … n-1 of an n > 1 request, sharing its computed prompt blocks.
  std::vector<Sequence*> fork_branches(Sequence& parent);

  model::Transformer& model_;
  backend::Backend& backend_;
  EngineConfig config_;
  std::unique_ptr<ThreadPool> sampling_pool_;  // none with one sampling thread
  std::vector<int32_t> eog_;
  kv::KvManager kv_;
  Scheduler scheduler_;
  std::unordered_map<uint64_t, std::unique_ptr<Sequence>> sequences_;  // by KV sequence id
  struct PendingAbort {
    RequestId id;
    int64_t index;  // -1: every branch
  };
  std::vector<PendingAbort> aborted_;
  RequestId next_id_ = 1;
  uint64_t next_seq_ = 1;
  StepStats last_;
  EngineStats stats_;  // the cumulative counters
  uint64_t total_computed_ = 0;
};

}  // namespace vellum::engine
