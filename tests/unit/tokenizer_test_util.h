#pragma once
// Helpers shared by the tokenizer tests: fixture paths and the llama.cpp vocab-test file format.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace vellum::tokenizer::testing {

inline std::filesystem::path fixtures_dir() { return std::filesystem::path(VELLUM_FIXTURES_DIR); }

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The .inp format of llama.cpp's test-tokenizer-0: strings separated by "\n__ggml_vocab_test__\n";
// the text after the last separator (empty in practice) is not a case.
inline std::vector<std::string> split_vocab_inputs(const std::string& raw) {
  static const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> out;
  size_t pos = 0;
  while (true) {
    const size_t next = raw.find(sep, pos);
    if (next == std::string::npos) break;
    out.push_back(raw.substr(pos, next - pos));
    pos = next + sep.size();
  }
  return out;
}

// The .out format: one line per case, ids separated by spaces.
inline std::vector<std::vector<int32_t>> parse_vocab_outputs(const std::string& raw) {
  std::vector<std::vector<int32_t>> out;
  std::istringstream in(raw);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::vector<int32_t> ids;
    int64_t id;
    while (ls >> id) ids.push_back(static_cast<int32_t>(id));
    out.push_back(std::move(ids));
  }
  return out;
}

inline std::string ids_string(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

}  // namespace vellum::tokenizer::testing
