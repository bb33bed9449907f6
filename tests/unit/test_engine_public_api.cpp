// The public API (include/vellum) on the real stories260K model: greedy text equals llama2.c's
// run.c output, n > 1 completions, logprobs, cancellation, and errors as std::runtime_error.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "gguf/llama2c_import.h"
#include "stories_fixture.h"
#include "vellum/vellum.h"

namespace {

namespace fs = std::filesystem;

class PublicApi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!fs::exists(vellum::testing::kStoriesDir / "stories260K.bin")) return;
    path_ = (fs::temp_directory_path() / ("vellum_public_api_" + std::to_string(::getpid()) + ".gguf")).string();
    vellum::gguf::Llama2cConvertOptions o;
    o.model_path = (vellum::testing::kStoriesDir / "stories260K.bin").string();
    o.tokenizer_path = (vellum::testing::kStoriesDir / "tok512.bin").string();
    o.output_path = path_;
    vellum::gguf::convert_llama2c(o);
    vellum::ModelOptions mo;
    mo.model = path_;
    mo.device = "cpu";
    mo.threads = 2;
    model_ = vellum::Model::open(mo).release();
  }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
    if (!path_.empty()) fs::remove(path_);
  }
  void SetUp() override {
    if (model_ == nullptr) GTEST_SKIP() << "fixture not found at " << vellum::testing::kStoriesDir;
  }
  static inline std::string path_;
  static inline vellum::Model* model_ = nullptr;
};

TEST_F(PublicApi, GreedyTextReproducesRunC) {
  std::ifstream in(vellum::testing::kStoriesDir / "greedy-reference.json");
  const auto ref = nlohmann::json::parse(in);
  ASSERT_FALSE(ref["cases"].empty());
  for (const auto& c : ref["cases"]) {
    const std::string prompt = c["prompt"];
    vellum::GenerateOptions o;
    o.temperature = 0;
    o.max_tokens = 300;
    vellum::Stream s = model_->generate(prompt, o);
    std::string text = prompt;
    vellum::FinishReason finish = vellum::FinishReason::None;
    while (auto e = s.next()) {
      text += e->text;
      if (e->finish != vellum::FinishReason::None) finish = e->finish;
    }
    EXPECT_NE(finish, vellum::FinishReason::None);
    EXPECT_EQ(text.rfind(c["expected_text"].get<std::string>(), 0), 0u) << text;
  }
}

TEST_F(PublicApi, CompletionsLogprobsAndCancel) {
  vellum::GenerateOptions o;
  o.temperature = 1.0f;
  o.seed = 11;
  o.n = 3;
  o.max_tokens = 12;
  o.ignore_eos = true;
  o.logprobs = 1;
  vellum::Stream s = model_->generate("Lily and Ben", o);
  std::map<uint32_t, std::vector<int32_t>> out;
  std::map<uint32_t, uint32_t> completion;
  while (auto e = s.next()) {
    ASSERT_EQ(e->logprobs.size(), e->tokens.size());
    out[e->index].insert(out[e->index].end(), e->tokens.begin(), e->tokens.end());
    if (e->finish != vellum::FinishReason::None) {
      EXPECT_EQ(e->finish, vellum::FinishReason::Length);
      completion[e->index] = e->completion_tokens;
    }
  }
  ASSERT_EQ(out.size(), 3u);
  for (auto& [i, toks] : out) {
    EXPECT_EQ(toks.size(), 12u);
    EXPECT_EQ(completion[i], 12u);
  }
  EXPECT_NE(out[0], out[1]);
  EXPECT_TRUE(s.done());
  vellum::Stream moved = std::move(s);
  EXPECT_TRUE(moved.done());
  EXPECT_FALSE(s.next().has_value());  // NOLINT(bugprone-use-after-move): moved-from streams are empty

  vellum::GenerateOptions longer;
  longer.max_tokens = 400;
  longer.ignore_eos = true;
  vellum::Stream c = model_->generate("Once upon a time", longer);
  ASSERT_TRUE(c.next().has_value());
  c.cancel();
  vellum::FinishReason finish = vellum::FinishReason::None;
  size_t tokens = 0;
  while (auto e = c.next()) {
    tokens += e->tokens.size();
    if (e->finish != vellum::FinishReason::None) finish = e->finish;
  }
  EXPECT_EQ(finish, vellum::FinishReason::Aborted);
  EXPECT_LT(tokens, 399u);
}

TEST_F(PublicApi, ErrorsNameTheProblem) {
  vellum::GenerateOptions o;
  o.top_p = 0;
  try {
    model_->generate("x", o);
    ADD_FAILURE() << "top_p 0 accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("top_p"), std::string::npos) << e.what();
  }
  EXPECT_THROW(model_->detokenize({1, 100000}), std::runtime_error);
  vellum::ModelOptions bad;
  bad.model = "/nonexistent/model.gguf";
  try {
    vellum::Model::open(bad);
    ADD_FAILURE() << "a missing file opened";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
  }
  EXPECT_EQ(model_->vocab_size(), 512u);
  EXPECT_EQ(model_->detokenize(model_->tokenize("Once upon a time", false)), "Once upon a time");
}

}  // namespace
