// Streaming detokenizer, decode rules, special-token handling and the UTF-8 helpers, on real
// vocabularies from fixtures/tokenizers/ggml-vocab.

#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "core/error.h"
#include "gguf/gguf_file.h"
#include "tokenizer/detokenizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"
#include "tokenizer/wpm_tokenizer.h"
#include "tokenizer_test_util.h"

namespace vellum::tokenizer {
namespace {

namespace fs = std::filesystem;

Tokenizer load_vocab(const std::string& name) {
  const fs::path path = testing::fixtures_dir() / "tokenizers" / "ggml-vocab" / ("ggml-vocab-" + name + ".gguf");
  if (!fs::exists(path)) throw std::runtime_error("missing fixture " + path.string());
  return Tokenizer::from_gguf(gguf::GgufFile::open(path.string()));
}

std::string stream_all(const Tokenizer& tok, const std::vector<int32_t>& ids, bool strip, std::vector<std::string>* deltas = nullptr) {
  StreamingDetokenizer detok(tok, strip);
  std::string out;
  for (int32_t id : ids) {
    std::string d = detok.push(id);
    EXPECT_TRUE(unicode::is_valid_utf8(d)) << "delta for token " << id << " is not valid UTF-8";
    if (deltas) deltas->push_back(d);
    out += d;
  }
  const std::string rest = detok.flush();
  EXPECT_TRUE(unicode::is_valid_utf8(rest));
  return out + rest;
}

TEST(TokenizerStream, SpmByteFallbackHeldUntilComplete) {
  const auto tok = load_vocab("llama-spm");
  // From the llama.cpp vectors: the llama is four byte-fallback tokens.
  const std::vector<int32_t> ids = {29871, 445, 338, 29871, 243, 162, 169, 156, 29889, 8223};
  ASSERT_EQ(tok.encode(" this is 🦙.cpp", false, false), ids);
  std::vector<std::string> deltas;
  EXPECT_EQ(stream_all(tok, ids, true, &deltas), " this is 🦙.cpp");
  ASSERT_EQ(deltas.size(), ids.size());
  EXPECT_EQ(deltas[4], "");
  EXPECT_EQ(deltas[5], "");
  EXPECT_EQ(deltas[6], "");
  EXPECT_EQ(deltas[7], "🦙");
}

TEST(TokenizerStream, SpmLeadingSpaceRule) {
  const auto tok = load_vocab("llama-spm");
  const auto ids = tok.encode("Hello world", true, false);
  ASSERT_EQ(ids, (std::vector<int32_t>{1, 15043, 3186}));
  EXPECT_EQ(tok.decode(ids), "Hello world");                  // BOS dropped, dummy-prefix space removed
  EXPECT_EQ(tok.decode(ids, true), "<s>Hello world");          // BOS shown, still no dummy prefix
  EXPECT_EQ(stream_all(tok, ids, true), "Hello world");        // from the start of a sequence
  EXPECT_EQ(stream_all(tok, {3186}, false), " world");         // a continuation keeps its space
  EXPECT_EQ(tok.token_to_piece(15043), " Hello");
}

TEST(TokenizerStream, BpeSplitCharactersAcrossTokens) {
  const auto tok = load_vocab("gpt-2");
  const std::string text = "emoji 🦙🚀👩‍👩‍👧‍👦 and ünïcödé — ✅";
  const auto ids = tok.encode(text, false, false);
  std::vector<std::string> deltas;
  EXPECT_EQ(stream_all(tok, ids, false, &deltas), text);
  size_t held = 0;
  for (const auto& d : deltas) held += d.empty();
  EXPECT_GT(held, 0u) << "expected some tokens to end inside a character";
  EXPECT_EQ(tok.decode(ids), text);
}

TEST(TokenizerStream, InvalidBytesBecomeReplacementCharacters) {
  const auto tok = load_vocab("llama-spm");
  const int32_t ff = tok.vocab().byte_token(0xFF), e2 = tok.vocab().byte_token(0xE2), x82 = tok.vocab().byte_token(0x82);
  const int32_t a = tok.vocab().byte_token('A');
  ASSERT_GE(ff, 0);
  ASSERT_GE(e2, 0);
  StreamingDetokenizer detok(tok);
  EXPECT_EQ(detok.push(ff), "\xEF\xBF\xBD");  // can never be valid: replaced at once
  EXPECT_EQ(detok.push(e2), "");              // could start a character: held
  EXPECT_EQ(detok.push(x82), "");
  EXPECT_EQ(detok.pending(), 2u);
  EXPECT_EQ(detok.push(a), "\xEF\xBF\xBD\xEF\xBF\xBD" "A");  // the character was never completed
  EXPECT_EQ(detok.push(e2), "");
  EXPECT_EQ(detok.flush(), "\xEF\xBF\xBD");
  EXPECT_EQ(detok.pending(), 0u);
}

TEST(TokenizerStream, ControlTokensAreSilentUnlessAsked) {
  const auto tok = load_vocab("llama-spm");
  StreamingDetokenizer quiet(tok, true);
  EXPECT_EQ(quiet.push(1), "");
  EXPECT_EQ(quiet.push(15043), "Hello");  // the leading-space rule skips over BOS
  StreamingDetokenizer loud(tok, false, true);
  EXPECT_EQ(loud.push(2), "</s>");
}

TEST(TokenizerStream, MatchesSanitizedDecodeOnRandomIds) {
  for (const std::string name : {"gpt-2", "llama-spm", "deepseek-llm"}) {
    const auto tok = load_vocab(name);
    std::mt19937 rng(42);
    std::uniform_int_distribution<int32_t> dist(0, static_cast<int32_t>(tok.vocab_size()) - 1);
    for (int round = 0; round < 200; ++round) {
      std::vector<int32_t> ids(1 + rng() % 20);
      for (auto& id : ids) id = dist(rng);
      EXPECT_EQ(stream_all(tok, ids, true), unicode::sanitize_utf8(tok.decode(ids))) << name;
    }
  }
}

TEST(TokenizerSpecial, ParseSpecialOnlyWhenAsked) {
  const auto tok = load_vocab("llama-spm");
  EXPECT_EQ(tok.encode("<s>Hello", false, true), (std::vector<int32_t>{1, 15043}));
  const auto plain = tok.encode("<s>Hello", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 1), 0);
  EXPECT_EQ(tok.decode(plain), "<s>Hello");
}

TEST(TokenizerSpecial, Phi3SpecialTokensStripWhitespaceAfter) {
  // As llama.cpp sets it for Phi-3: special tokens swallow the whitespace after them (rstrip).
  const auto tok = load_vocab("phi-3");
  const int32_t user = tok.vocab().find("<|user|>"), end = tok.vocab().find("<|end|>");
  ASSERT_GE(user, 0);
  ASSERT_GE(end, 0);
  EXPECT_TRUE(tok.vocab().token(user).attr & kAttrRStrip);
  EXPECT_FALSE(tok.vocab().token(tok.bos()).attr & kAttrRStrip);
  EXPECT_EQ(tok.encode("<|user|>\n  Hi<|end|>\n", false, true), tok.encode("<|user|>Hi<|end|>", false, true));
  EXPECT_NE(tok.encode("<s>\nHi", false, true), tok.encode("<s>Hi", false, true));
}

TEST(TokenizerSpecial, WordPieceAddsClsSep) {
  const auto tok = load_vocab("bert-bge");
  const auto ids = tok.encode("Hello, World!", true, false);
  ASSERT_GE(ids.size(), 3u);
  EXPECT_EQ(ids.front(), tok.vocab().cls());
  EXPECT_EQ(ids.back(), tok.vocab().sep());
  EXPECT_EQ(tok.decode(ids), "hello, world!");
  EXPECT_EQ(WpmTokenizer::split_words("Ünïcödé  façade\t中文!"),
            (std::vector<std::string>{"unicode", "facade", "中", "文", "!"}));
}

TEST(TokenizerSpecial, SpecialIdsFromGguf) {
  const auto tok = load_vocab("phi-3");
  EXPECT_EQ(tok.bos(), 1);
  EXPECT_EQ(tok.eos(), 32000);
  EXPECT_TRUE(tok.is_eog(32000));
  EXPECT_EQ(tok.vocab().type(), VocabType::Spm);
  EXPECT_EQ(tok.vocab_size(), 32064u);
}

TEST(TokenizerSpecial, OutOfRangeIdsThrow) {
  const auto tok = load_vocab("gpt-2");
  EXPECT_THROW(tok.decode(std::vector<int32_t>{-1}), Error);
  EXPECT_THROW(tok.token_to_piece(static_cast<int32_t>(tok.vocab_size())), Error);
}

// Huge inputs and repetitions stay fast (no quadratic merging or regex backtracking).
TEST(TokenizerPerformance, HugeRepetitionsAreNotQuadratic) {
  const std::vector<std::string> inputs = {std::string(1 << 20, 'a'), std::string(1 << 20, ' '),
                                           std::string(1 << 19, '\n') + std::string(1 << 19, 'x'),
                                           [] {
                                             std::string s;
                                             while (s.size() < (1 << 20)) s += "🦙 ab1 ";
                                             return s;
                                           }()};
  for (const std::string name : {"llama-spm", "gpt-2", "deepseek-llm", "bert-bge"}) {
    const auto tok = load_vocab(name);
    for (const auto& in : inputs) {
      const auto t0 = std::chrono::steady_clock::now();
      const auto ids = tok.encode(in, false, false);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const bool all_space = in.find_first_not_of(" \n") == std::string::npos;
      EXPECT_TRUE(!ids.empty() || (all_space && tok.vocab().type() == VocabType::Wpm)) << name;
      EXPECT_LT(s, 30.0) << name << ": " << in.size() << " bytes took " << s << " s";
      if (tok.vocab().type() != VocabType::Wpm) {
        EXPECT_EQ(tok.decode(ids), in) << name;
      }
    }
  }
}

TEST(TokenizerUnicode, Utf8Helpers) {
  EXPECT_TRUE(unicode::is_valid_utf8("aé中🦙"));
  EXPECT_FALSE(unicode::is_valid_utf8("\xC0\x80"));      // overlong
  EXPECT_FALSE(unicode::is_valid_utf8("\xED\xA0\x80"));  // surrogate
  EXPECT_FALSE(unicode::is_valid_utf8("\xF4\x90\x80\x80"));
  EXPECT_EQ(unicode::incomplete_suffix("a\xF0\x9F\xA6"), 3u);
  EXPECT_EQ(unicode::incomplete_suffix("a\xE2"), 1u);
  EXPECT_EQ(unicode::incomplete_suffix("a\xE0\x80"), 0u);  // can never complete (overlong)
  EXPECT_EQ(unicode::incomplete_suffix("a\x80"), 0u);
  EXPECT_EQ(unicode::incomplete_suffix("🦙"), 0u);
  EXPECT_EQ(unicode::sanitize_utf8("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
  for (int b = 0; b < 256; ++b) {
    const std::string& u = unicode::byte_to_unicode(static_cast<uint8_t>(b));
    size_t pos = 0;
    uint32_t cp = 0;
    ASSERT_TRUE(unicode::decode(u, pos, cp));
    EXPECT_EQ(unicode::unicode_to_byte(cp), b);
  }
  EXPECT_EQ(unicode::byte_to_unicode(' '), "Ġ");
  EXPECT_TRUE(unicode::is_letter(U'é'));
  EXPECT_TRUE(unicode::is_punctuation(U'!'));
  EXPECT_EQ(unicode::nfd_first(U'é'), U'e');
  EXPECT_EQ(unicode::to_lower(U'Ä'), U'ä');
}

TEST(TokenizerUnicode, Nfc) {
  EXPECT_EQ(unicode::nfc("plain ascii"), "plain ascii");
  EXPECT_EQ(unicode::nfc("e\u0301"), "é");
  EXPECT_EQ(unicode::nfc("Ünïcödé"), "Ünïcödé");
  EXPECT_EQ(unicode::nfc("U\u0308n\u0131"), "Ün\u0131");
  EXPECT_EQ(unicode::nfc("a\u0323\u0302"), "ậ");            // reordered marks compose
  EXPECT_EQ(unicode::nfc("a\u0302\u0323"), "ậ");
  EXPECT_EQ(unicode::nfc("\u1100\u1161\u11A8"), "각");      // Hangul jamo
  EXPECT_EQ(unicode::nfc("\u212B"), "Å");                     // singleton decomposition
  EXPECT_EQ(unicode::nfc("中文 \xFF e\u0301"), "中文 \xFF é");  // invalid bytes kept
  EXPECT_EQ(unicode::nfc("\u0301abc"), "\u0301abc");          // leading mark stays
}

}  // namespace
}  // namespace vellum::tokenizer
