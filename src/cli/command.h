#pragma once
// Subcommand registration for the `vellum` binary. Each subcommand lives in its own cli/cmd_*.cpp and
// registers itself with a file-scope `CommandRegistration`, naming its parent ("" for the top level,
// "gguf" for `vellum gguf …`). main() builds the CLI11 tree from the registry, so adding a subcommand
// touches no other file. The callback a subcommand installs returns the process exit code by
// throwing nothing on success; vellum::Error becomes a one-line message and exit code 1.

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace vellum::cli {

struct CommandSpec {
  std::string parent;                          // "" or the name of a group such as "gguf"
  std::function<void(CLI::App& parent)> add;   // adds the subcommand (and its callback) under parent
};

std::vector<CommandSpec>& command_registry();

struct CommandRegistration {
  CommandRegistration(std::string parent, std::function<void(CLI::App&)> add) {
    command_registry().push_back({std::move(parent), std::move(add)});
  }
};

}  // namespace vellum::cli
