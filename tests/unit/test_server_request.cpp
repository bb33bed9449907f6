// OpenAI request parsing (server/openai_request): defaults as OpenAI documents them, fields mapped onto
// engine::Request, and errors that name the field, on a real vocabulary (llama.cpp's Llama SPM test
// vocab) and a real chat template (Gemma 2's, which refuses system messages).

#include <gtest/gtest.h>

#include "gguf/gguf_file.h"
#include "server/api_error.h"
#include "server/openai_request.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer_test_util.h"

namespace vellum::server {
namespace {

using tokenizer::testing::fixtures_dir;
using tokenizer::testing::read_file;

class ServerRequestTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const auto file = gguf::GgufFile::open((fixtures_dir() / "tokenizers/ggml-vocab/ggml-vocab-llama-spm.gguf").string());
    tok_ = new tokenizer::Tokenizer(tokenizer::Tokenizer::from_gguf(file));
    tmpl_ = new tokenizer::ChatTemplate(read_file(fixtures_dir() / "chat-templates/templates/google-gemma-2-2b-it.jinja"));
  }
  static void TearDownTestSuite() {
    delete tok_;
    delete tmpl_;
  }
  ModelInfo info() const {
    ModelInfo m;
    m.tokenizer = tok_;
    m.chat_template = tmpl_;
    m.context = 256;
    m.names = {"llama"};
    m.max_n = 8;
    return m;
  }
  // The ApiError a body raises (fails the test when it parses).
  ApiError error_of(Endpoint ep, const std::string& body) const {
    try {
      parse_request(ep, body, info());
    } catch (const ApiError& e) {
      return e;
    }
    ADD_FAILURE() << "parsed: " << body;
    return ApiError(0, "", "");
  }
  static tokenizer::Tokenizer* tok_;
  static tokenizer::ChatTemplate* tmpl_;
};
tokenizer::Tokenizer* ServerRequestTest::tok_ = nullptr;
tokenizer::ChatTemplate* ServerRequestTest::tmpl_ = nullptr;

TEST_F(ServerRequestTest, CompletionDefaultsFollowOpenAI) {
  const auto p = parse_request(Endpoint::Completions, R"({"prompt": "Hello world"})", info());
  EXPECT_EQ(p.request.prompt, tok_->encode("Hello world", true, false));
  EXPECT_EQ(p.request.prompt.front(), 1);  // BOS
  EXPECT_EQ(p.request.max_tokens, 16u);      // OpenAI's completions default
  EXPECT_FLOAT_EQ(p.request.sampling.temperature, 1.0f);
  EXPECT_FLOAT_EQ(p.request.sampling.top_p, 1.0f);
  EXPECT_EQ(p.request.sampling.top_k, 0);
  EXPECT_FLOAT_EQ(p.request.sampling.min_p, 0.0f);
  EXPECT_EQ(p.request.n, 1u);
  EXPECT_EQ(p.request.logprobs, -1);
  EXPECT_FALSE(p.stream);
}

TEST_F(ServerRequestTest, FieldsMapOntoTheEngineRequest) {
  const auto p = parse_request(Endpoint::Completions, R"({"model": "llama", "prompt": [1, 15043], "max_tokens": 5, "n": 3,
      "temperature": 0, "top_k": 7, "min_p": 0.1, "seed": 42, "stop": ["\n", "The end"], "logit_bias": {"15043": -100},
      "frequency_penalty": 0.5, "presence_penalty": -0.5, "repetition_penalty": 1.1, "logprobs": 2, "ignore_eos": true,
      "min_tokens": 2, "stream": true, "stream_options": {"include_usage": true}, "echo": true})",
                               info());
  const auto& r = p.request;
  EXPECT_EQ(r.prompt, (std::vector<int32_t>{1, 15043}));
  EXPECT_EQ(r.max_tokens, 5u);
  EXPECT_EQ(r.n, 3u);
  EXPECT_EQ(r.sampling.top_k, 7);
  EXPECT_EQ(r.sampling.seed, 42u);
  EXPECT_EQ(p.options.stop, (std::vector<std::string>{"\n", "The end"}));
  ASSERT_EQ(r.sampling.logit_bias.size(), 1u);
  EXPECT_EQ(r.sampling.logit_bias[0], (std::pair<int32_t, float>{15043, -100.0f}));
  EXPECT_FLOAT_EQ(r.sampling.frequency_penalty, 0.5f);
  EXPECT_FLOAT_EQ(r.sampling.presence_penalty, -0.5f);
  EXPECT_FLOAT_EQ(r.sampling.repetition_penalty, 1.1f);
  EXPECT_EQ(r.logprobs, 2);
  EXPECT_TRUE(r.ignore_eos);
  EXPECT_EQ(r.min_tokens, 2u);
  EXPECT_TRUE(p.stream && p.include_usage && p.echo);
  EXPECT_EQ(p.prompt_text, tok_->decode(r.prompt));
}

TEST_F(ServerRequestTest, ChatRendersTheTemplateWithOneBos) {
  const auto p = parse_request(Endpoint::Chat, R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
      "logprobs": true, "top_logprobs": 3, "max_completion_tokens": 9})",
                               info());
  // Gemma 2's template writes bos_token itself: "<s>" must become the BOS id once, not BOS + the text.
  ASSERT_GE(p.request.prompt.size(), 2u);
  EXPECT_EQ(p.request.prompt[0], 1);
  EXPECT_NE(p.request.prompt[1], 1);
  EXPECT_EQ(p.prompt_text, "<s><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n");
  EXPECT_EQ(p.request.logprobs, 3);
  EXPECT_EQ(p.request.max_tokens, 9u);
  // Without max_tokens a chat may use the rest of the context.
  const auto q = parse_request(Endpoint::Chat, R"({"messages": [{"role": "user", "content": "Hi"}]})", info());
  EXPECT_EQ(q.request.max_tokens, 256u - q.request.prompt.size());
}

TEST_F(ServerRequestTest, ErrorsNameTheFieldAndTheRange) {
  auto e = error_of(Endpoint::Completions, R"({"prompt": "x", "temperature": 2.5})");
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.param, "temperature");
  EXPECT_NE(std::string(e.what()).find("[0, 2]"), std::string::npos) << e.what();

  e = error_of(Endpoint::Completions, R"({"prompt": "x", "max_tokens": 18446744073709551615})");
  EXPECT_EQ(e.param, "max_tokens");
  e = error_of(Endpoint::Completions, R"({"prompt": "x", "max_tokens": 300})");
  EXPECT_EQ(e.code, "context_length_exceeded");
  e = error_of(Endpoint::Completions, R"({"prompt": "x", "n": 9})");
  EXPECT_EQ(e.param, "n");
  e = error_of(Endpoint::Completions, R"({"prompt": "x", "model": "gpt-4"})");
  EXPECT_EQ(e.status, 404);
  EXPECT_EQ(e.code, "model_not_found");
  e = error_of(Endpoint::Completions, R"({"prompt": ["a", "b"]})");
  EXPECT_EQ(e.param, "prompt");
  e = error_of(Endpoint::Chat, R"({"messages": [{"role": "system", "content": "x"}, {"role": "user", "content": "y"}]})");
  EXPECT_NE(std::string(e.what()).find("System role not supported"), std::string::npos) << e.what();
  e = error_of(Endpoint::Chat, R"({"messages": [{"role": "user", "content": "x"}], "echo": true})");
  EXPECT_EQ(e.param, "echo");  // a completions-only field
  e = error_of(Endpoint::Chat, R"({"messages": [{"role": "user", "content": 5}]})");
  EXPECT_EQ(e.param, "messages[0].content");
  // The error body has exactly OpenAI's four fields.
  const auto j = e.to_json();
  EXPECT_EQ(j["error"].size(), 4u);
  EXPECT_EQ(j["error"]["type"], "invalid_request_error");
  EXPECT_TRUE(j["error"]["code"].is_null());
}

}  // namespace
}  // namespace vellum::server
