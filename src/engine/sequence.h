#pragma once
// A request inside the engine: its tokens so far (prompt, then generated), its sampler, its state.
// A sequence only knows how many of its tokens have KV (in the KvManager); there are no separate
// prefill and decode phases.

#include <cstdint>
#include <vector>

#include "engine/logit_edit_state.h"
#include "engine/request.h"
#include "engine/sampler.h"

namespace vellum::engine {

enum class SequenceState { Waiting, Running, Finished };

struct Sequence {
  Sequence(RequestId request_id, uint64_t kv_id, Request req, uint32_t branch = 0)
      : id(request_id), seq_id(kv_id), index(branch), request(std::move(req)), tokens(request.prompt),
        prompt_len(static_cast<uint32_t>(request.prompt.size())), sampler(branch_sampling(request.sampling, branch)) {}

  // Branch i of an n > 1 request samples with seed + i: reproducible, and distinct between branches.
  static SamplingParams branch_sampling(SamplingParams p, uint32_t branch) {
    p.seed += branch;
    return p;
  }

  RequestId id;     // the request it belongs to
  uint64_t seq_id;  // its KV sequence (one per branch)
  uint32_t index;   // branch number (the OpenAI "choice index")
  Request request;
  std::vector<int32_t> tokens;  // prompt + generated; the last generated one may lack KV yet
  uint32_t prompt_len;
  Sampler sampler;
  SequenceState state = SequenceState::Waiting;
  FinishReason finish = FinishReason::None;
  uint32_t cached_tokens = 0;   // prompt tokens served by the prefix cache at first admission
  bool admitted_once = false;
  bool prompt_counted = false;  // its prompt is in EngineStats::prompt_tokens
  bool forked = false;          // branches created (n > 1), once the prompt is computed
  uint32_t preemptions = 0;
  LogitEditState edit_state;  // its logit edits, built at its first row reduced on the backend

  uint32_t generated() const { return static_cast<uint32_t>(tokens.size()) - prompt_len; }
};

}  // namespace vellum::engine
