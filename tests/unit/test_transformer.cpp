// The CPU forward on the real stories260K model: llama2.c's run.c greedy outputs reproduced exactly
// through a paged KV cache, and batch invariance (bitwise-equal logits whatever the chunking, block
// size, thread count and batch company).

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "backend/cpu/cpu_backend.h"
#include "core/error.h"
#include "gguf/llama2c_import.h"
#include "model/transformer.h"
#include "stories_fixture.h"

namespace vellum {
namespace {

namespace fs = std::filesystem;

const fs::path kStories = fs::path(VELLUM_FIXTURES_DIR) / "stories260K";

// The real stories260K, converted once per process (removed at exit).
const std::string& stories_gguf() { return testing::stories_model_path(); }

// A KV cache of fixed-size blocks handed out in a scrambled order, so that logical and physical
// block numbers differ (the attention must really go through the block table).
struct Pager {
  uint32_t block_size, next = 0, num_blocks;
  std::vector<int32_t> order;
  Pager(uint32_t bs, uint32_t blocks) : block_size(bs), num_blocks(blocks) {
    for (uint32_t i = 0; i < blocks; ++i) order.push_back(static_cast<int32_t>((i * 7 + 3) % blocks));
  }
  void grow(std::vector<int32_t>& table, uint32_t tokens) {
    while (table.size() * block_size < tokens) table.push_back(order.at(next++));
  }
};

int argmax(const float* v, size_t n) { return static_cast<int>(std::max_element(v, v + n) - v); }

// Greedy generation of one sequence, prompt fed in chunks of `chunk` tokens.
std::vector<int32_t> generate(model::Transformer& m, Pager& pager, std::vector<int32_t> ids, size_t total,
                              size_t chunk) {
  std::vector<int32_t> table;
  uint32_t n_past = 0;
  while (ids.size() < total) {
    const size_t n_new = std::min(chunk, ids.size() - n_past);
    std::vector<int32_t> toks(ids.begin() + n_past, ids.begin() + static_cast<ptrdiff_t>(n_past + n_new));
    pager.grow(table, n_past + static_cast<uint32_t>(n_new));
    engine::Batch b;
    b.block_size = pager.block_size;
    const bool last_chunk = n_past + n_new == ids.size();
    b.add_sequence(toks, n_past, table, last_chunk ? engine::Batch::Logits::Last : engine::Batch::Logits::None);
    const auto logits = m.forward(b);
    n_past += static_cast<uint32_t>(n_new);
    if (last_chunk) ids.push_back(argmax(logits.data(), logits.size()));
  }
  return ids;
}

// run.c's prompt encoding: dummy prefix, characters (or byte tokens), then best-score merges.
std::vector<int32_t> encode_like_run_c(const gguf::GgufFile& f, const std::string& text) {
  const auto tokens = f.metadata().get_array<std::string>("tokenizer.ggml.tokens");
  const auto scores = f.metadata().get_array<float>("tokenizer.ggml.scores");
  std::map<std::string, int32_t> index;
  for (size_t i = 0; i < tokens.size(); ++i) index.emplace(tokens[i], static_cast<int32_t>(i));
  std::vector<int32_t> ids;
  if (text.empty()) return ids;
  std::string s = "\xe2\x96\x81";
  for (char c : text) s += c == ' ' ? std::string("\xe2\x96\x81") : std::string(1, c);
  for (size_t i = 0; i < s.size();) {
    size_t len = 1;
    while (i + len < s.size() && (static_cast<unsigned char>(s[i + len]) & 0xc0) == 0x80) ++len;
    auto it = index.find(s.substr(i, len));
    if (it != index.end()) {
      ids.push_back(it->second);
    } else {
      for (size_t k = 0; k < len; ++k) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "<0x%02X>", static_cast<unsigned char>(s[i + k]));
        ids.push_back(index.at(buf));
      }
    }
    i += len;
  }
  for (;;) {
    float best = -1e30f;
    int best_i = -1, best_id = -1;
    for (size_t i = 0; i + 1 < ids.size(); ++i) {
      auto it = index.find(tokens[static_cast<size_t>(ids[i])] + tokens[static_cast<size_t>(ids[i + 1])]);
      if (it != index.end() && scores[static_cast<size_t>(it->second)] > best) {
        best = scores[static_cast<size_t>(it->second)];
        best_i = static_cast<int>(i);
        best_id = it->second;
      }
    }
    if (best_i < 0) return ids;
    ids[static_cast<size_t>(best_i)] = best_id;
    ids.erase(ids.begin() + best_i + 1);
  }
}

std::string decode_like_run_c(const gguf::GgufFile& f, const std::vector<int32_t>& ids) {
  const auto tokens = f.metadata().get_array<std::string>("tokenizer.ggml.tokens");
  std::string out;
  for (size_t i = 1; i < ids.size(); ++i) {
    std::string piece = tokens[static_cast<size_t>(ids[i])];
    if (piece.size() == 6 && piece.rfind("<0x", 0) == 0) {
      out += static_cast<char>(std::stoi(piece.substr(3, 2), nullptr, 16));
      continue;
    }
    std::string text;
    for (size_t k = 0; k < piece.size();) {
      if (piece.compare(k, 3, "\xe2\x96\x81") == 0) {
        text += ' ';
        k += 3;
      } else {
        text += piece[k++];
      }
    }
    if (ids[i - 1] == 1 && !text.empty() && text[0] == ' ') text.erase(0, 1);
    out += text;
  }
  return out;
}

class Stories : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kStories / "stories260K.bin")) GTEST_SKIP() << "fixture not found at " << kStories;
  }
};

TEST_F(Stories, GreedyMatchesRunC) {
  const auto f = gguf::GgufFile::open(stories_gguf());
  std::ifstream in(kStories / "greedy-reference.json");
  const auto ref = nlohmann::json::parse(in);
  ASSERT_FALSE(ref["cases"].empty());
  for (const uint32_t block_size : {16u, 7u}) {
    backend::CpuBackend be(2);
    model::Transformer m(f, be);
    be.init_kv(m.kv_layout(block_size), 64);
    for (const auto& c : ref["cases"]) {
      Pager pager(block_size, 64);
      std::vector<int32_t> ids{1};
      for (int32_t id : encode_like_run_c(f, c["prompt"])) ids.push_back(id);
      // run.c forwards positions 0..159 and prints the token chosen at each: 161 tokens with BOS
      const auto out = generate(m, pager, ids, 161, 5);
      EXPECT_EQ(decode_like_run_c(f, out), c["expected_text"].get<std::string>()) << "block size " << block_size;
    }
  }
}

std::vector<float> prompt_logits(const gguf::GgufFile& f, unsigned threads, uint32_t block_size, size_t chunk,
                                 bool with_company) {
  backend::CpuBackend be(threads);
  model::Transformer m(f, be);
  be.init_kv(m.kv_layout(block_size), 128);
  Pager pager(block_size, 128);
  std::vector<int32_t> prompt;
  for (int i = 0; i < 40; ++i) prompt.push_back(1 + (i * 37) % 500);
  std::vector<int32_t> table, other_table;
  std::vector<float> all;
  uint32_t n_past = 0, other_past = 0;
  while (n_past < prompt.size()) {
    const size_t n_new = std::min(chunk, prompt.size() - n_past);
    pager.grow(table, n_past + static_cast<uint32_t>(n_new));
    engine::Batch b;
    b.block_size = block_size;
    if (with_company) {  // an unrelated sequence decoding alongside
      pager.grow(other_table, other_past + 3);
      b.add_sequence({5, 6, 7}, other_past, other_table, engine::Batch::Logits::All);
      other_past += 3;
    }
    b.add_sequence(std::vector<int32_t>(prompt.begin() + n_past, prompt.begin() + static_cast<ptrdiff_t>(n_past + n_new)),
                   n_past, table, engine::Batch::Logits::All);
    auto logits = m.forward(b);
    const size_t skip = with_company ? 3 * m.hparams().vocab : 0;
    all.insert(all.end(), logits.begin() + static_cast<ptrdiff_t>(skip), logits.end());
    n_past += static_cast<uint32_t>(n_new);
  }
  return all;
}

TEST_F(Stories, LogitsAreBatchInvariant) {
  const auto f = gguf::GgufFile::open(stories_gguf());
  const auto reference = prompt_logits(f, 1, 16, 40, false);
  ASSERT_EQ(reference.size(), 40u * 512);
  EXPECT_EQ(prompt_logits(f, 2, 16, 40, false), reference) << "thread count";
  EXPECT_EQ(prompt_logits(f, 2, 5, 40, false), reference) << "block size";
  EXPECT_EQ(prompt_logits(f, 2, 16, 1, false), reference) << "chunk size 1";
  EXPECT_EQ(prompt_logits(f, 2, 16, 7, false), reference) << "chunk size 7";
  EXPECT_EQ(prompt_logits(f, 2, 3, 9, true), reference) << "batched with another sequence";
}

TEST_F(Stories, BadBatchesAreErrors) {
  const auto f = gguf::GgufFile::open(stories_gguf());
  backend::CpuBackend be(1);
  model::Transformer m(f, be);
  be.init_kv(m.kv_layout(16), 4);
  engine::Batch b;
  b.add_sequence({1, 2, 3}, 0, {}, engine::Batch::Logits::Last);  // no blocks
  EXPECT_THROW(m.forward(b), Error);
  engine::Batch c;
  c.add_sequence({1, 2, 3}, 0, {9}, engine::Batch::Logits::Last);  // block outside the pool
  EXPECT_THROW(m.forward(c), Error);
  engine::Batch d;
  d.add_sequence({1, 600}, 0, {0}, engine::Batch::Logits::Last);  // token outside the vocabulary
  EXPECT_THROW(m.forward(d), Error);
}

}  // namespace
}  // namespace vellum
