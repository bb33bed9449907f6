#include "engine/scheduler.h"

#include <algorithm>

#include "core/error.h"

namespace vellum::engine {

uint32_t StepPlan::num_tokens() const {
  uint32_t n = 0;
  for (const auto& c : chunks) n += c.count;
  return n;
}

Scheduler::Scheduler(const SchedulerConfig& config, kv::KvManager& kv) : config_(config), kv_(kv) {
  if (config.max_num_batched_tokens == 0) throw_error("--max-num-batched-tokens must be positive");
  if (config.max_num_seqs == 0) throw_error("--max-num-seqs must be positive");
}

void Scheduler::add(Sequence* seq) {
  seq->state = SequenceState::Waiting;
  waiting_.push_back(seq);
}

void Scheduler::add_running(Sequence* seq) {
  seq->state = SequenceState::Running;
  running_.push_back(seq);
}

void Scheduler::remove(Sequence* seq) {
  if (kv_.has_sequence(seq->seq_id)) kv_.free(seq->seq_id);
  std::erase(running_, seq);
  std::erase(waiting_, seq);
  seq->state = SequenceState::Finished;
}

void Scheduler::preempt(Sequence* seq) {
  kv_.free(seq->seq_id);
  std::erase(running_, seq);
  seq->state = SequenceState::Waiting;
  ++seq->preemptions;
  waiting_.push_front(seq);
}

// Gives `seq` KV slots for its tokens that have none (the token sampled last step), preempting the
// most recently admitted sequences while the pool is short. False when `seq` itself was preempted.
bool Scheduler::make_room_for(Sequence* seq, StepPlan& plan) {
  const uint32_t have = kv_.num_tokens(seq->seq_id);
  const uint32_t missing = static_cast<uint32_t>(seq->tokens.size()) - have;
  if (missing == 0) return true;
  while (!kv_.can_append(seq->seq_id, missing)) {
    Sequence* victim = running_.back();
    // A victim's copies must not run: its blocks are free again.
    if (victim != seq) {
      preempt(victim);
      ++plan.preempted;
      continue;
    }
    preempt(seq);
    ++plan.preempted;
    return false;
  }
  const std::span<const int32_t> add(seq->tokens.data() + have, missing);
  auto copies = kv_.append(seq->seq_id, add);
  if (!copies) throw_error("scheduler: KV append failed after can_append");  // contract violation
  plan.copies.insert(plan.copies.end(), copies->begin(), copies->end());
  return true;
}

StepPlan Scheduler::schedule() {
  StepPlan plan;
  uint32_t budget = config_.max_num_batched_tokens;

  // 1. Slots for last step's sampled tokens. Preempted sequences leave running_, so iterate a copy.
  for (Sequence* seq : std::vector<Sequence*>(running_)) {
    if (seq->state != SequenceState::Running) continue;  // preempted meanwhile
    make_room_for(seq, plan);
  }
  // Copies of sequences preempted after their append would write freed blocks: recompute the list.
  if (plan.preempted > 0) {
    std::vector<kv::BlockCopy> kept;
    for (const auto& c : plan.copies) {
      bool live = false;
      for (Sequence* s : running_) {
        for (kv::BlockId b : kv_.block_table(s->seq_id).blocks) live |= b == c.dst;
      }
      if (live) kept.push_back(c);
    }
    plan.copies = std::move(kept);
  }

  // 2. Running sequences: decodes first, then the rest of their prompts, in admission order.
  auto schedule_running = [&](bool decodes) {
    for (Sequence* seq : running_) {
      if (budget == 0) return;
      const kv::SeqProgress p = kv_.update_progress(seq->seq_id);
      if (p.num_computable_tokens == 0) continue;  // waiting on blocks another sequence computes
      const bool is_decode = p.num_computable_tokens == 1 && seq->generated() > 0;
      if (is_decode != decodes) continue;
      uint32_t n = std::min(p.num_computable_tokens, budget);
      if (!decodes && config_.max_prefill_chunk != 0) n = std::min(n, config_.max_prefill_chunk);
      const uint32_t begin = p.num_computed_tokens;
      plan.chunks.push_back({seq, begin, n, begin + n == seq->tokens.size()});
      budget -= n;
    }
  };
  schedule_running(true);
  schedule_running(false);

  // 3. Admission in arrival order; the first request that does not fit stops admission (fairness).
  while (!waiting_.empty() && budget > 0 && running_.size() < config_.max_num_seqs) {
    Sequence* seq = waiting_.front();
    if (!kv_.can_allocate(seq->tokens, seq->request.cache_salt)) break;
    auto r = kv_.allocate(seq->seq_id, seq->tokens, seq->request.cache_salt);
    if (!r) break;
    waiting_.pop_front();
    seq->state = SequenceState::Running;
    running_.push_back(seq);
    if (!seq->admitted_once) {
      seq->admitted_once = true;
      seq->cached_tokens = std::min(r->num_shared_tokens, seq->prompt_len);  // shared, computed or not: not ours to compute
    }
    plan.copies.insert(plan.copies.end(), r->copies.begin(), r->copies.end());
    const kv::SeqProgress& p = r->progress;
    if (p.num_computable_tokens == 0) continue;  // its prefix is being computed by another sequence
    uint32_t n = std::min(p.num_computable_tokens, budget);
    if (config_.max_prefill_chunk != 0) n = std::min(n, config_.max_prefill_chunk);
    const uint32_t begin = p.num_computed_tokens;
    plan.chunks.push_back({seq, begin, n, begin + n == seq->tokens.size()});
    budget -= n;
  }
  return plan;
}

void Scheduler::on_computed(const StepPlan& plan) {
  for (const auto& c : plan.chunks) kv_.mark_computed(c.seq->seq_id, c.begin + c.count);
}

}  // namespace vellum::engine
