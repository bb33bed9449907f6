// Vocab loading from synthetic metadata: validation errors, defaults, and the merge rules on tiny
// hand-made vocabularies (independent of the fixtures).

#include <gtest/gtest.h>

#include "core/error.h"
#include "gguf/metadata.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"
#include "tokenizer/vocab.h"

namespace vellum::tokenizer {
namespace {

using gguf::Metadata;
using gguf::Value;

Metadata bpe_metadata(const std::vector<std::string>& extra_tokens, const std::vector<std::string>& merges) {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.push_back(unicode::byte_to_unicode(static_cast<uint8_t>(b)));
  tokens.insert(tokens.end(), extra_tokens.begin(), extra_tokens.end());
  Metadata md;
  md.set("tokenizer.ggml.model", Value::string("gpt2"));
  md.set("tokenizer.ggml.pre", Value::string("gpt-2"));
  md.set("tokenizer.ggml.tokens", Value::string_array(tokens));
  md.set("tokenizer.ggml.merges", Value::string_array(merges));
  return md;
}

TEST(TokenizerVocab, RejectsBadMetadata) {
  Metadata md;
  EXPECT_THROW(Vocab::from_metadata(md), Error);  // no tokenizer at all
  md.set("tokenizer.ggml.model", Value::string("t5"));
  md.set("tokenizer.ggml.tokens", Value::string_array({"a", "b"}));
  EXPECT_THROW(Vocab::from_metadata(md), Error);  // unsupported model
  md.set("tokenizer.ggml.model", Value::string("llama"));
  md.set("tokenizer.ggml.scores", Value::f32_array({0.0f}));
  EXPECT_THROW(Vocab::from_metadata(md), Error);  // scores length mismatch
  md.erase("tokenizer.ggml.scores");
  md.set("tokenizer.ggml.token_type", Value::string_array({"x", "y"}));
  EXPECT_THROW(Vocab::from_metadata(md), Error);  // wrong array type
  md.erase("tokenizer.ggml.token_type");
  md.set("tokenizer.ggml.tokens", Value::string_array({}));
  EXPECT_THROW(Vocab::from_metadata(md), Error);  // empty
  Metadata bpe = bpe_metadata({}, {});
  bpe.erase("tokenizer.ggml.merges");
  EXPECT_THROW(Vocab::from_metadata(bpe), Error);  // BPE without merges
  Metadata pre = bpe_metadata({}, {});
  pre.set("tokenizer.ggml.pre", Value::string("no-such-pre-tokenizer"));
  EXPECT_THROW(Tokenizer::from_metadata(pre), Error);
}

TEST(TokenizerVocab, OutOfRangeSpecialIdsAreDropped) {
  Metadata md = bpe_metadata({}, {});
  md.set("tokenizer.ggml.bos_token_id", Value::u32(100000));
  md.set("tokenizer.ggml.eos_token_id", Value::u32(5));
  const auto v = Vocab::from_metadata(md);
  EXPECT_EQ(v.bos(), -1);
  EXPECT_EQ(v.eos(), 5);
  EXPECT_FALSE(v.add_bos());
}

TEST(TokenizerVocab, BpeMergesByRankThenLeftmost) {
  // "ab" (rank 0) beats "bc" (rank 1); then "abc" via "ab c" (rank 2).
  const Metadata md = bpe_metadata({"ab", "bc", "abc", "cc"}, {"a b", "b c", "ab c", "c c"});
  const auto tok = Tokenizer::from_metadata(md);
  const auto& v = tok.vocab();
  EXPECT_EQ(tok.encode("abc", false, false), std::vector<int32_t>{v.find("abc")});
  // Equal ranks resolve leftmost first: "ccc" -> "cc" + "c".
  EXPECT_EQ(tok.encode("ccc", false, false), (std::vector<int32_t>{v.find("cc"), v.find("c")}));
  EXPECT_EQ(tok.encode("bcab", false, false), (std::vector<int32_t>{v.find("bc"), v.find("ab")}));
  EXPECT_EQ(tok.decode(tok.encode("abc ccc\xff", false, false)), "abc ccc\xff");
}

TEST(TokenizerVocab, SpmScoresAndByteFallback) {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>", "\xe2\x96\x81", "a", "b", "ab", "\xe2\x96\x81" "ab"};
  std::vector<float> scores = {0, 0, 0, -1, -2, -2, -1, -0.5f};
  std::vector<int32_t> types = {2, 3, 3, 1, 1, 1, 1, 1};
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(fmt::format("<0x{:02X}>", b));
    scores.push_back(0);
    types.push_back(6);
  }
  Metadata md;
  md.set("tokenizer.ggml.model", Value::string("llama"));
  md.set("tokenizer.ggml.tokens", Value::string_array(tokens));
  md.set("tokenizer.ggml.scores", Value::f32_array(scores));
  md.set("tokenizer.ggml.token_type", Value::i32_array(types));
  const auto tok = Tokenizer::from_metadata(md);
  EXPECT_TRUE(tok.vocab().add_bos());
  EXPECT_EQ(tok.bos(), 1);
  EXPECT_EQ(tok.encode("ab", true, false), (std::vector<int32_t>{1, 7}));
  // 'c' has no piece: byte fallback.
  const auto ids = tok.encode("abc", false, false);
  EXPECT_EQ(ids, (std::vector<int32_t>{7, 8 + 'c'}));
  EXPECT_EQ(tok.decode(ids), "abc");
  EXPECT_EQ(tok.decode(tok.encode("a b é", false, false)), "a b é");
}

}  // namespace
}  // namespace vellum::tokenizer
