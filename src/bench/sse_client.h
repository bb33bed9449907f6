#pragma once
// A streaming client for one OpenAI-compatible /v1/completions request (vellum, llama-server, vLLM):
// posts with "stream": true and reads the server-sent events up to "data: [DONE]", timing each chunk.

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace vellum::bench {

using Clock = std::chrono::steady_clock;

struct CompletionRequest {
  std::string model;  // empty: left out (servers with one model accept that)
  std::string prompt;
  uint32_t max_tokens = 16;
  bool ignore_eos = true;
  double temperature = 0;
};

struct CompletionTiming {
  Clock::time_point sent, first_token, done;
  std::vector<Clock::time_point> chunks;  // every event that carried text
  uint64_t completion_tokens = 0;         // from usage when the server sends it, else the chunk count
  uint64_t prompt_tokens = 0;             // from usage, or 0
  bool ok = false;
  std::string error;
};

// Parses the SSE byte stream incrementally: feed() any split of the body, get one callback per
// "data:" payload (the text after "data: "). Lines other than data lines are ignored.
class SseParser {
 public:
  explicit SseParser(std::function<void(const std::string&)> on_data) : on_data_(std::move(on_data)) {}
  void feed(const char* data, size_t size);

 private:
  std::function<void(const std::string&)> on_data_;
  std::string buffer_;
};

// base_url such as "http://127.0.0.1:8080" (a trailing /v1 is accepted). `deadline`: the request is
// abandoned (error "deadline") when still running then. Never throws; errors land in .error.
// `on_first_token`, when set, is called once as the first text arrives.
CompletionTiming stream_completion(const std::string& base_url, const CompletionRequest& request,
                                   Clock::time_point deadline, const std::function<void()>& on_first_token = {});

// Splits "http://host:port/v1" into "http://host:port" and checks the scheme; throws vellum::Error.
std::string normalize_base_url(const std::string& url);

}  // namespace vellum::bench
