#pragma once
// A results table rendered three ways: aligned text (Markdown-compatible pipes), CSV (RFC 4180
// quoting) and JSON (an array of objects, numbers kept as numbers).

#include <nlohmann/json.hpp>

#include <string>
#include <variant>
#include <vector>

namespace vellum::bench {

using Cell = std::variant<std::string, double, int64_t>;

struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;  // each as long as columns (checked when rendered)

  std::string to_text() const;   // Markdown table; doubles with 2 decimals
  std::string to_csv() const;    // header line then rows; doubles with full precision
  nlohmann::json to_json() const;
};

std::string csv_escape(const std::string& field);

}  // namespace vellum::bench
