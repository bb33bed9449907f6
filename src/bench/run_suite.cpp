#include "bench/run_suite.h"

#include <memory>

#include "core/error.h"

namespace vellum::bench {

TokenRuns run_suite(app::LoadedEngine& loaded, const std::vector<std::string>& prompts, const SuiteOptions& o) {
  const uint32_t ctx = loaded.context();
  std::vector<engine::Request> requests;
  for (size_t i = 0; i < prompts.size(); ++i) {
    engine::Request req;
    req.prompt = loaded.tokenizer().encode(prompts[i], true, false);
    if (req.prompt.empty()) throw_error("prompt {} encodes to no tokens", i);
    if (req.prompt.size() >= ctx)
      throw_error("prompt {} has {} tokens; the context holds {}", i, req.prompt.size(), ctx);
    req.max_tokens = std::min<uint32_t>(o.max_tokens, ctx - static_cast<uint32_t>(req.prompt.size()));
    req.sampling = o.sampling;
    req.sampling.seed = o.sampling.seed + i;  // distinct streams per prompt, identical on both sides
    req.ignore_eos = o.ignore_eos;
    requests.push_back(std::move(req));
  }
  // All at once: the steps' batches are the same run after run (a GPU backend outside its
  // deterministic mode computes a row differently in a different batch).
  const auto handles = loaded.engine().submit_all(std::move(requests));
  TokenRuns runs(prompts.size());
  for (size_t i = 0; i < handles.size(); ++i) {
    while (auto e = handles[i]->next()) {
      runs[i].insert(runs[i].end(), e->tokens.begin(), e->tokens.end());
      if (e->finish == engine::FinishReason::Error) throw_error("prompt {}: {}", i, e->error);
      if (e->finish == engine::FinishReason::Aborted) throw_error("prompt {}: the engine aborted the request", i);
    }
  }
  return runs;
}

}  // namespace vellum::bench
