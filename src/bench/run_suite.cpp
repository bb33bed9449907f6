#include "bench/run_suite.h"

#include <memory>

#include "core/error.h"

namespace vellum::bench {

TokenRuns run_suite(app::LoadedEngine& loaded, const std::vector<std::string>& prompts, const SuiteOptions& o) {
  const uint32_t ctx = loaded.context();
  std::vector<std::shared_ptr<engine::RequestHandle>> handles;
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
    handles.push_back(loaded.engine().submit(std::move(req)));
  }
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
