#include "server/openai_request.h"

#include <cmath>
#include <limits>
#include <random>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "server/api_error.h"

namespace vellum::server {
namespace {

using json = nlohmann::json;

const char* type_name(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "integer";
  if (v.is_number()) return "number";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  return "object";
}

ApiError wrong_type(const std::string& field, const char* want, const json& got) {
  return bad_request(fmt::format("'{}' must be {}, got {}", field, want, type_name(got)), field);
}

// A present, non-null field (OpenAI treats null as "not given").
const json* field(const json& body, const char* name) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return nullptr;
  return &*it;
}

bool get_bool(const json& body, const char* name, bool def) {
  const json* v = field(body, name);
  if (!v) return def;
  if (!v->is_boolean()) throw wrong_type(name, "a boolean", *v);
  return v->get<bool>();
}

double get_number(const json& body, const char* name, double def, double lo, double hi, bool lo_open = false) {
  const json* v = field(body, name);
  if (!v) return def;
  if (!v->is_number()) throw wrong_type(name, "a number", *v);
  const double x = v->get<double>();
  if (!std::isfinite(x) || x > hi || x < lo || (lo_open && x == lo))
    throw bad_request(fmt::format("'{}' must be in {}{}, {}], got {}", name, lo_open ? "(" : "[", lo, hi, x), name);
  return x;
}

int64_t get_int(const json& body, const char* name, int64_t def, int64_t lo, int64_t hi) {
  const json* v = field(body, name);
  if (!v) return def;
  if (!v->is_number_integer() && !v->is_number_unsigned()) throw wrong_type(name, "an integer", *v);
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    throw bad_request(fmt::format("'{}' must be in [{}, {}], got {}", name, lo, hi, v->get<uint64_t>()), name);
  const int64_t x = v->get<int64_t>();
  if (x < lo || x > hi) throw bad_request(fmt::format("'{}' must be in [{}, {}], got {}", name, lo, hi, x), name);
  return x;
}

void check_fields(const json& body, Endpoint ep) {
  static const std::set<std::string> common = {
      "model", "stream", "stream_options", "n", "stop", "seed", "max_tokens", "temperature", "top_p",
      "frequency_penalty", "presence_penalty", "logit_bias", "logprobs", "user",
      // extensions (vLLM / llama-server names)
      "top_k", "min_p", "ignore_eos", "return_token_ids", "repetition_penalty", "min_tokens", "stop_token_ids"};
  static const std::set<std::string> completions = {"prompt", "echo", "best_of", "suffix"};
  static const std::set<std::string> chat = {
      "messages", "max_completion_tokens", "top_logprobs", "tools", "tool_choice", "parallel_tool_calls",
      "response_format", "metadata", "store", "service_tier", "add_generation_prompt", "chat_template_kwargs"};
  for (const auto& [key, value] : body.items()) {
    if (common.count(key) || (ep == Endpoint::Completions ? completions : chat).count(key)) continue;
    throw bad_request(fmt::format("Unrecognized request argument supplied: {}", key), key);
  }
}

std::vector<std::string> parse_stop(const json& body) {
  const json* v = field(body, "stop");
  std::vector<std::string> out;
  if (!v) return out;
  if (v->is_string()) {
    out.push_back(v->get<std::string>());
  } else if (v->is_array()) {
    if (v->size() > kMaxStopStrings)
      throw bad_request(fmt::format("'stop' may hold at most {} strings, got {}", kMaxStopStrings, v->size()), "stop");
    for (const auto& s : *v) {
      if (!s.is_string()) throw wrong_type("stop", "a string or an array of strings", s);
      out.push_back(s.get<std::string>());
    }
  } else {
    throw wrong_type("stop", "a string or an array of strings", *v);
  }
  for (const auto& s : out) {
    if (s.empty()) throw bad_request("'stop' strings must not be empty", "stop");
    if (s.size() > kMaxStopLength)
      throw bad_request(fmt::format("'stop' strings must be at most {} bytes long", kMaxStopLength), "stop");
  }
  return out;
}

int32_t check_token(int64_t id, const ModelInfo& m, const std::string& param) {
  const auto vocab = static_cast<int64_t>(m.tokenizer->vocab_size());
  if (id < 0 || id >= vocab) throw bad_request(fmt::format("'{}': token id {} is outside the vocabulary [0, {})", param, id, vocab), param);
  return static_cast<int32_t>(id);
}

std::vector<std::pair<int32_t, float>> parse_logit_bias(const json& body, const ModelInfo& m) {
  const json* v = field(body, "logit_bias");
  std::vector<std::pair<int32_t, float>> out;
  if (!v) return out;
  if (!v->is_object()) throw wrong_type("logit_bias", "an object mapping token ids to numbers", *v);
  for (const auto& [key, bias] : v->items()) {
    size_t used = 0;
    long long id = -1;
    try {
      id = std::stoll(key, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != key.size() || key.empty())
      throw bad_request(fmt::format("'logit_bias' keys must be token ids, got '{}'", key), "logit_bias");
    if (!bias.is_number()) throw wrong_type("logit_bias", "an object mapping token ids to numbers", bias);
    const double b = bias.get<double>();
    if (!(b >= -100 && b <= 100))
      throw bad_request(fmt::format("'logit_bias' values must be in [-100, 100], got {}", b), "logit_bias");
    out.emplace_back(check_token(id, m, "logit_bias"), static_cast<float>(b));
  }
  return out;
}

// Text of a message's content: a string, null, or an array of {"type": "text", "text"} parts.
std::string message_content(const json& content, size_t i) {
  const std::string param = fmt::format("messages[{}].content", i);
  if (content.is_null()) return {};
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) throw wrong_type(param, "a string or an array of content parts", content);
  std::string text;
  for (const auto& part : content) {
    if (!part.is_object() || !part.contains("type") || !part["type"].is_string())
      throw bad_request(fmt::format("'{}' parts must be objects with a 'type'", param), param);
    const auto type = part["type"].get<std::string>();
    if (type != "text") throw bad_request(fmt::format("'{}': content part type '{}' is not supported (only 'text')", param, type), param);
    if (!part.contains("text") || !part["text"].is_string())
      throw bad_request(fmt::format("'{}': a text part needs a string 'text'", param), param);
    text += part["text"].get<std::string>();
  }
  return text;
}

nlohmann::ordered_json parse_messages(const json& body) {
  const json* v = field(body, "messages");
  if (!v) throw bad_request("'messages' is required", "messages");
  if (!v->is_array()) throw wrong_type("messages", "an array", *v);
  if (v->empty()) throw bad_request("'messages' must hold at least one message", "messages");
  static const std::set<std::string> roles = {"system", "developer", "user", "assistant", "tool"};
  auto out = nlohmann::ordered_json::array();
  for (size_t i = 0; i < v->size(); ++i) {
    const json& m = (*v)[i];
    const std::string at = fmt::format("messages[{}]", i);
    if (!m.is_object()) throw wrong_type(at, "an object", m);
    if (!m.contains("role") || !m["role"].is_string()) throw bad_request(fmt::format("'{}.role' must be a string", at), at + ".role");
    std::string role = m["role"].get<std::string>();
    if (!roles.count(role))
      throw bad_request(fmt::format("'{}.role' must be one of system, developer, user, assistant, tool; got '{}'", at, role),
                        at + ".role");
    if (!m.contains("content") && !(role == "assistant" && m.contains("tool_calls")))
      throw bad_request(fmt::format("'{}.content' is required", at), at + ".content");
    nlohmann::ordered_json msg;
    msg["role"] = role == "developer" ? "system" : role;  // templates know "system"
    msg["content"] = message_content(m.value("content", json(nullptr)), i);
    for (const char* extra : {"name", "tool_calls", "tool_call_id"})
      if (m.contains(extra)) msg[extra] = nlohmann::ordered_json::parse(m[extra].dump());
    out.push_back(std::move(msg));
  }
  return out;
}

std::vector<int32_t> encode_prompt(const json& body, const ModelInfo& m, std::string& text) {
  const json* v = field(body, "prompt");
  if (!v) throw bad_request("'prompt' is required", "prompt");
  const auto& tok = *m.tokenizer;
  if (v->is_string()) {
    text = v->get<std::string>();
    return tok.encode(text, true, false);
  }
  if (v->is_array() && v->size() == 1 && (*v)[0].is_string()) {
    text = (*v)[0].get<std::string>();
    return tok.encode(text, true, false);
  }
  if (v->is_array() && !v->empty() && std::all_of(v->begin(), v->end(), [](const json& x) { return x.is_number_integer(); })) {
    std::vector<int32_t> ids;
    for (const auto& x : *v) ids.push_back(check_token(x.get<int64_t>(), m, "prompt"));
    text = tok.decode(ids);
    return ids;
  }
  if (v->is_array() && v->size() > 1)
    throw bad_request("'prompt': one prompt per request is supported (a string, or an array of token ids)", "prompt");
  throw wrong_type("prompt", "a string or an array of token ids", *v);
}

}  // namespace

std::vector<int32_t> encode_chat(const json& body, const ModelInfo& m, std::string& text) {
  if (!m.chat_template)
    throw bad_request("this model has no chat template (start the server with --chat-template FILE)", "messages");
  const auto messages = parse_messages(body);
  nlohmann::ordered_json tools;
  if (const json* t = field(body, "tools")) {
    if (!t->is_array()) throw wrong_type("tools", "an array", *t);
    tools = nlohmann::ordered_json::parse(t->dump());
  }
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
  if (const json* k = field(body, "chat_template_kwargs")) {
    if (!k->is_object()) throw wrong_type("chat_template_kwargs", "an object", *k);
    extra = nlohmann::ordered_json::parse(k->dump());
  }
  const bool add_generation_prompt = get_bool(body, "add_generation_prompt", true);
  const auto& tok = *m.tokenizer;
  const std::string bos = tok.bos() >= 0 ? tok.token_to_piece(tok.bos()) : std::string();
  const std::string eos = tok.eos() >= 0 ? tok.token_to_piece(tok.eos()) : std::string();
  try {
    text = m.chat_template->render(messages, tools, add_generation_prompt, bos, eos, extra);
  } catch (const Error& e) {
    throw bad_request(fmt::format("the chat template failed on these messages: {}", e.what()), "messages");
  }
  // Templates that write the BOS text themselves get no second BOS.
  const bool has_bos = !bos.empty() && text.rfind(bos, 0) == 0;
  return tok.encode(text, !has_bos, true);
}

json parse_body(const std::string& body) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::parse_error& e) {
    throw bad_request(fmt::format("the request body is not valid JSON: {}", e.what()));
  }
  if (!j.is_object()) throw bad_request(fmt::format("the request body must be a JSON object, got {}", type_name(j)));
  return j;
}

ParsedRequest parse_request(Endpoint ep, const std::string& text, const ModelInfo& m) {
  const json body = parse_body(text);
  check_fields(body, ep);
  ParsedRequest p;
  p.endpoint = ep;

  if (const json* model = field(body, "model")) {
    if (!model->is_string()) throw wrong_type("model", "a string", *model);
    const auto name = model->get<std::string>();
    if (std::find(m.names.begin(), m.names.end(), name) == m.names.end())
      throw ApiError(404, "invalid_request_error", fmt::format("The model '{}' does not exist (this server serves '{}')", name,
                                                               m.names.empty() ? "" : m.names.front()),
                     "model", "model_not_found");
  }

  p.stream = get_bool(body, "stream", false);
  if (const json* so = field(body, "stream_options")) {
    if (!so->is_object()) throw wrong_type("stream_options", "an object", *so);
    if (!p.stream) throw bad_request("'stream_options' is only allowed when 'stream' is true", "stream_options");
    for (const auto& [k, v] : so->items())
      if (k != "include_usage" && k != "continuous_usage_stats")
        throw bad_request(fmt::format("Unrecognized request argument supplied: stream_options.{}", k), "stream_options");
    p.include_usage = get_bool(*so, "include_usage", false);
  }

  auto& r = p.request;
  auto& s = r.sampling;
  r.n = static_cast<uint32_t>(get_int(body, "n", 1, 1, m.max_n));
  if (ep == Endpoint::Completions) {
    const int64_t best_of = get_int(body, "best_of", r.n, 1, m.max_n);
    if (best_of != r.n) throw bad_request("'best_of' must equal 'n' (ranking completions is not supported)", "best_of");
    if (field(body, "suffix")) throw bad_request("'suffix' is not supported", "suffix");
    p.echo = get_bool(body, "echo", false);
  }
  s.temperature = static_cast<float>(get_number(body, "temperature", 1.0, 0.0, 2.0));
  s.top_p = static_cast<float>(get_number(body, "top_p", 1.0, 0.0, 1.0, true));
  const int64_t top_k = get_int(body, "top_k", 0, -1, std::numeric_limits<int32_t>::max());
  s.top_k = static_cast<int32_t>(top_k < 0 ? 0 : top_k);  // vLLM: -1 is off
  s.min_p = static_cast<float>(get_number(body, "min_p", 0.0, 0.0, 1.0));
  s.frequency_penalty = static_cast<float>(get_number(body, "frequency_penalty", 0.0, -2.0, 2.0));
  s.presence_penalty = static_cast<float>(get_number(body, "presence_penalty", 0.0, -2.0, 2.0));
  s.repetition_penalty = static_cast<float>(get_number(body, "repetition_penalty", 1.0, 0.0, 2.0, true));
  s.logit_bias = parse_logit_bias(body, m);
  if (field(body, "seed")) {
    s.seed = static_cast<uint64_t>(get_int(body, "seed", 0, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()));
  } else {
    s.seed = std::random_device{}();
  }
  r.ignore_eos = get_bool(body, "ignore_eos", false);
  p.return_token_ids = get_bool(body, "return_token_ids", false);
  p.options.stop = parse_stop(body);
  if (const json* ids = field(body, "stop_token_ids")) {
    if (!ids->is_array()) throw wrong_type("stop_token_ids", "an array of token ids", *ids);
    for (const auto& x : *ids) {
      if (!x.is_number_integer()) throw wrong_type("stop_token_ids", "an array of token ids", x);
      r.stop_token_ids.push_back(check_token(x.get<int64_t>(), m, "stop_token_ids"));
    }
  }

  if (ep == Endpoint::Completions) {
    if (const json* lp = field(body, "logprobs")) {
      if (lp->is_boolean()) throw wrong_type("logprobs", "an integer (alternatives per token)", *lp);
      p.top_logprobs = static_cast<int32_t>(get_int(body, "logprobs", 0, 0, kMaxTopLogprobs));
    }
  } else {
    const bool lp = get_bool(body, "logprobs", false);
    const int64_t top = get_int(body, "top_logprobs", -1, 0, kMaxTopLogprobs);
    if (top >= 0 && !lp) throw bad_request("'top_logprobs' requires 'logprobs' to be true", "top_logprobs");
    if (lp) p.top_logprobs = static_cast<int32_t>(top < 0 ? 0 : top);
    if (const json* rf = field(body, "response_format")) {
      if (!rf->is_object() || !rf->contains("type") || (*rf)["type"] != "text")
        throw bad_request("'response_format': only {\"type\": \"text\"} is supported", "response_format");
    }
  }
  r.logprobs = p.top_logprobs;

  // The prompt, then the lengths that depend on it.
  r.prompt = ep == Endpoint::Completions ? encode_prompt(body, m, p.prompt_text) : encode_chat(body, m, p.prompt_text);
  const char* prompt_param = ep == Endpoint::Completions ? "prompt" : "messages";
  if (r.prompt.empty()) throw bad_request("the prompt encodes to no tokens", prompt_param);
  const uint64_t ctx = m.context;
  if (r.prompt.size() >= ctx)
    throw bad_request(fmt::format("This model's maximum context length is {} tokens; the prompt has {} tokens", ctx, r.prompt.size()),
                      prompt_param, "context_length_exceeded");
  const uint64_t room = ctx - r.prompt.size();
  const char* max_name = ep == Endpoint::Chat && field(body, "max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
  const int64_t max_tokens = get_int(body, max_name, 0, 1, std::numeric_limits<int64_t>::max());
  if (max_tokens == 0) {
    r.max_tokens = static_cast<uint32_t>(ep == Endpoint::Completions ? std::min<uint64_t>(16, room) : room);  // OpenAI's defaults
  } else if (static_cast<uint64_t>(max_tokens) > room) {
    throw bad_request(fmt::format("'{}' is too large: the prompt has {} tokens and the context holds {}, so at most {} can be "
                                  "generated; got {}",
                                  max_name, r.prompt.size(), ctx, room, max_tokens),
                      max_name, "context_length_exceeded");
  } else {
    r.max_tokens = static_cast<uint32_t>(max_tokens);
  }
  r.min_tokens = static_cast<uint32_t>(get_int(body, "min_tokens", 0, 0, r.max_tokens));
  p.options.strip_leading_space = ep == Endpoint::Completions && p.prompt_text.empty();

  try {
    s.validate();
  } catch (const Error& e) {
    throw bad_request(e.what());
  }
  return p;
}

}  // namespace vellum::server
