// The CPU forward against Hugging Face `transformers`: small random-initialised LlamaForCausalLM,
// Qwen2ForCausalLM and Qwen3ForCausalLM models exported to GGUF, with the logits HF computed for every
// position of a few random prompts (tests/data/hf_reference, written by tools/gen_hf_reference.py;
// docs/testing.md). Each prompt runs as one prefill, token by token through a paged KV cache (decode),
// and all prompts of a model together in one ragged batch. The files are committed; a missing one is a
// failure, not a skip.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "gguf/gguf_file.h"
#include "model/transformer.h"

namespace vellum {
namespace {

namespace fs = std::filesystem;

const fs::path kDir = fs::path(VELLUM_TEST_DATA_DIR) / "hf_reference";

// Per row: max_i |vellum_i - hf_i| / max_i |hf_i| <= 1e-4 (issue 4: float32 weights, relative error
// <= 1e-4). Both sides compute in float32 with different summation orders, so the expected
// difference is rounding (~1e-6); a wrong RoPE order, norm, bias or head size is off by O(1).
constexpr double kMaxRelError = 1e-4;

struct Prompt {
  std::vector<int32_t> tokens;
  std::vector<float> logits;  // tokens.size() rows of vocab floats
};

struct Reference {
  std::string name, arch;
  uint32_t vocab = 0;
  std::vector<Prompt> prompts;
};

Reference load_reference(const std::string& name) {
  const fs::path index_path = kDir / (name + ".json");
  if (!fs::exists(index_path)) throw std::runtime_error("missing reference index " + index_path.string());
  std::ifstream in(index_path);
  const auto j = nlohmann::json::parse(in);
  Reference r;
  r.name = name;
  r.arch = j.at("arch").get<std::string>();
  r.vocab = j.at("vocab").get<uint32_t>();
  const fs::path bin_path = kDir / j.at("logits").get<std::string>();
  if (!fs::exists(bin_path)) throw std::runtime_error("missing reference logits " + bin_path.string());
  std::ifstream bin(bin_path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(bin)), std::istreambuf_iterator<char>());
  if (bytes.size() % sizeof(float) != 0) throw std::runtime_error(bin_path.string() + ": size not a multiple of 4");
  std::vector<float> all(bytes.size() / sizeof(float));
  std::memcpy(all.data(), bytes.data(), bytes.size());  // little-endian host (x86-64, aarch64)
  for (const auto& p : j.at("prompts")) {
    Prompt prompt;
    prompt.tokens = p.at("tokens").get<std::vector<int32_t>>();
    const size_t offset = p.at("logits_offset").get<size_t>();
    const size_t count = prompt.tokens.size() * r.vocab;
    if (offset + count > all.size()) throw std::runtime_error(bin_path.string() + ": too short for its index");
    prompt.logits.assign(all.begin() + static_cast<ptrdiff_t>(offset),
                         all.begin() + static_cast<ptrdiff_t>(offset + count));
    r.prompts.push_back(std::move(prompt));
  }
  if (r.prompts.empty()) throw std::runtime_error(index_path.string() + ": no prompts");
  return r;
}

// KV blocks handed out in a scrambled order, so logical and physical block numbers differ.
struct Pager {
  uint32_t block_size, num_blocks, next = 0;
  std::vector<int32_t> order;
  Pager(uint32_t bs, uint32_t blocks) : block_size(bs), num_blocks(blocks) {
    for (uint32_t i = 0; i < blocks; ++i) order.push_back(static_cast<int32_t>((i * 5 + 3) % blocks));
  }
  void grow(std::vector<int32_t>& table, size_t tokens) {
    while (table.size() * block_size < tokens) table.push_back(order.at(next++));
  }
};

// Compares rows of vellum logits with HF's; returns the worst relative error seen.
double compare_rows(const std::string& what, const float* got, const float* want, size_t rows, uint32_t vocab) {
  double worst = 0;
  for (size_t r = 0; r < rows; ++r) {
    const float* a = got + r * vocab;
    const float* b = want + r * vocab;
    double max_diff = 0, max_ref = 0;
    for (uint32_t i = 0; i < vocab; ++i) {
      max_diff = std::max(max_diff, std::fabs(static_cast<double>(a[i]) - b[i]));
      max_ref = std::max(max_ref, std::fabs(static_cast<double>(b[i])));
    }
    const double rel = max_diff / max_ref;
    worst = std::max(worst, std::isnan(rel) ? INFINITY : rel);
    EXPECT_LE(rel, kMaxRelError) << what << ", position " << r << ": max |diff| " << max_diff << ", max |ref| " << max_ref;
    const auto argmax_a = std::max_element(a, a + vocab) - a;
    const auto argmax_b = std::max_element(b, b + vocab) - b;
    EXPECT_EQ(argmax_a, argmax_b) << what << ", position " << r;
  }
  return worst;
}

class HfReference : public ::testing::TestWithParam<std::string> {};

// A Transformer on a 2-thread CPU backend with a KV pool of `blocks` blocks of `block_size` tokens.
struct Loaded {
  gguf::GgufFile file;
  backend::CpuBackend be{2};
  model::Transformer model;
  Loaded(const std::string& name, uint32_t block_size, uint32_t blocks)
      : file(open(name)), model(file, be) {
    be.init_kv(model.kv_layout(block_size), blocks);
  }
  static gguf::GgufFile open(const std::string& name) {
    const fs::path p = kDir / (name + ".gguf");
    if (!fs::exists(p)) throw std::runtime_error("missing reference model " + p.string());
    return gguf::GgufFile::open(p.string());
  }
};

void report(const std::string& name, const char* mode, double worst) {
  std::printf("[ hf-ref   ] %s %s: worst relative error %.3g (bound %.0e)\n", name.c_str(), mode, worst, kMaxRelError);
  ::testing::Test::RecordProperty(std::string("worst_rel_error_") + mode, std::to_string(worst));
}

TEST_P(HfReference, ModelMatchesConfig) {
  const Reference ref = load_reference(GetParam());
  Loaded m(GetParam(), 16, 8);
  const auto& hp = m.model.hparams();
  EXPECT_EQ(hp.arch_name, ref.arch);
  EXPECT_EQ(hp.vocab, ref.vocab);
  // The references exercise GQA in every model.
  EXPECT_LT(hp.kv_heads, hp.heads);
}

// Each prompt as one prefill, logits for every position.
TEST_P(HfReference, Prefill) {
  const Reference ref = load_reference(GetParam());
  Loaded m(GetParam(), 16, 64);
  double worst = 0;
  for (size_t p = 0; p < ref.prompts.size(); ++p) {
    const Prompt& prompt = ref.prompts[p];
    Pager pager(16, 64);
    std::vector<int32_t> table;
    pager.grow(table, prompt.tokens.size());
    engine::Batch b;
    b.block_size = 16;
    b.add_sequence(prompt.tokens, 0, table, engine::Batch::Logits::All);
    const auto logits = m.model.forward(b);
    ASSERT_EQ(logits.size(), prompt.logits.size());
    worst = std::max(worst, compare_rows(ref.name + " prefill, prompt " + std::to_string(p), logits.data(),
                                         prompt.logits.data(), prompt.tokens.size(), ref.vocab));
  }
  report(ref.name, "prefill", worst);
}

// Each prompt token by token: one decode step per position through a paged KV cache of 4-token blocks.
TEST_P(HfReference, Decode) {
  const Reference ref = load_reference(GetParam());
  Loaded m(GetParam(), 4, 64);
  double worst = 0;
  for (size_t p = 0; p < ref.prompts.size(); ++p) {
    const Prompt& prompt = ref.prompts[p];
    Pager pager(4, 64);
    std::vector<int32_t> table;
    for (size_t i = 0; i < prompt.tokens.size(); ++i) {
      pager.grow(table, i + 1);
      engine::Batch b;
      b.block_size = 4;
      b.add_sequence({prompt.tokens[i]}, static_cast<uint32_t>(i), table, engine::Batch::Logits::Last);
      const auto logits = m.model.forward(b);
      ASSERT_EQ(logits.size(), ref.vocab);
      worst = std::max(worst, compare_rows(ref.name + " decode, prompt " + std::to_string(p) + " token " + std::to_string(i),
                                           logits.data(), prompt.logits.data() + i * ref.vocab, 1, ref.vocab));
    }
  }
  report(ref.name, "decode", worst);
}

// All prompts of the model in one ragged batch (block size 4), logits for every row.
TEST_P(HfReference, OneBatch) {
  const Reference ref = load_reference(GetParam());
  Loaded m(GetParam(), 4, 64);
  Pager pager(4, 64);
  engine::Batch b;
  b.block_size = 4;
  for (const Prompt& prompt : ref.prompts) {
    std::vector<int32_t> table;
    pager.grow(table, prompt.tokens.size());
    b.add_sequence(prompt.tokens, 0, table, engine::Batch::Logits::All);
  }
  const auto logits = m.model.forward(b);
  double worst = 0;
  size_t row = 0;
  for (size_t p = 0; p < ref.prompts.size(); ++p) {
    const Prompt& prompt = ref.prompts[p];
    ASSERT_LE((row + prompt.tokens.size()) * ref.vocab, logits.size());
    worst = std::max(worst, compare_rows(ref.name + " batched, prompt " + std::to_string(p), logits.data() + row * ref.vocab,
                                         prompt.logits.data(), prompt.tokens.size(), ref.vocab));
    row += prompt.tokens.size();
  }
  EXPECT_EQ(row * ref.vocab, logits.size());
  report(ref.name, "batch", worst);
}

// No instantiation prefix, so the tests are named HfReference.<Test>/<model> (--gtest_filter='HfReference*').
INSTANTIATE_TEST_SUITE_P(, HfReference, ::testing::Values("llama", "qwen2", "qwen3"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace vellum
