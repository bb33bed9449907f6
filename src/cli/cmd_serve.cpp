// vellum serve -m FILE [--host H] [--port P] [--api-key K] [--chat-template FILE] …: the OpenAI-compatible
// HTTP server (src/server/). SIGINT/SIGTERM stop accepting connections and give in-flight requests
// --shutdown-grace seconds before they are cancelled; a second signal cancels at once. Exit code 0.

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "app/loaded_engine.h"
#include "cli/command.h"
#include "core/error.h"
#include "server/http_server.h"

namespace vellum::cli {
namespace {

struct ServeOptions {
  app::EngineOptions engine;
  server::ServerOptions server;
  std::string chat_template_file;
  std::string alias;
  double max_body_mib = 8;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_error("cannot open chat template file {}", path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void serve(ServeOptions& o) {
  // Signals go to one waiting thread, not to whichever thread they hit; the engine and HTTP threads
  // created below inherit the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client that hangs up is a failed write, not a dead server

  std::fprintf(stderr, "loading %s …\n", o.engine.model.c_str());
  const auto loaded = app::LoadedEngine::load(o.engine);
  std::optional<tokenizer::ChatTemplate> tmpl;
  std::string template_source = "none";
  if (!o.chat_template_file.empty()) {
    tmpl.emplace(read_file(o.chat_template_file));
    template_source = o.chat_template_file;
  } else if (const auto t = loaded->chat_template(); !t.empty()) {
    tmpl.emplace(t);
    template_source = "from the GGUF";
  }
  o.server.max_body_bytes = static_cast<size_t>(o.max_body_mib * 1024 * 1024);
  if (!o.alias.empty()) o.server.model_names.push_back(o.alias);
  server::HttpServer http(*loaded, std::move(tmpl), o.server);
  const int port = http.bind();
  const auto& c = loaded->config();
  (void)c;
  std::fprintf(stderr,
               "vellum serve: listening on http://%s:%d | model %s | %s | chat template %s | api key %s | "
               "max body %.1f MiB | queue %u\n",
               o.server.host.c_str(), port, (o.alias.empty() ? loaded->model_name() : o.alias).c_str(),
               loaded->summary().c_str(), template_source.c_str(), o.server.api_key.empty() ? "off" : "on",
               o.max_body_mib, o.server.max_queued);
  std::fflush(stderr);

  std::atomic<bool> done{false};
  std::thread watcher([&] {
    int received = 0;
    for (;;) {
      int sig = 0;
      if (sigwait(&signals, &sig) != 0) continue;
      if (done) return;
      ++received;
      std::fprintf(stderr, "vellum serve: %s; %s\n", sig == SIGINT ? "SIGINT" : "SIGTERM",
                   received == 1 ? "draining in-flight requests" : "cancelling in-flight requests");
      std::fflush(stderr);
      http.shutdown(received == 1 ? o.server.shutdown_grace_s : 0);
    }
  });
  http.run();
  done = true;
  kill(getpid(), SIGTERM);  // wakes the watcher (the signal is blocked everywhere, so it only reaches sigwait)
  watcher.join();
  std::fprintf(stderr, "vellum serve: stopped\n");
}

const CommandRegistration registration("", [](CLI::App& parent) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* cmd = parent.add_subcommand("serve", "OpenAI-compatible HTTP server");
  app::add_engine_options(*cmd, o->engine);
  cmd->add_option("--host", o->server.host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", o->server.port, "Port (0: any free port)")->check(CLI::Range(0, 65535))->capture_default_str();
  cmd->add_option("--api-key", o->server.api_key, "Require 'Authorization: Bearer KEY' on every route but /health");
  cmd->add_option("--chat-template", o->chat_template_file, "Jinja chat template file (default: the GGUF's)");
  cmd->add_option("--alias", o->alias, "Model name reported and accepted in 'model' (default: the GGUF's name)");
  cmd->add_option("--max-body-mib", o->max_body_mib, "Largest request body in MiB (larger: 413)")
      ->check(CLI::Range(0.001, 1024.0))
      ->capture_default_str();
  cmd->add_option("--max-queued", o->server.max_queued, "Requests waiting beyond --max-num-seqs (more: 429)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--http-threads", o->server.http_threads, "HTTP worker threads (0: max-num-seqs + max-queued + 4)")
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--shutdown-grace", o->server.shutdown_grace_s, "Seconds in-flight requests get after SIGINT/SIGTERM")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  cmd->callback([o] { serve(*o); });
});

}  // namespace
}  // namespace vellum::cli
