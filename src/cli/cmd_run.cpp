// vellum run -m FILE -p PROMPT [-n N] [--temp T] [--seed S] [-t THREADS]: one prompt, the continuation
// streamed to stdout as it is generated, speeds on stderr.

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "cli/command.h"
#include "core/error.h"
#include "engine/batch.h"
#include "engine/sampler.h"
#include "gguf/gguf_file.h"
#include "model/transformer.h"
#include "tokenizer/detokenizer.h"
#include "tokenizer/tokenizer.h"

namespace vellum::cli {
namespace {

struct RunOptions {
  std::string model, prompt;
  int32_t n_predict = 128;
  uint32_t context = 0, block_size = 16, batch = 512;
  unsigned threads = 0;
  int64_t seed = -1;
  bool no_bos = false, special = false, print_ids = false;
  engine::SamplingParams sampling;
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void run(const RunOptions& o) {
  const auto t_load = Clock::now();
  std::fprintf(stderr, "loading %s …\n", o.model.c_str());
  const auto file = gguf::GgufFile::open(o.model);
  const auto tok = tokenizer::Tokenizer::from_gguf(file);
  backend::CpuBackend be(o.threads);
  model::Transformer m(file, be);
  const auto& hp = m.hparams();
  const uint32_t context = o.context != 0 ? o.context : std::min<uint32_t>(hp.context_train, 4096);
  if (o.block_size == 0) throw_error("--block-size must be positive");
  const uint32_t blocks = (context + o.block_size - 1) / o.block_size;
  be.init_kv({hp.layers, o.block_size, hp.kv_heads, hp.head_dim}, blocks);
  std::fprintf(stderr, "loaded %s: %u layers, dim %u, vocab %u, context %u, %u threads, %.2f s\n",
               hp.arch_name.c_str(), hp.layers, hp.dim, hp.vocab, context, be.threads(), seconds_since(t_load));

  std::vector<int32_t> ids = tok.encode(o.prompt, !o.no_bos, o.special);
  if (ids.empty()) throw_error("the prompt encodes to no tokens (give -p, or drop --no-bos)");
  if (ids.size() >= context) throw_error("the prompt has {} tokens; the context holds {}", ids.size(), context);
  std::vector<int32_t> table(blocks);
  for (uint32_t b = 0; b < blocks; ++b) table[b] = static_cast<int32_t>(b);

  engine::SamplingParams sp = o.sampling;
  sp.seed = o.seed >= 0 ? static_cast<uint64_t>(o.seed) : std::random_device{}();
  engine::Sampler sampler(sp);
  // SentencePiece's dummy-prefix space is dropped only at the very start of the text.
  tokenizer::StreamingDetokenizer detok(tok, o.prompt.empty() && tok.strips_leading_space(), false);
  std::printf("%s", o.prompt.c_str());
  std::fflush(stdout);

  // Prompt in chunks of --batch tokens; logits only for the last row.
  const auto t_prompt = Clock::now();
  std::vector<float> logits;
  for (size_t done = 0; done < ids.size();) {
    const size_t n = std::min<size_t>(o.batch, ids.size() - done);
    engine::Batch b;
    b.block_size = o.block_size;
    const bool last = done + n == ids.size();
    b.add_sequence({ids.begin() + static_cast<ptrdiff_t>(done), ids.begin() + static_cast<ptrdiff_t>(done + n)},
                   static_cast<uint32_t>(done), table, last ? engine::Batch::Logits::Last : engine::Batch::Logits::None);
    logits = m.forward(b);
    done += n;
  }
  const double prompt_s = seconds_since(t_prompt);
  const size_t prompt_tokens = ids.size();

  const auto t_gen = Clock::now();
  int32_t generated = 0;
  std::vector<int32_t> sampled;  // every sampled id, an end-of-generation one included
  while (generated < o.n_predict && ids.size() < context) {
    const int32_t next = sampler.sample(logits);
    ++generated;
    sampled.push_back(next);
    if (tok.is_eog(next)) break;
    std::printf("%s", detok.push(next).c_str());
    std::fflush(stdout);
    ids.push_back(next);
    if (ids.size() >= context || generated >= o.n_predict) break;
    engine::Batch b;
    b.block_size = o.block_size;
    b.add_sequence({next}, static_cast<uint32_t>(ids.size() - 1), table, engine::Batch::Logits::Last);
    logits = m.forward(b);
  }
  std::printf("%s\n", detok.flush().c_str());
  const double gen_s = seconds_since(t_gen);
  std::fprintf(stderr, "prompt: %zu tokens in %.3f s (%.1f tok/s); generation: %d tokens in %.3f s (%.1f tok/s)\n",
               prompt_tokens, prompt_s, prompt_tokens / std::max(prompt_s, 1e-9), generated, gen_s,
               generated / std::max(gen_s, 1e-9));
  if (o.print_ids) {
    auto list = [](const int32_t* p, size_t n) {
      std::string s = "[";
      for (size_t i = 0; i < n; ++i) s += (i ? "," : "") + std::to_string(p[i]);
      return s + "]";
    };
    std::fprintf(stderr, "token ids: prompt %s generated %s\n", list(ids.data(), prompt_tokens).c_str(),
                 list(sampled.data(), sampled.size()).c_str());
  }
}

const CommandRegistration registration("", [](CLI::App& parent) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = parent.add_subcommand("run", "Generate a continuation of one prompt on the CPU");
  cmd->add_option("-m,--model", o->model, "GGUF model")->required();
  cmd->add_option("-p,--prompt", o->prompt, "Prompt text");
  cmd->add_option("-n,--n-predict", o->n_predict, "Tokens to generate")->check(CLI::Range(0, 1 << 30));
  cmd->add_option("-c,--ctx-size", o->context, "Context length (default: the model's, at most 4096)");
  cmd->add_option("-t,--threads", o->threads, "CPU threads (default: all)");
  cmd->add_option("-b,--batch-size", o->batch, "Prompt tokens per forward pass")->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--block-size", o->block_size, "KV block size in tokens");
  cmd->add_option("--temp", o->sampling.temperature, "Temperature (0: greedy)");
  cmd->add_option("--top-k", o->sampling.top_k, "Top-k (0: off)");
  cmd->add_option("--top-p", o->sampling.top_p, "Top-p (1: off)");
  cmd->add_option("--min-p", o->sampling.min_p, "Min-p (0: off)");
  cmd->add_option("-s,--seed", o->seed, "Random seed (-1: random)");
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
