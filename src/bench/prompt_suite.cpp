#include "bench/prompt_suite.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "core/error.h"

namespace vellum::bench {

std::vector<std::string> parse_prompt_suite(const std::string& text, const std::string& name) {
  std::vector<std::string> prompts;
  std::istringstream in(text);
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (line.front() != '{') {
      prompts.push_back(line);
      continue;
    }
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw_error("{}:{}: invalid JSON: {}", name, n, e.what());
    }
    if (!j.contains("prompt") || !j["prompt"].is_string()) throw_error("{}:{}: expected a string \"prompt\" field", name, n);
    prompts.push_back(j["prompt"].get<std::string>());
  }
  if (prompts.empty()) throw_error("{}: no prompts", name);
  return prompts;
}

std::vector<std::string> load_prompt_suite(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw_error("cannot open prompt file {}", path);
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_prompt_suite(ss.str(), path);
}

}  // namespace vellum::bench
