#include "bench/table.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"

namespace vellum::bench {
namespace {

void check(const Table& t) {
  for (size_t i = 0; i < t.rows.size(); ++i)
    if (t.rows[i].size() != t.columns.size())
      throw_error("table row {} has {} cells for {} columns", i, t.rows[i].size(), t.columns.size());
}

std::string text_cell(const Cell& c) {
  if (auto s = std::get_if<std::string>(&c)) return *s;
  if (auto d = std::get_if<double>(&c)) return fmt::format("{:.2f}", *d);
  return std::to_string(std::get<int64_t>(c));
}

}  // namespace

std::string csv_escape(const std::string& f) {
  if (f.find_first_of(",\"\n\r") == std::string::npos) return f;
  std::string out = "\"";
  for (char ch : f) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string Table::to_text() const {
  check(*this);
  std::vector<size_t> width(columns.size());
  for (size_t c = 0; c < columns.size(); ++c) width[c] = columns[c].size();
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], text_cell(r[c]).size());
  auto line = [&](auto cell) {
    std::string s = "|";
    for (size_t c = 0; c < columns.size(); ++c) s += fmt::format(" {:>{}} |", cell(c), width[c]);
    return s + "\n";
  };
  std::string out = line([&](size_t c) { return columns[c]; });
  out += line([&](size_t c) { return std::string(width[c], '-'); });
  for (const auto& r : rows) out += line([&](size_t c) { return text_cell(r[c]); });
  return out;
}

std::string Table::to_csv() const {
  check(*this);
  std::string out;
  for (size_t c = 0; c < columns.size(); ++c) out += (c ? "," : "") + csv_escape(columns[c]);
  out += "\n";
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) {
      std::string cell;
      if (auto s = std::get_if<std::string>(&r[c])) cell = csv_escape(*s);
      else if (auto d = std::get_if<double>(&r[c])) cell = fmt::format("{}", *d);
      else cell = std::to_string(std::get<int64_t>(r[c]));
      out += (c ? "," : "") + cell;
    }
    out += "\n";
  }
  return out;
}

nlohmann::json Table::to_json() const {
  check(*this);
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json o = nlohmann::json::object();
    for (size_t c = 0; c < r.size(); ++c) std::visit([&](const auto& v) { o[columns[c]] = v; }, r[c]);
    arr.push_back(o);
  }
  return arr;
}

}  // namespace vellum::bench
