#pragma once
// Helpers shared by test_quant.cpp and test_half.cpp: reading the vectors that
// tools/gen_quant_vectors.py writes under tests/data/quant/.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace vellum::test {

inline nlohmann::json load_quant_vectors(const std::string& name) {
  const std::string path = std::string(VELLUM_TEST_DATA_DIR) + "/quant/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open test vectors " + path + " (run tools/gen_quant_vectors.py)");
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

inline std::vector<uint8_t> from_hex(const std::string& hex) {
  if (hex.size() % 2 != 0) throw std::runtime_error("odd-length hex string");
  std::vector<uint8_t> out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) out[i] = uint8_t(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  return out;
}

inline std::string to_hex(const uint8_t* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  s.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    s += digits[p[i] >> 4];
    s += digits[p[i] & 15];
  }
  return s;
}

inline uint32_t parse_u32(const std::string& s) { return uint32_t(std::stoul(s, nullptr, 16)); }

// f32 values from a JSON array of u32 bit patterns in hex.
inline std::vector<float> floats_from_bits(const nlohmann::json& arr) {
  std::vector<float> out;
  out.reserve(arr.size());
  for (const auto& v : arr) out.push_back(std::bit_cast<float>(parse_u32(v.get<std::string>())));
  return out;
}

inline std::string bits_str(float f) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", std::bit_cast<uint32_t>(f));
  return buf;
}

}  // namespace vellum::test
