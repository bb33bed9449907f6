#include "server/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "server/api_error.h"
#include "server/openai_response.h"

namespace vellum::server {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

int64_t now_ns() { return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count(); }
double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

void send_error(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  res.set_content(dump_json(e.to_json()), "application/json");
}

// Runs a handler, answering ApiError, vellum::Error (bad input: 400) and anything else (our bug: 500)
// in OpenAI's shape.
template <typename F>
void guarded(httplib::Response& res, F&& f) {
  try {
    f();
  } catch (const ApiError& e) {
    send_error(res, e);
  } catch (const Error& e) {
    send_error(res, bad_request(e.what()));
  } catch (const std::exception& e) {
    send_error(res, ApiError(500, "server_error", fmt::format("internal error: {}", e.what())));
  }
}

// Counts a generation request in flight for as long as it lives.
struct InFlight {
  std::atomic<int64_t>& counter;
  explicit InFlight(std::atomic<int64_t>& c) : counter(c) { ++counter; }
  ~InFlight() { --counter; }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
};

}  // namespace

// A streaming request's state, shared by the content provider and the response's releaser: when the
// response goes away before the request finished (client gone), the request is cancelled.
struct HttpServer::Stream {
  HttpServer& server;
  ParsedRequest parsed;
  std::shared_ptr<engine::RequestHandle> handle;
  ResponseBuilder builder;
  Clock::time_point arrived;
  InFlight in_flight;
  bool finished = false, cancelled = false;
  const char* endpoint;

  Stream(HttpServer& s, ParsedRequest p, Clock::time_point t, const char* ep)
      : server(s), parsed(std::move(p)), builder(parsed, s.loaded_.tokenizer(), s.info_.names.front()), arrived(t),
        in_flight(s.metrics_.in_flight), endpoint(ep) {}
  ~Stream() {
    if (handle && !handle->done() && !cancelled) server.loaded_.engine().cancel(handle->id());
    if (!endpoint) return;  // never submitted: the caller counts it
    server.metrics_.tokens(parsed.request.prompt.size(), builder.completion_tokens());
    server.metrics_.request_finished(endpoint, finished ? 200 : 499);
  }
};

HttpServer::HttpServer(app::LoadedEngine& loaded, std::optional<tokenizer::ChatTemplate> chat_template, ServerOptions options)
    : loaded_(loaded), template_(std::move(chat_template)), options_(std::move(options)), http_(std::make_unique<httplib::Server>()) {
  info_.tokenizer = &loaded_.tokenizer();
  info_.chat_template = template_ ? &*template_ : nullptr;
  info_.context = loaded_.context();
  info_.names = options_.model_names;
  info_.names.push_back(loaded_.model_name());
  info_.max_n = std::max<uint32_t>(1, std::min<uint32_t>(64, loaded_.options().max_num_seqs));
  install_routes();
}

HttpServer::~HttpServer() = default;

bool HttpServer::past_grace() const { return draining_ && now_ns() >= deadline_ns_.load(); }

std::optional<engine::StreamEvent> HttpServer::next_event(engine::RequestHandle& handle, bool& cancelled,
                                                          std::chrono::milliseconds poll) {
  for (;;) {
    if (auto e = handle.next_for(poll)) return e;
    if (handle.done()) return std::nullopt;
    if (!cancelled && past_grace()) {
      loaded_.engine().cancel(handle.id());
      cancelled = true;
    }
    if (poll.count() >= 1000) return std::nullopt;  // the caller wants to do something between waits
  }
}

void HttpServer::install_routes() {
  auto& h = *http_;
  const unsigned threads =
      options_.http_threads ? options_.http_threads : loaded_.options().max_num_seqs + options_.max_queued + 4;
  h.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  h.set_payload_max_length(options_.max_body_bytes);
  h.set_keep_alive_timeout(2);
  h.set_read_timeout(30);
  h.set_write_timeout(30);

  h.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (options_.api_key.empty() || req.path == "/health") return httplib::Server::HandlerResponse::Unhandled;
    if (req.get_header_value("Authorization") == "Bearer " + options_.api_key) return httplib::Server::HandlerResponse::Unhandled;
    send_error(res, ApiError(401, "authentication_error",
                             req.has_header("Authorization") ? "Incorrect API key provided"
                                                             : "Missing API key: send 'Authorization: Bearer KEY'",
                             {}, "invalid_api_key"));
    return httplib::Server::HandlerResponse::Handled;
  });
  // httplib's own errors (unknown route, oversized body, unparsable request) get OpenAI's shape too.
  h.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    if (res.status == 413) {
      send_error(res, ApiError(413, "invalid_request_error",
                               fmt::format("the request body is larger than the limit of {} bytes", options_.max_body_bytes),
                               {}, "request_too_large"));
    } else if (res.status == 404) {
      send_error(res, ApiError(404, "invalid_request_error", fmt::format("no route for {} {}", req.method, req.path), {}, "not_found"));
    } else {
      send_error(res, ApiError(res.status, "invalid_request_error", fmt::format("HTTP error {}", res.status)));
    }
    return httplib::Server::HandlerResponse::Handled;
  }));
  h.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    send_error(res, ApiError(500, "server_error", "internal error"));
  });

  h.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    res.status = draining_ ? 503 : 200;
    res.set_content(draining_ ? R"({"status":"shutting down"})" : R"({"status":"ok"})", "application/json");
  });
  h.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    json data = json::array();
    data.push_back({{"id", info_.names.front()},
                    {"object", "model"},
                    {"created", 0},
                    {"owned_by", "vellum"},
                    {"max_model_len", info_.context}});
    res.set_content(dump_json(json{{"object", "list"}, {"data", data}}), "application/json");
  });
  h.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_.render(loaded_.engine().stats()), "text/plain; version=0.0.4");
  });
  h.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) { generate(Endpoint::Completions, req, res); });
  h.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) { generate(Endpoint::Chat, req, res); });
  h.Post("/tokenize", [this](const httplib::Request& req, httplib::Response& res) { guarded(res, [&] { tokenize(req, res); }); });
  h.Post("/detokenize", [this](const httplib::Request& req, httplib::Response& res) { guarded(res, [&] { detokenize(req, res); }); });
}

void HttpServer::tokenize(const httplib::Request& req, httplib::Response& res) {
  const json body = parse_body(req.body);
  std::vector<int32_t> ids;
  std::string text;
  if (body.contains("messages")) {
    ids = encode_chat(body, info_, text);
  } else {
    if (!body.contains("prompt") || !body["prompt"].is_string()) throw bad_request("'prompt' must be a string", "prompt");
    bool add_special = true;
    if (body.contains("add_special_tokens")) {
      if (!body["add_special_tokens"].is_boolean()) throw bad_request("'add_special_tokens' must be a boolean", "add_special_tokens");
      add_special = body["add_special_tokens"].get<bool>();
    }
    ids = loaded_.tokenizer().encode(body["prompt"].get<std::string>(), add_special, false);
  }
  json out = {{"tokens", ids}, {"count", ids.size()}, {"max_model_len", info_.context}};
  res.set_content(dump_json(out), "application/json");
}

void HttpServer::detokenize(const httplib::Request& req, httplib::Response& res) {
  const json body = parse_body(req.body);
  if (!body.contains("tokens") || !body["tokens"].is_array()) throw bad_request("'tokens' must be an array of token ids", "tokens");
  std::vector<int32_t> ids;
  const auto vocab = static_cast<int64_t>(loaded_.tokenizer().vocab_size());
  for (const auto& t : body["tokens"]) {
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= vocab)
      throw bad_request(fmt::format("'tokens' must hold token ids in [0, {})", vocab), "tokens");
    ids.push_back(static_cast<int32_t>(t.get<int64_t>()));
  }
  res.set_content(dump_json(json{{"prompt", loaded_.tokenizer().decode(ids)}}), "application/json");
}

void HttpServer::generate(Endpoint endpoint, const httplib::Request& req, httplib::Response& res) {
  const auto arrived = Clock::now();
  const char* ep_name = endpoint == Endpoint::Chat ? "chat" : "completions";
  auto stream = std::shared_ptr<Stream>();
  guarded(res, [&] {
    if (draining_) throw ApiError(503, "service_unavailable_error", "the server is shutting down");
    ParsedRequest parsed = parse_request(endpoint, req.body, info_);
    const int64_t limit = static_cast<int64_t>(loaded_.options().max_num_seqs) + options_.max_queued;
    if (metrics_.in_flight.load() >= limit)
      throw ApiError(429, "rate_limit_error", fmt::format("too many requests in flight (limit {}); retry later", limit), {},
                     "rate_limit_exceeded");
    auto s = std::make_shared<Stream>(*this, std::move(parsed), arrived, ep_name);
    engine::Request request = s->parsed.request;
    try {
      s->handle = loaded_.engine().submit(std::move(request), s->parsed.options);
    } catch (const Error& e) {
      s->endpoint = nullptr;  // counted as the error below, not as a dropped stream
      throw bad_request(e.what());
    }
    stream = std::move(s);
  });
  if (!stream) {
    metrics_.request_finished(ep_name, res.status);
    return;
  }

  if (!stream->parsed.stream) {
    auto& s = *stream;
    std::optional<Clock::time_point> last;
    std::string error;
    while (auto e = next_event(*s.handle, s.cancelled)) {
      if (!e->tokens.empty()) {
        const auto t = Clock::now();
        if (!last) metrics_.observe_ttft(seconds_between(s.arrived, t));
        else metrics_.observe_inter_token(seconds_between(*last, t));
        last = t;
      }
      if (e->finish == engine::FinishReason::Error) error = e->error;
      s.builder.add(*e);
    }
    s.finished = true;
    if (!error.empty()) {
      send_error(res, bad_request(error));
    } else {
      res.set_content(dump_json(s.builder.body()), "application/json");
    }
    return;
  }

  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream", [this, stream](size_t, httplib::DataSink& sink) {
    auto& s = *stream;
    std::optional<Clock::time_point> last;
    bool ok = true;
    for (;;) {
      auto e = next_event(*s.handle, s.cancelled, std::chrono::milliseconds(1000));
      if (!e) {
        if (s.handle->done()) break;
        // Nothing for a second (queued or a long prefill): an SSE comment finds out whether the client is
        // still there, so a departed client's request is cancelled before it runs.
        if (!sink.write(": waiting\n\n", 11)) {
          ok = false;
          break;
        }
        continue;
      }
      if (!e->tokens.empty()) {
        const auto t = Clock::now();
        if (!last) metrics_.observe_ttft(seconds_between(s.arrived, t));
        else metrics_.observe_inter_token(seconds_between(*last, t));
        last = t;
      }
      const std::string payload = s.builder.sse(*e);
      if (!payload.empty() && !sink.write(payload.data(), payload.size())) {
        ok = false;
        break;
      }
    }
    if (!ok) {  // the client went away: free its blocks now
      loaded_.engine().cancel(s.handle->id());
      s.cancelled = true;
      return false;
    }
    const std::string end = s.builder.sse_end();
    s.finished = sink.write(end.data(), end.size());
    sink.done();
    return true;
  });
}

int HttpServer::bind() {
  // httplib 0.11 listens with a backlog of 5: a burst of clients (64 streams opening at once) overflows
  // it and connections get reset. We note the socket httplib creates and listen() again with a deep
  // backlog, which Linux applies to a listening socket.
  int fd = -1;
  http_->set_socket_options([&fd](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));  // httplib's default, minus SO_REUSEPORT
    fd = sock;
  });
  if (options_.port == 0) {
    const int port = http_->bind_to_any_port(options_.host);
    if (port <= 0) throw_error("cannot listen on {} (any port)", options_.host);
    options_.port = port;
  } else if (!http_->bind_to_port(options_.host, options_.port)) {
    throw_error("cannot listen on {}:{} (address in use or not available)", options_.host, options_.port);
  }
  if (fd >= 0) ::listen(fd, SOMAXCONN);
  return options_.port;
}

void HttpServer::run() { http_->listen_after_bind(); }

void HttpServer::shutdown(double grace_s) {
  const int64_t deadline = now_ns() + static_cast<int64_t>(grace_s * 1e9);
  if (!draining_ || deadline < deadline_ns_.load()) deadline_ns_ = deadline;  // before draining_ is seen
  draining_ = true;
  http_->stop();
}

}  // namespace vellum::server
