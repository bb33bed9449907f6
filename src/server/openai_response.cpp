#include "server/openai_response.h"

#include <chrono>
#include <random>

#include <fmt/format.h>

#include "server/api_error.h"

namespace vellum::server {

using json = nlohmann::json;

const char* finish_reason_name(engine::FinishReason reason) {
  switch (reason) {
    case engine::FinishReason::Stop: return "stop";
    case engine::FinishReason::Length: return "length";
    case engine::FinishReason::Aborted: return "abort";
    case engine::FinishReason::Error: return "error";
    case engine::FinishReason::None: break;
  }
  return "";
}

ResponseBuilder::ResponseBuilder(const ParsedRequest& request, const tokenizer::Tokenizer& tokenizer, std::string model)
    : req_(request), tok_(tokenizer), model_(std::move(model)) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  id_ = fmt::format("{}-{:016x}", request.endpoint == Endpoint::Chat ? "chatcmpl" : "cmpl", rng());
  created_ = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  prompt_tokens_ = request.request.prompt.size();
  for (uint32_t i = 0; i < request.request.n; ++i) choices_[i];
}

json ResponseBuilder::envelope() const {
  const bool chat = req_.endpoint == Endpoint::Chat;
  const bool stream = req_.stream;
  return {{"id", id_},
          {"object", chat ? (stream ? "chat.completion.chunk" : "chat.completion") : "text_completion"},
          {"created", created_},
          {"model", model_}};
}

json ResponseBuilder::logprobs_json(const std::vector<int32_t>& tokens, const std::vector<engine::TokenLogprob>& lps,
                                    size_t text_offset) const {
  const size_t n = std::min(tokens.size(), lps.size());
  auto bytes = [](const std::string& s) {
    json b = json::array();
    for (unsigned char c : s) b.push_back(c);
    return b;
  };
  if (req_.endpoint == Endpoint::Chat) {
    json content = json::array();
    for (size_t i = 0; i < n; ++i) {
      const auto piece = tok_.token_to_piece(lps[i].token);
      json top = json::array();
      for (const auto& [id, lp] : lps[i].top) {
        const auto p = tok_.token_to_piece(id);
        top.push_back({{"token", p}, {"logprob", lp}, {"bytes", bytes(p)}});
      }
      content.push_back({{"token", piece}, {"logprob", lps[i].logprob}, {"bytes", bytes(piece)}, {"top_logprobs", top}});
    }
    return {{"content", content}};
  }
  json toks = json::array(), lp = json::array(), top = json::array(), offs = json::array();
  for (size_t i = 0; i < n; ++i) {
    const auto piece = tok_.token_to_piece(lps[i].token);
    toks.push_back(piece);
    lp.push_back(lps[i].logprob);
    json alts = json::object();
    for (const auto& [id, l] : lps[i].top) alts[tok_.token_to_piece(id)] = l;
    top.push_back(alts);
    offs.push_back(text_offset);
    text_offset += piece.size();
  }
  return {{"tokens", toks}, {"token_logprobs", lp}, {"top_logprobs", top}, {"text_offset", offs}};
}

void ResponseBuilder::count(const engine::StreamEvent& e) {
  if (e.finish == engine::FinishReason::None) return;
  completion_tokens_ += e.completion_tokens;
  if (e.prompt_tokens) prompt_tokens_ = e.prompt_tokens;
  cached_tokens_ = std::max<uint64_t>(cached_tokens_, e.cached_tokens);
}

json ResponseBuilder::usage() const {
  return {{"prompt_tokens", prompt_tokens_},
          {"completion_tokens", completion_tokens_},
          {"total_tokens", prompt_tokens_ + completion_tokens_},
          {"prompt_tokens_details", {{"cached_tokens", cached_tokens_}}}};
}

std::string ResponseBuilder::sse(const engine::StreamEvent& e) {
  count(e);
  Choice& c = choices_[e.index];
  const bool chat = req_.endpoint == Endpoint::Chat;
  std::string out;
  auto emit = [&](json choice) {
    json chunk = envelope();
    chunk["choices"] = json::array({std::move(choice)});
    if (req_.include_usage) chunk["usage"] = nullptr;
    out += "data: " + dump_json(chunk) + "\n\n";
  };
  if (chat && !c.started) {
    c.started = true;
    emit({{"index", e.index}, {"delta", {{"role", "assistant"}, {"content", ""}}}, {"logprobs", nullptr}, {"finish_reason", nullptr}});
  }
  if (!c.started && !chat && req_.echo) {
    c.started = true;
    emit({{"index", e.index}, {"text", req_.prompt_text}, {"logprobs", nullptr}, {"finish_reason", nullptr}});
  }
  c.started = true;
  const char* finish = finish_reason_name(e.finish);
  if (e.text.empty() && e.tokens.empty() && !*finish) return out;
  json choice = {{"index", e.index}};
  if (chat) {
    choice["delta"] = e.text.empty() ? json::object() : json{{"content", e.text}};
  } else {
    choice["text"] = e.text;
  }
  choice["logprobs"] = req_.top_logprobs >= 0 && !e.logprobs.empty() ? logprobs_json(e.tokens, e.logprobs, c.text.size()) : json(nullptr);
  choice["finish_reason"] = *finish ? json(finish) : json(nullptr);
  if (req_.return_token_ids) choice["token_ids"] = e.tokens;
  if (e.finish == engine::FinishReason::Error && !e.error.empty()) choice["error"] = e.error;
  c.text += e.text;
  emit(std::move(choice));
  return out;
}

std::string ResponseBuilder::sse_end() {
  std::string out;
  if (req_.include_usage) {
    json chunk = envelope();
    chunk["choices"] = json::array();
    chunk["usage"] = usage();
    out += "data: " + dump_json(chunk) + "\n\n";
  }
  return out + "data: [DONE]\n\n";
}

void ResponseBuilder::add(const engine::StreamEvent& e) {
  count(e);
  Choice& c = choices_[e.index];
  c.text += e.text;
  c.tokens.insert(c.tokens.end(), e.tokens.begin(), e.tokens.end());
  c.logprobs.insert(c.logprobs.end(), e.logprobs.begin(), e.logprobs.end());
  if (e.finish != engine::FinishReason::None) c.finish = finish_reason_name(e.finish);
}

json ResponseBuilder::body() const {
  json out = envelope();
  json list = json::array();
  const bool chat = req_.endpoint == Endpoint::Chat;
  for (const auto& [index, c] : choices_) {
    json choice = {{"index", index}};
    const std::string prefix = !chat && req_.echo ? req_.prompt_text : std::string();
    if (chat) {
      choice["message"] = {{"role", "assistant"}, {"content", c.text}};
    } else {
      choice["text"] = prefix + c.text;
    }
    choice["logprobs"] = req_.top_logprobs >= 0 ? logprobs_json(c.tokens, c.logprobs, prefix.size()) : json(nullptr);
    choice["finish_reason"] = c.finish.empty() ? json(nullptr) : json(c.finish);
    if (req_.return_token_ids) {
      choice["token_ids"] = c.tokens;
      if (index == 0) out["prompt_token_ids"] = req_.request.prompt;
    }
    list.push_back(std::move(choice));
  }
  out["choices"] = std::move(list);
  out["usage"] = usage();
  return out;
}

}  // namespace vellum::server
