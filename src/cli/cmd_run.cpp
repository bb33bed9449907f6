// vellum run -m FILE -p PROMPT [-n N] [--temp T] [--seed S] [-t THREADS]: one prompt, the continuation
// streamed to stdout as it is generated, speeds on stderr.

#include <chrono>
#include <cstdio>
#include <random>

#include "app/loaded_engine.h"
#include "app/penalty_options.h"
#include "cli/command.h"
#include "core/error.h"
#include "engine/engine.h"
#include "engine/sampler.h"
#include "tokenizer/tokenizer.h"

namespace vellum::cli {
namespace {

struct RunOptions {
  app::EngineOptions engine;
  std::string prompt;
  int32_t n_predict = 128;
  int64_t seed = -1;
  bool no_bos = false, special = false, log_kv_stats = false, print_ids = false;
  std::vector<std::string> stop;
  engine::SamplingParams sampling;
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void run(const RunOptions& o) {
  std::fprintf(stderr, "loading %s …\n", o.engine.model.c_str());
  const auto loaded = app::LoadedEngine::load(o.engine);
  const auto& tok = loaded->tokenizer();
  auto& engine = loaded->engine();
  const auto& ec = loaded->config();
  std::fprintf(stderr, "loaded %s\n", loaded->summary().c_str());

  engine::Request req;
  req.prompt = tok.encode(o.prompt, !o.no_bos, o.special);
  if (req.prompt.empty()) throw_error("the prompt encodes to no tokens (give -p, or drop --no-bos)");
  req.sampling = o.sampling;
  req.sampling.seed = o.seed >= 0 ? static_cast<uint64_t>(o.seed) : std::random_device{}();
  const uint64_t room = ec.max_seq_len - std::min<uint64_t>(ec.max_seq_len, req.prompt.size());
  req.max_tokens = static_cast<uint32_t>(std::min<uint64_t>(static_cast<uint64_t>(o.n_predict), room));
  const size_t prompt_tokens = req.prompt.size();
  const std::vector<int32_t> prompt_ids = req.prompt;
  std::vector<int32_t> sampled;  // every sampled id, an end-of-generation one included
  engine::GenerationOptions go;
  go.stop = o.stop;
  // SentencePiece's dummy-prefix space is dropped only at the very start of the text.
  go.strip_leading_space = o.prompt.empty();

  std::printf("%s", o.prompt.c_str());
  std::fflush(stdout);
  const auto t_start = Clock::now();
  auto handle = engine.submit(std::move(req), go);
  double prompt_s = 0;
  size_t generated = 0;
  while (auto e = handle->next()) {
    if (generated == 0 && !e->tokens.empty()) prompt_s = seconds_since(t_start);  // time to the first token
    generated += e->tokens.size();
    sampled.insert(sampled.end(), e->tokens.begin(), e->tokens.end());
    std::printf("%s", e->text.c_str());
    std::fflush(stdout);
    if (e->finish == engine::FinishReason::Error) throw_error("{}", e->error);
    if (o.log_kv_stats) std::fprintf(stderr, "[kv] %s\n", kv::format_stats(engine.kv_stats()).c_str());
  }
  std::printf("\n");
  const double gen_s = seconds_since(t_start) - prompt_s;
  const int64_t decoded = std::max<int64_t>(0, static_cast<int64_t>(generated) - 1);  // the first came with the prompt pass
  std::fprintf(stderr, "prompt: %zu tokens in %.3f s (%.1f tok/s); generation: %lld tokens in %.3f s (%.1f tok/s)\n",
               prompt_tokens, prompt_s, prompt_tokens / std::max(prompt_s, 1e-9), static_cast<long long>(decoded), gen_s,
               decoded / std::max(gen_s, 1e-9));
  if (o.print_ids) {
    auto list = [](const std::vector<int32_t>& v) {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
      return s + "]";
    };
    std::fprintf(stderr, "token ids: prompt %s generated %s\n", list(prompt_ids).c_str(), list(sampled).c_str());
  }
}

const CommandRegistration registration("", [](CLI::App& parent) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = parent.add_subcommand("run", "Generate a continuation of one prompt");
  o->engine.max_num_seqs = 1;
  app::add_engine_options(*cmd, o->engine);
  cmd->add_option("-p,--prompt", o->prompt, "Prompt text");
  cmd->add_option("-n,--n-predict", o->n_predict, "Tokens to generate")->check(CLI::Range(0, 1 << 30));
  cmd->add_flag("--log-kv-stats", o->log_kv_stats, "Print KV cache statistics after every step");
  cmd->add_option("--temp", o->sampling.temperature, "Temperature (0: greedy)");
  cmd->add_option("--top-k", o->sampling.top_k, "Top-k (0: off)");
  cmd->add_option("--top-p", o->sampling.top_p, "Top-p (1: off)");
  cmd->add_option("--min-p", o->sampling.min_p, "Min-p (0: off)");
  app::add_penalty_options(*cmd, o->sampling);
  cmd->add_option("-s,--seed", o->seed, "Random seed (-1: random)");
  cmd->add_option("--stop", o->stop, "Stop string (repeatable)");
  cmd->add_flag("--no-bos", o->no_bos, "Do not add BOS");
  cmd->add_flag("--special", o->special, "Parse special tokens written in the prompt");
  cmd->add_flag("--print-token-ids", o->print_ids,
                "At the end, print the prompt's token ids and the sampled ones (an end-of-generation id included) "
                "to stderr as `token ids: prompt [..] generated [..]`");
  cmd->callback([o] {
    o->sampling.validate();
    run(*o);
  });
});

}  // namespace
}  // namespace vellum::cli
