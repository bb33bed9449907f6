// Tokenizer micro-benchmarks: encode and decode throughput on ~4 MB of mixed text (prose, code,
// multilingual text, emoji, numbers, whitespace runs) built deterministically from the fixtures:
// the llama.cpp tokenizer test strings, the Hugging Face reference texts and the chat templates.
// Vocabularies: SentencePiece (llama-spm), byte-level BPE (gpt-2, deepseek-llm, and qwen3/llama3
// converted from tokenizer.json), WordPiece (bert-bge).
//
//   ./build/bench/vellum_bench --benchmark_filter=Tokenizer --benchmark_format=console

#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "gguf/gguf_file.h"
#include "tokenizer/hf_tokenizer_import.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/word_cache.h"

namespace {

namespace fs = std::filesystem;
using vellum::tokenizer::Tokenizer;

const fs::path kFixtures = VELLUM_FIXTURES_DIR;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("missing fixture " + p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string& corpus() {
  static const std::string text = [] {
    std::vector<std::string> pieces;
    const std::string inp = read_file(kFixtures / "tokenizers/ggml-vocab/ggml-vocab-gpt-2.gguf.inp");
    const std::string sep = "\n__ggml_vocab_test__\n";
    for (size_t pos = 0, next; (next = inp.find(sep, pos)) != std::string::npos; pos = next + sep.size()) {
      pieces.push_back(inp.substr(pos, next - pos));
    }
    for (const char* name : {"qwen3", "llama3"}) {
      const auto ref = nlohmann::json::parse(read_file(kFixtures / "tokenizers/reference" / (std::string(name) + ".json")));
      for (const auto& c : ref.at("cases")) pieces.push_back(c.at("text").get<std::string>());
      const auto cfg = nlohmann::json::parse(read_file(kFixtures / "tokenizers/hf" / name / "tokenizer_config.json"));
      // Templates are code-like text; split into lines so they mix with the rest.
      std::istringstream lines(cfg.at("chat_template").get<std::string>());
      for (std::string line; std::getline(lines, line);) pieces.push_back(line + "\n");
    }
    std::mt19937 rng(1234);
    std::string out;
    while (out.size() < 4u << 20) {
      out += pieces[rng() % pieces.size()];
      out += (rng() % 4 == 0) ? "\n" : " ";
    }
    return out;
  }();
  return text;
}

const Tokenizer& tokenizer(const std::string& name) {
  static std::map<std::string, Tokenizer> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  const fs::path hf = kFixtures / "tokenizers/hf" / name;
  if (fs::exists(hf / "tokenizer.json")) {
    return cache.emplace(name, Tokenizer::from_metadata(vellum::tokenizer::import_hf_tokenizer_files(
                                   hf / "tokenizer.json", hf / "tokenizer_config.json")))
        .first->second;
  }
  const auto file = vellum::gguf::GgufFile::open((kFixtures / "tokenizers/ggml-vocab" / ("ggml-vocab-" + name + ".gguf")).string());
  return cache.emplace(name, Tokenizer::from_gguf(file)).first->second;
}

// range(0): 1 = with the per-thread word cache (warm after the first pass), 0 = without it.
void BM_TokenizerEncode(benchmark::State& state, const std::string& name) {
  const Tokenizer& tok = tokenizer(name);
  vellum::tokenizer::WordCache::set_enabled(state.range(0) != 0);
  const std::string& text = corpus();
  size_t n_tokens = 0;
  for (auto _ : state) {
    auto ids = tok.encode(text, false, false);
    n_tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(n_tokens);
  state.counters["bytes_per_token"] = static_cast<double>(text.size()) / static_cast<double>(n_tokens);
  vellum::tokenizer::WordCache::set_enabled(true);
}

void BM_TokenizerDecode(benchmark::State& state, const std::string& name) {
  const Tokenizer& tok = tokenizer(name);
  const auto ids = tok.encode(corpus(), false, false);
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string text = tok.decode(ids);
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

#define VELLUM_TOKENIZER_BENCH(name)                                                                  \
  BENCHMARK_CAPTURE(BM_TokenizerEncode, name, std::string(name))                                    \
      ->ArgName("cache")->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);                           \
  BENCHMARK_CAPTURE(BM_TokenizerDecode, name, std::string(name))->Unit(benchmark::kMillisecond)

VELLUM_TOKENIZER_BENCH("llama-spm");
VELLUM_TOKENIZER_BENCH("gpt-2");
VELLUM_TOKENIZER_BENCH("deepseek-llm");
VELLUM_TOKENIZER_BENCH("qwen3");
VELLUM_TOKENIZER_BENCH("llama3");
VELLUM_TOKENIZER_BENCH("bert-bge");

}  // namespace
