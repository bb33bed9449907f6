#include "bench/sse_client.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace vellum::bench {

void SseParser::feed(const char* data, size_t size) {
  buffer_.append(data, size);
  size_t nl;
  while ((nl = buffer_.find('\n')) != std::string::npos) {
    std::string line = buffer_.substr(0, nl);
    buffer_.erase(0, nl + 1);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("data:", 0) != 0) continue;
    size_t start = 5;
    if (start < line.size() && line[start] == ' ') ++start;
    on_data_(line.substr(start));
  }
}

std::string normalize_base_url(const std::string& url) {
  std::string u = url;
  while (!u.empty() && u.back() == '/') u.pop_back();
  if (u.size() >= 3 && u.compare(u.size() - 3, 3, "/v1") == 0) u.resize(u.size() - 3);
  if (u.rfind("http://", 0) != 0)
    throw_error("--url '{}': expected http://HOST:PORT (https is not supported)", url);
  if (u.find('/', 7) != std::string::npos) throw_error("--url '{}': give the server root, e.g. http://127.0.0.1:8080", url);
  return u;
}

CompletionTiming stream_completion(const std::string& base_url, const CompletionRequest& r, Clock::time_point deadline,
                                   const std::function<void()>& on_first_token) {
  CompletionTiming t;
  nlohmann::json body = {{"prompt", r.prompt},       {"max_tokens", r.max_tokens},
                         {"stream", true},           {"temperature", r.temperature},
                         {"ignore_eos", r.ignore_eos}, {"stream_options", {{"include_usage", true}}}};
  if (!r.model.empty()) body["model"] = r.model;
  httplib::Client cli(base_url);
  const auto left = std::chrono::duration_cast<std::chrono::seconds>(deadline - Clock::now()).count();
  cli.set_read_timeout(std::max<long>(1, static_cast<long>(left)), 0);
  cli.set_connection_timeout(10, 0);
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.set_header("Content-Type", "application/json");
  req.set_header("Accept", "text/event-stream");
  req.body = body.dump();
  uint64_t chunks = 0;
  bool done = false;
  std::string raw;  // kept for an error body
  SseParser parser([&](const std::string& payload) {
    if (payload == "[DONE]") {
      done = true;
      return;
    }
    nlohmann::json j = nlohmann::json::parse(payload, nullptr, false);
    if (j.is_discarded()) return;
    if (j.contains("error")) t.error = j["error"].dump();
    if (j.contains("usage") && j["usage"].is_object()) {
      t.completion_tokens = j["usage"].value("completion_tokens", uint64_t(0));
      t.prompt_tokens = j["usage"].value("prompt_tokens", uint64_t(0));
    }
    if (j.contains("choices") && j["choices"].is_array() && !j["choices"].empty()) {
      const auto& c = j["choices"][0];
      const bool has_text = c.contains("text") && c["text"].is_string() && !c["text"].get<std::string>().empty();
      if (has_text) {
        const auto now = Clock::now();
        if (t.chunks.empty()) {
          t.first_token = now;
          if (on_first_token) on_first_token();
        }
        t.chunks.push_back(now);
        ++chunks;
      }
    }
  });
  req.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
    if (raw.size() < 4096) raw.append(data, std::min<size_t>(size, 4096));
    parser.feed(data, size);
    return Clock::now() < deadline;
  };
  t.sent = Clock::now();
  auto res = cli.send(req);
  t.done = Clock::now();
  if (!res) {
    t.error = t.done >= deadline ? "deadline" : "connection: " + httplib::to_string(res.error());
    return t;
  }
  if (res->status != 200) {
    t.error = "HTTP " + std::to_string(res->status) + ": " + raw.substr(0, 300);
    return t;
  }
  if (t.completion_tokens == 0) t.completion_tokens = chunks;
  if (!done && t.error.empty()) t.error = "stream ended without data: [DONE]";
  if (t.chunks.empty() && t.error.empty()) t.error = "no tokens streamed";
  t.ok = t.error.empty();
  return t;
}

}  // namespace vellum::bench
