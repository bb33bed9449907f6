#pragma once
// Shapes engine StreamEvents into OpenAI responses: one JSON object for a non-streaming request, or
// Server-Sent-Event chunks for a streaming one (text_completion / chat.completion.chunk objects, an
// optional usage chunk, then "data: [DONE]"). Logprobs in the endpoint's own format: completions'
// {tokens, token_logprobs, top_logprobs, text_offset}, chat's {content: [{token, logprob, bytes,
// top_logprobs}]}.

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "server/openai_request.h"
#include "tokenizer/tokenizer.h"

namespace vellum::server {

class ResponseBuilder {
 public:
  ResponseBuilder(const ParsedRequest& request, const tokenizer::Tokenizer& tokenizer, std::string model);

  // Streaming: the SSE payloads ("data: …\n\n") this event produces (role chunk first for chat).
  std::string sse(const engine::StreamEvent& event);
  // Streaming: the usage chunk when asked for, then [DONE].
  std::string sse_end();

  // Non-streaming: remember an event; body() gives the whole response.
  void add(const engine::StreamEvent& event);
  nlohmann::json body() const;

  nlohmann::json usage() const;
  uint64_t completion_tokens() const { return completion_tokens_; }

 private:
  struct Choice {
    std::string text;
    std::vector<int32_t> tokens;
    std::vector<engine::TokenLogprob> logprobs;
    std::string finish;  // empty while open
    bool started = false;  // chat stream: the role chunk went out
  };
  nlohmann::json logprobs_json(const std::vector<int32_t>& tokens, const std::vector<engine::TokenLogprob>& lps,
                               size_t text_offset) const;
  nlohmann::json envelope() const;
  void count(const engine::StreamEvent& e);

  const ParsedRequest& req_;
  const tokenizer::Tokenizer& tok_;
  std::string model_, id_;
  int64_t created_;
  std::map<uint32_t, Choice> choices_;
  uint64_t prompt_tokens_ = 0, cached_tokens_ = 0, completion_tokens_ = 0;
};

// "stop" | "length" | "abort" | "error"
const char* finish_reason_name(engine::FinishReason reason);

}  // namespace vellum::server
