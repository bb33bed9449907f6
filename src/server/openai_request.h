#pragma once
// Parsing and validation of the bodies of POST /v1/completions and /v1/chat/completions into an
// engine::Request. Every field is type- and range-checked; an error names the field and the allowed
// range (ApiError, status 400, or 404 for an unknown model). Unknown fields are rejected as OpenAI
// rejects them; a few OpenAI fields that do not change generation (user, metadata, store…) are accepted
// and ignored. See docs/server.md for the field table.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace vellum::server {

enum class Endpoint { Completions, Chat };

// What parsing needs to know about the loaded model.
struct ModelInfo {
  const tokenizer::Tokenizer* tokenizer = nullptr;
  const tokenizer::ChatTemplate* chat_template = nullptr;  // null: chat is refused
  uint32_t context = 0;                                    // tokens per sequence
  std::vector<std::string> names;                          // accepted values of "model"
  uint32_t max_n = 64;                                     // choices per request at most
};

struct ParsedRequest {
  Endpoint endpoint = Endpoint::Completions;
  engine::Request request;
  engine::GenerationOptions options;
  bool stream = false;
  bool include_usage = false;      // stream_options.include_usage
  bool echo = false;               // completions: the prompt text precedes the completion
  bool return_token_ids = false;   // extension: token ids with every choice / chunk
  int32_t top_logprobs = -1;       // -1: no logprobs; else alternatives per token
  std::string prompt_text;         // the prompt as text (echo)
};

inline constexpr size_t kMaxStopStrings = 16;
inline constexpr size_t kMaxStopLength = 256;
inline constexpr int32_t kMaxTopLogprobs = 20;

// Throws ApiError.
ParsedRequest parse_request(Endpoint endpoint, const std::string& body, const ModelInfo& model);

// The prompt tokens of a chat body ("messages", "tools", "chat_template_kwargs",
// "add_generation_prompt"), rendered with the model's template; `text` gets the rendered prompt.
std::vector<int32_t> encode_chat(const nlohmann::json& body, const ModelInfo& model, std::string& text);

// The JSON body as an object, or ApiError 400 naming the parse problem.
nlohmann::json parse_body(const std::string& body);

}  // namespace vellum::server
