// vellum bench -m FILE -p 512,2048 -n 128 -b 1,8,32 [-r 3]: offline (in-process) speed over a grid of
// prompt lengths × generated lengths × concurrent sequences: prefill, decode and steady-state decode
// tok/s, time to first token and peak KV bytes, mean ± stddev over repetitions; a table, --json or
// --csv on stdout, a progress bar on stderr and an optional gnuplot SVG.

#include <cmath>
#include <cstdio>

#include "app/engine_options.h"
#include "app/loaded_engine.h"
#include "app/penalty_options.h"
#include "bench/bench_plot.h"
#include "bench/grid.h"
#include "bench/offline_run.h"
#include "bench/progress.h"
#include "bench/stats.h"
#include "bench/table.h"
#include "cli/command.h"
#include "core/error.h"
#include "engine/logits_processor.h"
#include "gguf/gguf_file.h"
#include "model/hparams.h"

namespace vellum::cli {
namespace {

struct BenchOptions {
  app::EngineOptions engine;
  std::string prompts = "512", gens = "128", batches = "1";
  uint32_t reps = 3;
  float temperature = 0;  // 0: greedy
  int32_t top_k = 40;
  float top_p = 0.95f, min_p = 0.05f;
  engine::SamplingParams penalties;  // only its penalties are read
  bool json = false, csv = false, progress = false, no_warmup = false, step_profile = false;
  std::string plot;
};

// KV bytes per token with F32 K and V for every layer: sizes the pool before the backend (and so the
// element type) is known; an upper bound (a 16-bit pool gets twice the blocks it needs).
uint64_t kv_bytes_per_token_f32(const model::HParams& hp) { return uint64_t(hp.layers) * 2 * hp.kv_dim() * 4; }

void bench(BenchOptions o) {
  if (o.json && o.csv) throw_error("give at most one of --json and --csv");
  const auto ps = bench::parse_list(o.prompts, "-p/--n-prompt");
  const auto ns = bench::parse_list(o.gens, "-n/--n-gen");
  const auto bs = bench::parse_list(o.batches, "-b/--batch", false, 4096);
  const auto grid = bench::make_grid(ps, ns, bs);
  const uint32_t max_p = *std::max_element(ps.begin(), ps.end()), max_n = *std::max_element(ns.begin(), ns.end()),
                 max_b = *std::max_element(bs.begin(), bs.end());

  // Size the engine for the largest point unless the flags say otherwise: every sequence of the
  // biggest batch runs at once with its whole context in the KV pool, so nothing is preempted.
  const auto file = gguf::GgufFile::open(o.engine.model);
  const model::HParams hp = model::read_hparams(file.metadata());
  if (o.engine.context == 0) {
    o.engine.context = max_p + max_n;
    if (hp.context_train != 0 && o.engine.context > hp.context_train)
      throw_error("-p {} + -n {} exceed the model's context of {} tokens (give -c to go past it)", max_p, max_n,
                  hp.context_train);
  }
  if (o.engine.max_num_seqs == 64 && max_b > 64) o.engine.max_num_seqs = max_b;
  if (o.engine.kv_cache_mib == 0) {
    const uint64_t blocks = uint64_t(max_b) * ((o.engine.context + o.engine.block_size - 1) / o.engine.block_size + 1);
    const uint64_t bytes = blocks * o.engine.block_size * kv_bytes_per_token_f32(hp);
    o.engine.kv_cache_mib = static_cast<uint32_t>((bytes + (1u << 20) - 1) >> 20);
  }
  engine::SamplingParams sampling = bench::greedy();
  sampling.temperature = o.temperature;
  sampling.top_k = o.top_k;
  sampling.top_p = o.top_p;
  sampling.min_p = o.min_p;
  sampling.repetition_penalty = o.penalties.repetition_penalty;
  sampling.presence_penalty = o.penalties.presence_penalty;
  sampling.frequency_penalty = o.penalties.frequency_penalty;
  sampling.validate();  // before the model loads: a bad value costs nothing
  const std::string sampling_note =
      sampling.temperature == 0 ? std::string("greedy")
                                : fmt::format("temperature {} top-k {} top-p {} min-p {}", sampling.temperature, sampling.top_k,
                                              sampling.top_p, sampling.min_p);
  const std::string penalty_note =
      engine::adjusts_logits(sampling) ? fmt::format(" repeat-penalty {} presence-penalty {} frequency-penalty {}",
                                                     sampling.repetition_penalty, sampling.presence_penalty,
                                                     sampling.frequency_penalty)
                                       : std::string();
  auto loaded = app::LoadedEngine::load(o.engine);
  std::fprintf(stderr, "bench: %s\n", loaded->summary().c_str());
  const uint64_t block_bytes = loaded->kv_bytes_per_block();

  // A short warm-up within the context the grid sized (max_p + max_n).
  if (!o.no_warmup) {
    bench::run_offline(*loaded, {std::min<uint32_t>(max_p, 16), std::min<uint32_t>(max_n, 4), 1}, 0, block_bytes, sampling);
  }

  bench::Table table;
  table.columns = {"batch", "prompt", "generate", "reps", "prefill_tok_s", "prefill_sd", "decode_tok_s", "decode_sd",
                   "steady_tok_s", "steady_sd", "ttft_ms", "ttft_sd", "peak_kv_mib"};
  nlohmann::json samples = nlohmann::json::array();  // every repetition, for --json
  bench::Table profile;  // --step-profile: the steady span's steps, ms each
  profile.columns = {"batch", "prompt", "generate", "steps", "step_ms", "schedule_ms", "forward_ms", "device_wait_ms",
                     "sample_ms", "deliver_ms", "other_ms"};
  bench::ProgressBar bar(grid.size() * o.reps, o.progress || bench::ProgressBar::stderr_is_tty());
  size_t done = 0;
  for (const auto& pt : grid) {
    std::vector<double> pre, dec, steady, ttft;
    uint64_t peak = 0, steps = 0;
    engine::StepTimes time;
    for (uint32_t r = 0; r < o.reps; ++r) {
      bar.update(done, fmt::format("b={} p={} n={} rep {}", pt.batch, pt.prompt, pt.generate, r + 1));
      const auto res = bench::run_offline(*loaded, pt, (uint64_t(done) + 1) * 0x9E3779B97F4A7C15ull, block_bytes, sampling);
      pre.push_back(res.prefill_tok_s);
      dec.push_back(res.decode_tok_s);
      steady.push_back(res.steady_tok_s);
      ttft.push_back(res.ttft_ms);
      peak = std::max(peak, res.peak_kv_bytes);
      steps += res.steady_steps;
      time.elapsed += res.steady_time.elapsed;
      time.schedule += res.steady_time.schedule, time.forward += res.steady_time.forward;
      time.device_wait += res.steady_time.device_wait, time.sample += res.steady_time.sample;
      time.deliver += res.steady_time.deliver;
      ++done;
    }
    const auto a = bench::summarize(pre), b = bench::summarize(dec), c = bench::summarize(steady),
               d = bench::summarize(ttft);
    samples.push_back({{"batch", pt.batch}, {"prompt", pt.prompt}, {"generate", pt.generate}, {"prefill_tok_s", pre},
                       {"decode_tok_s", dec}, {"steady_tok_s", steady}, {"ttft_ms", ttft}});
    table.rows.push_back({int64_t(pt.batch), int64_t(pt.prompt), int64_t(pt.generate), int64_t(o.reps), a.mean,
                          a.stddev, b.mean, b.stddev, c.mean, c.stddev, d.mean, d.stddev,
                          double(peak) / double(1u << 20)});
    const double per = steps == 0 ? 0 : 1000.0 / double(steps);
    const double other = time.elapsed - time.schedule - time.forward - time.sample - time.deliver;
    profile.rows.push_back({int64_t(pt.batch), int64_t(pt.prompt), int64_t(pt.generate), int64_t(steps), time.elapsed * per,
                            time.schedule * per, time.forward * per, time.device_wait * per, time.sample * per,
                            time.deliver * per, other * per});
  }
  bar.update(done, "done");
  bar.finish();

  if (o.json) {
    nlohmann::json j;
    j["model"] = loaded->model_name();
    j["engine"] = app::describe(o.engine);
    j["sampling"] = sampling_note + penalty_note;
    j["summary"] = loaded->summary();
    j["results"] = table.to_json();
    j["samples"] = samples;
    if (o.step_profile) j["step_profile"] = profile.to_json();
    std::printf("%s\n", j.dump(2).c_str());
  } else if (o.csv) {
    std::printf("%s", table.to_csv().c_str());
  } else {
    std::printf("model: %s\nengine: %s\nsampling: %s\n\n%s", loaded->model_name().c_str(), app::describe(o.engine).c_str(),
                (sampling_note + penalty_note).c_str(), table.to_text().c_str());
    if (o.step_profile) {
      std::printf("\nsteady-state steps (every sequence decoding), ms a step: forward includes device_wait; other is the\n"
                  "engine loop's remainder (queues, locks, thread wake-ups)\n\n%s",
                  profile.to_text().c_str());
      if (const std::string r = loaded->backend().activity_report(); !r.empty()) std::printf("\nbackend: %s\n", r.c_str());
    }
  }
  std::fflush(stdout);
  if (!o.plot.empty()) {
    bench::plot_svg(table, o.plot, fmt::format("vellum bench: {} ({})", loaded->model_name(), app::describe(o.engine)));
    std::fprintf(stderr, "bench: wrote %s\n", o.plot.c_str());
  }
}

const CommandRegistration registration("", [](CLI::App& parent) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* cmd = parent.add_subcommand(
      "bench",
      "Offline speed over a grid: -p prompt lengths × -n generated lengths × -b concurrent sequences.\n"
      "Note: -b is the number of sequences run at once (not llama-bench's logical batch size); the engine's\n"
      "token budget per step is --max-num-batched-tokens.");
  app::add_engine_options(*cmd, o->engine, true, /*batch_aliases=*/false);
  cmd->add_option("-p,--n-prompt", o->prompts, "Prompt lengths in tokens, comma-separated")->capture_default_str();
  cmd->add_option("-n,--n-gen", o->gens, "Generated tokens per sequence, comma-separated")->capture_default_str();
  cmd->add_option("-b,--batch", o->batches, "Concurrent sequences, comma-separated")->capture_default_str();
  cmd->add_option("-r,--repetitions", o->reps, "Repetitions of each point")->capture_default_str()->check(CLI::Range(1, 1000));
  cmd->add_option("--temp", o->temperature, "Sampling temperature of every sequence (0: greedy)")->capture_default_str();
  cmd->add_option("--top-k", o->top_k, "Top-k of sampled sequences (0: off)")->capture_default_str();
  cmd->add_option("--top-p", o->top_p, "Top-p of sampled sequences (1: off)")->capture_default_str();
  cmd->add_option("--min-p", o->min_p, "Min-p of sampled sequences (0: off)")->capture_default_str();
  app::add_penalty_options(*cmd, o->penalties);
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->add_flag("--csv", o->csv, "Print CSV");
  cmd->add_flag("--progress", o->progress, "Show the progress bar even when stderr is not a terminal");
  cmd->add_flag("--no-warmup", o->no_warmup, "Skip the short warm-up run");
  cmd->add_flag("--step-profile", o->step_profile,
                "Also print where the engine thread's time goes in steady-state steps (schedule, forward, device wait, "
                "sample, deliver)");
  cmd->add_option("--plot", o->plot, "Also draw tok/s against -b into this SVG file (needs gnuplot)");
  cmd->callback([o] { bench(*o); });
});

}  // namespace
}  // namespace vellum::cli
