#pragma once
// A prompt suite for `vellum proof`: one prompt per line, or JSON lines with a "prompt" field (a
// line starting with '{' is JSON). Empty lines are skipped; escapes such as \n are not interpreted in
// plain lines (use JSON lines for multi-line prompts).

#include <string>
#include <vector>

namespace vellum::bench {

// Throws vellum::Error naming the file and line for a bad JSON line, a missing or non-string
// "prompt", or a file with no prompts.
std::vector<std::string> load_prompt_suite(const std::string& path);
std::vector<std::string> parse_prompt_suite(const std::string& text, const std::string& name);

}  // namespace vellum::bench
