// The tokenizer CLIs end to end: vellum tokenize, vellum detokenize, vellum gguf convert-tokenizer.

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "tokenizer_test_util.h"

namespace vellum::tokenizer {
namespace {

namespace fs = std::filesystem;

// Runs a shell command, returns (exit status, stdout).
std::pair<int, std::string> run(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return {-1, out};
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

const std::string kVellum = VELLUM_BINARY;

TEST(TokenizerCli, TokenizeAndDetokenize) {
  const fs::path vocab = testing::fixtures_dir() / "tokenizers/ggml-vocab/ggml-vocab-llama-spm.gguf";
  ASSERT_TRUE(fs::exists(vocab)) << "missing fixture " << vocab;
  const std::string m = " -m " + quote(vocab.string());
  auto [rc, out] = run(kVellum + " tokenize" + m + " 'Hello world'");
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(out, "1 15043 3186\n");
  std::tie(rc, out) = run(kVellum + " tokenize --no-bos" + m + " 'Hello world'");
  EXPECT_EQ(out, "15043 3186\n");
  std::tie(rc, out) = run(kVellum + " tokenize --no-bos --special" + m + " '<s>Hello'");
  EXPECT_EQ(out, "1 15043\n");
  std::tie(rc, out) = run(kVellum + " detokenize" + m + " 1 15043 3186");
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(out, "Hello world\n");
  std::tie(rc, out) = run(kVellum + " detokenize" + m + " 99999999 2>&1");
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("out of range"), std::string::npos) << out;
}

TEST(TokenizerCli, ConvertTokenizer) {
  const fs::path dir = testing::fixtures_dir() / "tokenizers/hf/qwen3";
  ASSERT_TRUE(fs::exists(dir / "tokenizer.json")) << "missing fixture " << dir / "tokenizer.json";
  const fs::path out_path = fs::temp_directory_path() / ("vellum_cli_qwen3_" + std::to_string(::getpid()) + ".gguf");
  auto [rc, out] = run(kVellum + " gguf convert-tokenizer " + quote((dir / "tokenizer.json").string()) + " " +
                       quote((dir / "tokenizer_config.json").string()) + " " + quote(out_path.string()));
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("pre-tokenizer qwen2"), std::string::npos) << out;
  std::tie(rc, out) = run(kVellum + " tokenize --special -m " + quote(out_path.string()) +
                          " \"$(printf '<|im_start|>user\\nhi<|im_end|>')\"");
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(out, "151644 872 198 6023 151645\n");
  fs::remove(out_path);
  std::tie(rc, out) = run(kVellum + " gguf convert-tokenizer /nonexistent/tokenizer.json " + quote(out_path.string()) + " 2>&1");
  EXPECT_EQ(rc, 1);
  EXPECT_FALSE(fs::exists(out_path));
}

}  // namespace
}  // namespace vellum::tokenizer
