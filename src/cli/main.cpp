// The `vellum` binary: one executable, subcommands registered by cli/cmd_*.cpp.

#include <cstdio>
#include <map>

#include "cli/command.h"
#include "core/error.h"

namespace vellum::cli {

std::vector<CommandSpec>& command_registry() {
  static std::vector<CommandSpec> registry;
  return registry;
}

}  // namespace vellum::cli

int main(int argc, char** argv) {
  using namespace vellum::cli;
  CLI::App app{"vellum: an LLM inference server for GGUF models"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "vellum 0.1.0");

  // Groups first, so that their children can find them whatever the registration order.
  std::map<std::string, CLI::App*> groups;
  groups["gguf"] = app.add_subcommand("gguf", "Inspect, convert and synthesize GGUF files");
  groups["gguf"]->require_subcommand(1);
  for (const auto& spec : command_registry()) {
    CLI::App* parent = &app;
    if (!spec.parent.empty()) {
      auto& group = groups[spec.parent];
      if (group == nullptr) group = app.add_subcommand(spec.parent)->require_subcommand(1);
      parent = group;
    }
    spec.add(*parent);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const vellum::Error& e) {
    std::fprintf(stderr, "vellum: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vellum: internal error: %s\n", e.what());
    return 2;
  }
  return 0;
}
