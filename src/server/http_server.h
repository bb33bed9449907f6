#pragma once
// The OpenAI-compatible HTTP server over a LoadedEngine (cpp-httplib): routes, API-key check, body and
// queue limits, streaming with client-disconnect cancellation, and graceful shutdown. Every handler
// turns ApiError/vellum::Error into an OpenAI-shaped error response; nothing a client sends ends the
// process.

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/loaded_engine.h"
#include "server/metrics.h"
#include "server/openai_request.h"
#include "tokenizer/chat_template.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace vellum::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                 // 0: any free port (the startup line names it)
  std::string api_key;             // empty: no authentication
  size_t max_body_bytes = 8u << 20;
  uint32_t max_queued = 64;        // generation requests beyond the engine's --max-num-seqs; more get 429
  unsigned http_threads = 0;       // 0: max-num-seqs + max-queued + 4
  double shutdown_grace_s = 10;    // in-flight requests get this long to finish after SIGINT/SIGTERM
  std::vector<std::string> model_names;  // names accepted in "model" (the first is reported)
};

class HttpServer {
 public:
  HttpServer(app::LoadedEngine& loaded, std::optional<tokenizer::ChatTemplate> chat_template, ServerOptions options);
  ~HttpServer();

  // Binds the listening socket; returns the port. Throws vellum::Error when the address is unusable.
  int bind();
  // Serves until shutdown(); returns once every in-flight request has ended.
  void run();
  // Stops accepting connections; requests in flight may finish within `grace_s` seconds, then are
  // cancelled. Safe to call from another thread, more than once (a later call may shorten the grace).
  void shutdown(double grace_s);

 private:
  struct Stream;
  void install_routes();
  void generate(Endpoint endpoint, const httplib::Request& req, httplib::Response& res);
  void tokenize(const httplib::Request& req, httplib::Response& res);
  void detokenize(const httplib::Request& req, httplib::Response& res);
  // The next event of `handle`, cancelling the request once the shutdown grace has passed.
  std::optional<engine::StreamEvent> next_event(engine::RequestHandle& handle, bool& cancelled,
                                                std::chrono::milliseconds poll = std::chrono::milliseconds(100));
  bool past_grace() const;

  app::LoadedEngine& loaded_;
  std::optional<tokenizer::ChatTemplate> template_;
  ServerOptions options_;
  ModelInfo info_;
  Metrics metrics_;
  std::unique_ptr<httplib::Server> http_;
  std::atomic<bool> draining_{false};
  std::atomic<int64_t> deadline_ns_{0};  // steady-clock time after which in-flight requests are cancelled
};

}  // namespace vellum::server
