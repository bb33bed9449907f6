#pragma once
// A request inside the engine: its tokens so far (prompt, then generated), its sampler, its state.
// A sequence only knows how many of its tokens have KV (in the KvManager); there are no separate
// prefill and decode phases.

#include <cstdint>
#include <vector>

#include "engine/request.h"
#include "engine/sampler.h"

namespace vellum::engine {

enum class SequenceState { Waiting, Running, Finished };

struct Sequence {
  Sequence(RequestId request_id, Request req)
      : id(request_id), request(std::move(req)), tokens(request.prompt),
        prompt_len(static_cast<uint32_t>(request.prompt.size())), sampler(request.sampling) {}

  RequestId id;
  Request request;
  std::vector<int32_t> tokens;  // prompt + generated; the last generated one may lack KV yet
  uint32_t prompt_len;
  Sampler sampler;
  SequenceState state = SequenceState::Waiting;
  FinishReason finish = FinishReason::None;
  uint32_t cached_tokens = 0;   // prompt tokens served by the prefix cache at first admission
  bool admitted_once = false;
  uint32_t preemptions = 0;

  uint32_t generated() const { return static_cast<uint32_t>(tokens.size()) - prompt_len; }
};

}  // namespace vellum::engine
