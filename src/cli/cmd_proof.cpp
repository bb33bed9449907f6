// vellum proof -m FILE --prompts FILE [-n N] --a "FLAGS" --b "FLAGS" [--temp T --seed S]: runs a
// prompt suite under two engine configurations and checks that the generated token ids are identical,
// the way batching, chunking, block size and prefix caching must never change a result. Prints the
// first divergence with context and a one-line summary last; exit code 1 on any difference.

#include <cstdio>
#include <cstdlib>

#include "app/engine_options.h"
#include "app/loaded_engine.h"
#include "app/penalty_options.h"
#include "bench/prompt_suite.h"
#include "bench/run_suite.h"
#include "bench/token_compare.h"
#include "cli/command.h"
#include "core/error.h"
#include "tokenizer/tokenizer.h"

namespace vellum::cli {
namespace {

struct ProofOptions {
  app::EngineOptions engine;
  std::string prompts_file, flags_a, flags_b;
  bench::SuiteOptions suite;
  int64_t seed_b_offset = 0;  // hidden test hook: perturbs side b's seeds to exercise the failure path
};

bench::TokenRuns run_side(const char* name, const app::EngineOptions& options, const std::vector<std::string>& prompts,
                          const bench::SuiteOptions& suite, std::unique_ptr<app::LoadedEngine>* keep) {
  auto loaded = app::LoadedEngine::load(options);
  std::fprintf(stderr, "proof: side %s: %s\n", name, app::describe(options).c_str());
  auto runs = bench::run_suite(*loaded, prompts, suite);
  if (keep) *keep = std::move(loaded);  // side a's tokenizer renders the divergence
  return runs;
}

int proof(const ProofOptions& o) {
  const auto prompts = bench::load_prompt_suite(o.prompts_file);
  const app::EngineOptions a = app::parse_engine_flags(o.flags_a, o.engine);
  const app::EngineOptions b = app::parse_engine_flags(o.flags_b, o.engine);
  std::unique_ptr<app::LoadedEngine> side_a;
  const auto runs_a = run_side("a", a, prompts, o.suite, &side_a);
  bench::SuiteOptions suite_b = o.suite;
  suite_b.sampling.seed += static_cast<uint64_t>(o.seed_b_offset);
  // Side a is unloaded before b starts, so the two never compete for cores or memory.
  const tokenizer::Tokenizer tok = side_a->tokenizer();
  side_a.reset();
  const auto runs_b = run_side("b", b, prompts, suite_b, nullptr);
  const auto cmp = bench::compare_runs(runs_a, runs_b);
  if (!cmp.same()) {
    std::printf("%s", bench::describe_divergence(*cmp.first, runs_a, runs_b, prompts,
                                                 [&](int32_t id) { return tok.token_to_piece(id, true); })
                          .c_str());
  }
  std::printf("%s\n", bench::summary_line(cmp).c_str());
  std::fflush(stdout);
  return cmp.same() ? 0 : 1;
}

const CommandRegistration registration("", [](CLI::App& parent) {
  auto o = std::make_shared<ProofOptions>();
  CLI::App* cmd = parent.add_subcommand(
      "proof", "Check that two engine configurations generate identical token ids on a prompt suite");
  app::add_engine_options(*cmd, o->engine);
  cmd->add_option("--prompts", o->prompts_file, "Prompt suite: one prompt per line, or JSON lines with \"prompt\"")
      ->required();
  cmd->add_option("-n,--n-predict", o->suite.max_tokens, "Tokens to generate per prompt")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--a", o->flags_a, "Engine flags of side a, e.g. \"--block-size 16 --max-num-seqs 1\"");
  cmd->add_option("--b", o->flags_b, "Engine flags of side b, e.g. \"--block-size 32 --no-prefix-cache\"");
  o->suite.sampling.temperature = 0;
  cmd->add_option("--temp", o->suite.sampling.temperature, "Temperature for both sides (0: greedy)")->capture_default_str();
  cmd->add_option("--top-k", o->suite.sampling.top_k, "Top-k for both sides (0: off)");
  cmd->add_option("--top-p", o->suite.sampling.top_p, "Top-p for both sides (1: off)");
  cmd->add_option("--min-p", o->suite.sampling.min_p, "Min-p for both sides (0: off)");
  app::add_penalty_options(*cmd, o->suite.sampling);
  cmd->add_option("-s,--seed", o->suite.sampling.seed, "Base seed for both sides (prompt i uses seed + i)");
  cmd->add_flag("--ignore-eos", o->suite.ignore_eos, "Generate exactly -n tokens per prompt");
  cmd->add_option("--test-seed-offset-b", o->seed_b_offset)->group("");  // hidden: tests the failure path
  cmd->callback([o] {
    o->suite.sampling.validate();
    const int rc = proof(*o);
    if (rc != 0) std::exit(rc);  // the report is printed; a difference is not an error message
  });
});

}  // namespace
}  // namespace vellum::cli
