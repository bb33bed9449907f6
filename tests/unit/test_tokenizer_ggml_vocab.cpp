// Acceptance: every fixtures/tokenizers/ggml-vocab/*.gguf that has .inp/.out files (llama.cpp's
// tokenizer test vectors, produced by Hugging Face tokenizers) encodes each input to exactly the
// expected ids without BOS, and decodes back to the input where the tokenizer is lossless.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer_test_util.h"

namespace vellum::tokenizer {
namespace {

using testing::fixtures_dir;

// Known failures, by vocabulary file and case index (0-based): checked to still fail, so that a fix
// shows up here. Empty when everything passes.
const std::map<std::string, std::set<size_t>> kKnownFailures = {};

// Vocabularies whose normalizer loses information (WordPiece lowercases and strips accents).
bool lossless(const Tokenizer& t) { return t.vocab().type() != VocabType::Wpm; }

std::vector<std::filesystem::path> vocab_files() {
  std::vector<std::filesystem::path> out;
  const auto dir = fixtures_dir() / "tokenizers" / "ggml-vocab";
  if (!std::filesystem::is_directory(dir)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".gguf") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(TokenizerGgmlVocab, FixturesPresent) {
  const auto dir = fixtures_dir() / "tokenizers" / "ggml-vocab";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << "missing fixture directory " << dir;
  size_t with_cases = 0;
  for (const auto& p : vocab_files()) with_cases += std::filesystem::exists(p.string() + ".inp");
  EXPECT_GE(with_cases, 10u) << "expected the llama.cpp vocab test vectors in " << dir;
}

TEST(TokenizerGgmlVocab, AllVocabulariesLoad) {
  for (const auto& path : vocab_files()) {
    SCOPED_TRACE(path.filename().string());
    const auto file = gguf::GgufFile::open(path.string());
    const auto tok = Tokenizer::from_gguf(file);
    EXPECT_GT(tok.vocab_size(), 1000u);
    // Encoding something must work for every vocabulary, with or without test vectors.
    const auto ids = tok.encode("Hello world! 123 ünïcode 🦙", true, false);
    EXPECT_FALSE(ids.empty());
  }
}

class TokenizerGgmlVocabCases : public ::testing::TestWithParam<std::string> {};

TEST_P(TokenizerGgmlVocabCases, EncodeExactAndRoundTrip) {
  const auto path = fixtures_dir() / "tokenizers" / "ggml-vocab" / GetParam();
  const std::string inp_path = path.string() + ".inp", out_path = path.string() + ".out";
  ASSERT_TRUE(std::filesystem::exists(path)) << "missing fixture " << path;
  ASSERT_TRUE(std::filesystem::exists(inp_path)) << "missing fixture " << inp_path;
  ASSERT_TRUE(std::filesystem::exists(out_path)) << "missing fixture " << out_path;
  const auto inputs = testing::split_vocab_inputs(testing::read_file(inp_path));
  const auto expected = testing::parse_vocab_outputs(testing::read_file(out_path));
  ASSERT_EQ(inputs.size(), expected.size()) << "case count mismatch between .inp and .out";
  ASSERT_FALSE(inputs.empty());

  const auto file = gguf::GgufFile::open(path.string());
  const auto tok = Tokenizer::from_gguf(file);
  const auto known_it = kKnownFailures.find(GetParam());
  size_t failures = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const bool known = known_it != kKnownFailures.end() && known_it->second.count(i);
    const auto ids = tok.encode(inputs[i], /*add_bos=*/false, /*parse_special=*/false);
    if (known) {
      EXPECT_NE(ids, expected[i]) << "case " << i << " is listed as a known failure but passes now: remove it";
      continue;
    }
    EXPECT_EQ(testing::ids_string(ids), testing::ids_string(expected[i]))
        << "case " << i << " input '" << inputs[i] << "'";
    failures += ids != expected[i];
    if (lossless(tok)) {
      EXPECT_EQ(tok.decode(ids), inputs[i]) << "case " << i << " does not round-trip";
    }
  }
  EXPECT_EQ(failures, 0u) << GetParam();
}

std::vector<std::string> vocab_case_names() {
  std::vector<std::string> out;
  for (const auto& p : vocab_files()) {
    if (std::filesystem::exists(p.string() + ".inp")) out.push_back(p.filename().string());
  }
  return out;
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  s = s.substr(0, s.find(".gguf"));
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

INSTANTIATE_TEST_SUITE_P(TokenizerFixtures, TokenizerGgmlVocabCases, ::testing::ValuesIn(vocab_case_names()), param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TokenizerGgmlVocabCases);

}  // namespace
}  // namespace vellum::tokenizer
