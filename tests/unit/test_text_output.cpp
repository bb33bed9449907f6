// Streaming text with stop strings: held back while they may still match, cut when they do, across
// token boundaries and multi-byte characters.

#include <gtest/gtest.h>

#include <filesystem>

#include "engine/text_output.h"
#include "gguf/gguf_file.h"

namespace vellum::engine {
namespace {

namespace fs = std::filesystem;

const fs::path kVocab = fs::path(VELLUM_FIXTURES_DIR) / "tokenizers" / "ggml-vocab" / "ggml-vocab-llama-spm.gguf";

class TextOutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kVocab)) GTEST_SKIP() << "fixture not found at " << kVocab;
    file_ = std::make_unique<gguf::GgufFile>(gguf::GgufFile::open(kVocab.string()));
    tok_ = std::make_unique<tokenizer::Tokenizer>(tokenizer::Tokenizer::from_gguf(*file_));
  }
  // Streams `text` token by token; returns the deltas and whether it stopped.
  std::pair<std::vector<std::string>, bool> stream(const std::string& text, std::vector<std::string> stops) {
    TextOutput out(*tok_, std::move(stops), true);
    std::vector<std::string> deltas;
    for (int32_t id : tok_->encode(text, false, false)) {
      auto d = out.push(id);
      deltas.push_back(d.text);
      if (d.stopped) return {deltas, true};
    }
    deltas.push_back(out.finish());
    return {deltas, false};
  }
  std::unique_ptr<gguf::GgufFile> file_;
  std::unique_ptr<tokenizer::Tokenizer> tok_;
};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x;
  return s;
}

TEST_F(TextOutputTest, NoStopStringsGivesTheWholeText) {
  const auto [deltas, stopped] = stream("Hello world, how are you?", {});
  EXPECT_FALSE(stopped);
  EXPECT_EQ(join(deltas), "Hello world, how are you?");
}

TEST_F(TextOutputTest, StopStringSpanningTokensCutsTheText) {
  // "are you" spans several tokens; nothing of it may be released before the match is known
  const auto [deltas, stopped] = stream("Hello world, how are you?", {"are you"});
  EXPECT_TRUE(stopped);
  EXPECT_EQ(join(deltas), "Hello world, how ");
  for (const auto& d : deltas) EXPECT_EQ(d.find("are"), std::string::npos) << "stop text leaked: " << d;
}

TEST_F(TextOutputTest, PartialMatchIsReleasedWhenItFails) {
  const auto [deltas, stopped] = stream("the cat and the dog", {"the dot"});
  EXPECT_FALSE(stopped);
  EXPECT_EQ(join(deltas), "the cat and the dog");
}

// Before min_tokens stop strings are not matched; matching resumes in the text that follows.
TEST_F(TextOutputTest, StopStringsWaitForMinTokens) {
  const std::string full = join(stream("two one two three two four", {}).first);
  ASSERT_EQ(full, "two one two three two four");
  const auto ids = tok_->encode(full, false, false);
  TextOutput out(*tok_, {"two"}, true);
  std::string text, before;
  bool stopped = false;
  for (size_t i = 0; i < ids.size() && !stopped; ++i) {
    const auto d = out.push(ids[i], i >= 2);  // the first two tokens come before min_tokens
    text += d.text;
    if (i == 1) before = text;
    stopped = d.stopped;
  }
  ASSERT_NE(before.find("two"), std::string::npos) << "the first two tokens should hold a stop string: " << before;
  EXPECT_TRUE(stopped);
  EXPECT_EQ(text, full.substr(0, full.find("two", before.size())));
}

TEST_F(TextOutputTest, EarliestOfSeveralStopStringsWins) {
  const auto [deltas, stopped] = stream("one two three four", {"four", "two"});
  EXPECT_TRUE(stopped);
  EXPECT_EQ(join(deltas), "one ");
}

TEST_F(TextOutputTest, MultiByteCharactersAreNeverSplit) {
  const std::string text = "naïve café – 日本語 🙂 done";
  const auto [deltas, stopped] = stream(text, {"🙂"});
  EXPECT_TRUE(stopped);
  EXPECT_EQ(join(deltas), "naïve café – 日本語 ");
  for (const auto& d : deltas) {
    // each delta is valid UTF-8 on its own
    size_t i = 0;
    while (i < d.size()) {
      const unsigned char c = static_cast<unsigned char>(d[i]);
      const size_t len = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
      ASSERT_LE(i + len, d.size()) << "split character in delta";
      for (size_t k = 1; k < len; ++k) ASSERT_EQ(static_cast<unsigned char>(d[i + k]) & 0xc0, 0x80);
      i += len;
    }
  }
}

}  // namespace
}  // namespace vellum::engine
