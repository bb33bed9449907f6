#pragma once
// Decides what each forward step computes (DESIGN.md, "Scheduler"; vLLM V1 style). Per step, within
// a token budget: first every running sequence that decodes (one token), then running sequences
// with prompt left (chunked, capped per sequence so several prompts progress together), then
// admission of waiting requests in arrival order after a prefix-cache lookup. When the KV pool
// cannot grow a running sequence, the most recently admitted one is preempted: its blocks are freed
// and it goes back to the front of the queue, keeping its tokens, to be recomputed later.
// The scheduler owns no memory; sequences belong to the engine.

#include <cstdint>
#include <deque>
#include <vector>

#include "engine/sequence.h"
#include "kv/kv_manager.h"

namespace vellum::engine {

struct SchedulerConfig {
  uint32_t max_num_batched_tokens = 2048;  // tokens per step
  uint32_t max_num_seqs = 256;             // running sequences at most
  uint32_t max_prefill_chunk = 0;          // prompt tokens per sequence per step (0: the budget)
};

struct ScheduledChunk {
  Sequence* seq = nullptr;
  uint32_t begin = 0;   // first position computed (== tokens with KV before the step)
  uint32_t count = 0;
  bool sample = false;  // the chunk reaches the sequence's last token: its logits give the next one
};

struct StepPlan {
  std::vector<ScheduledChunk> chunks;
  std::vector<kv::BlockCopy> copies;  // to perform before the forward pass
  uint32_t preempted = 0;
  uint32_t num_tokens() const;
  bool empty() const { return chunks.empty(); }
};

class Scheduler {
 public:
  Scheduler(const SchedulerConfig& config, kv::KvManager& kv);

  const SchedulerConfig& config() const { return config_; }
  // Queues a sequence (arrival order).
  void add(Sequence* seq);
  // Adds a sequence that already holds KV (a branch forked from a running one).
  void add_running(Sequence* seq);
  StepPlan schedule();
  // After the forward pass: records the KV the plan computed.
  void on_computed(const StepPlan& plan);
  // Removes a sequence (finished or aborted) and frees its blocks.
  void remove(Sequence* seq);

  size_t num_waiting() const { return waiting_.size(); }
  size_t num_running() const { return running_.size(); }
  const std::deque<Sequence*>& waiting() const { return waiting_; }

 private:
  void preempt(Sequence* seq);
  bool make_room_for(Sequence* seq, StepPlan& plan);

  SchedulerConfig config_;
  kv::KvManager& kv_;
  std::deque<Sequence*> waiting_;
  std::vector<Sequence*> running_;  // in admission order
};

}  // namespace vellum::engine
