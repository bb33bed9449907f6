#pragma once
// GGUF metadata: key/value pairs in file order, with typed accessors whose errors name the key:
// "key llama.block_count: expected u32, found string".

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gguf/value.h"

namespace vellum::gguf {

class Metadata {
 public:
  // Adds `key`, or replaces its value in place (keeping its position).
  void set(const std::string& key, Value value);
  bool erase(const std::string& key);

  bool contains(std::string_view key) const { return find(key) != nullptr; }
  const Value* find(std::string_view key) const;
  // Throws "key K: missing" when absent.
  const Value& at(std::string_view key) const;
  const std::vector<std::pair<std::string, Value>>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }

  // Strict typed access: T is one of uint8_t … int64_t, float, double, bool, std::string.
  template <typename T>
  T get(std::string_view key) const;
  template <typename T>
  T get_or(std::string_view key, T fallback) const {
    return contains(key) ? get<T>(key) : fallback;
  }
  // Any integer type / any float type (see Value::as_int, as_float).
  int64_t get_int(std::string_view key) const;
  std::optional<int64_t> find_int(std::string_view key) const;
  double get_float(std::string_view key) const;
  std::optional<double> find_float(std::string_view key) const;
  // Arrays of one scalar type, strict about the element type.
  template <typename T>
  std::vector<T> get_array(std::string_view key) const;

 private:
  std::vector<std::pair<std::string, Value>> entries_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace vellum::gguf
