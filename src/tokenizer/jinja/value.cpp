#include "tokenizer/jinja/value.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "tokenizer/jinja/unicode.h"

namespace vellum::jinja {

namespace {
constexpr int kMaxNesting = 256;  // repr/json/equality depth: values nest through namespaces only so far

void check_depth(int depth) {
  if (depth > kMaxNesting) throw_error("template error: value nested too deeply");
}
}  // namespace

// ---------------------------------------------------------------------------------------------
// Dict

std::string Dict::key_of(const Value& key) {
  switch (key.kind()) {
    case Value::Kind::String:
      return "s" + key.as_string();
    case Value::Kind::Int:
    case Value::Kind::Bool:
      return "i" + std::to_string(key.as_int());
    case Value::Kind::Float: {
      const double d = key.as_double();
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18) {
        return "i" + std::to_string(static_cast<int64_t>(d));
      }
      return "f" + python_float_repr(d);
    }
    case Value::Kind::None:
      return "n";
    case Value::Kind::List:
      if (key.is_tuple()) {
        std::string k = "t(";
        for (const auto& item : key.as_list().items) k += key_of(item) + ",";
        return k + ")";
      }
      break;
    default:
      break;
  }
  throw_error("template error: unhashable type: '{}'", key.type_name());
}

const Value* Dict::find(const Value& key) const {
  if (key.is_list() && !key.is_tuple()) return nullptr;
  if (key.is_dict() || key.is_object() || key.is_undefined()) return nullptr;
  const auto it = index_.find(key_of(key));
  return it == index_.end() ? nullptr : &items_[it->second].second;
}

const Value* Dict::find(const std::string& key) const {
  const auto it = index_.find("s" + key);
  return it == index_.end() ? nullptr : &items_[it->second].second;
}

void Dict::set(const Value& key, Value value) {
  auto k = key_of(key);
  const auto it = index_.find(k);
  if (it != index_.end()) {
    items_[it->second].second = std::move(value);
    return;
  }
  index_.emplace(std::move(k), items_.size());
  items_.emplace_back(key, std::move(value));
}

// ---------------------------------------------------------------------------------------------
// Value basics

Value Value::undefined(std::string hint) {
  return Value(Undefined{std::make_shared<const std::string>(std::move(hint))});
}

Value Value::list(std::vector<Value> items, SeqKind kind) {
  auto l = std::make_shared<List>();
  l->items = std::move(items);
  l->kind = kind;
  return Value(ListPtr(std::move(l)));
}

Value Value::dict(Dict d) { return Value(DictPtr(std::make_shared<const Dict>(std::move(d)))); }

double Value::as_double() const {
  switch (kind()) {
    case Kind::Float:
      return std::get<double>(data_);
    case Kind::Int:
      return static_cast<double>(std::get<int64_t>(data_));
    case Kind::Bool:
      return as_bool() ? 1.0 : 0.0;
    default:
      throw_error("template error: expected a number, got {}", type_name());
  }
}

const std::string& Value::undefined_hint() const {
  static const std::string empty = "value is undefined";
  const auto& u = std::get<Undefined>(data_);
  return u.hint ? *u.hint : empty;
}

bool Value::truthy() const {
  switch (kind()) {
    case Kind::Undefined:
    case Kind::None:
      return false;
    case Kind::Bool:
      return as_bool();
    case Kind::Int:
      return as_int() != 0;
    case Kind::Float:
      return as_double() != 0.0;
    case Kind::String:
      return !as_string().empty();
    case Kind::List:
      return as_list().kind == SeqKind::Generator || !as_list().items.empty();
    case Kind::Dict:
      return as_dict().size() > 0;
    case Kind::Object:
      return as_object()->truthy();
  }
  return false;
}

std::string Value::type_name() const {
  switch (kind()) {
    case Kind::Undefined:
      return "Undefined";
    case Kind::None:
      return "NoneType";
    case Kind::Bool:
      return "bool";
    case Kind::Int:
      return "int";
    case Kind::Float:
      return "float";
    case Kind::String:
      return "str";
    case Kind::List:
      switch (as_list().kind) {
        case SeqKind::List:
          return "list";
        case SeqKind::Tuple:
          return "tuple";
        case SeqKind::Generator:
          return "generator";
      }
      return "list";
    case Kind::Dict:
      return "dict";
    case Kind::Object:
      return as_object()->type_name();
  }
  return "object";
}

// ---------------------------------------------------------------------------------------------
// str() and repr()

std::string python_float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  // Shortest round-trip digits, then Python's choice between fixed and scientific notation.
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  bool negative = false;
  size_t pos = 0;
  if (sci[0] == '-') {
    negative = true;
    pos = 1;
  }
  const size_t e = sci.find('e');
  std::string digits;
  for (size_t i = pos; i < e; ++i) {
    if (sci[i] != '.') digits.push_back(sci[i]);
  }
  const int exp = std::stoi(sci.substr(e + 1));
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out = negative ? "-" : "";
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out += "0.";
      out.append(static_cast<size_t>(-exp - 1), '0');
      out += digits;
    } else {
      const auto int_len = static_cast<size_t>(exp + 1);
      if (digits.size() <= int_len) {
        out += digits;
        out.append(int_len - digits.size(), '0');
        out += ".0";
      } else {
        out += digits.substr(0, int_len);
        out += ".";
        out += digits.substr(int_len);
      }
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) {
    out += ".";
    out += digits.substr(1);
  }
  char eb[16];
  std::snprintf(eb, sizeof(eb), "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  out += eb;
  return out;
}

std::string python_string_repr(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  for (char32_t c : unicode::decode(s)) {
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (!unicode::is_printable(c)) {
      char buf[16];
      if (c < 0x100) {
        std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned>(c));
      } else if (c < 0x10000) {
        std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
      } else {
        std::snprintf(buf, sizeof(buf), "\\U%08x", static_cast<unsigned>(c));
      }
      out += buf;
    } else {
      unicode::append_utf8(out, c);
    }
  }
  out.push_back(quote);
  return out;
}

namespace {

void repr_into(const Value& v, std::string& out, int depth);

void seq_repr_into(const List& l, std::string& out, int depth) {
  if (l.kind == SeqKind::Generator) {
    out += "<generator object>";
    return;
  }
  const bool tuple = l.kind == SeqKind::Tuple;
  out += tuple ? "(" : "[";
  for (size_t i = 0; i < l.items.size(); ++i) {
    if (i) out += ", ";
    repr_into(l.items[i], out, depth + 1);
  }
  if (tuple && l.items.size() == 1) out += ",";
  out += tuple ? ")" : "]";
}

void repr_into(const Value& v, std::string& out, int depth) {
  check_depth(depth);
  switch (v.kind()) {
    case Value::Kind::Undefined:
      out += "Undefined";  // what Python's repr() of jinja2's Undefined shows inside a list
      return;
    case Value::Kind::String:
      out += python_string_repr(v.as_string());
      return;
    case Value::Kind::List:
      seq_repr_into(v.as_list(), out, depth);
      return;
    case Value::Kind::Dict: {
      out += "{";
      bool first = true;
      for (const auto& [k, val] : v.as_dict().items()) {
        if (!first) out += ", ";
        first = false;
        repr_into(k, out, depth + 1);
        out += ": ";
        repr_into(val, out, depth + 1);
      }
      out += "}";
      return;
    }
    case Value::Kind::Object: {
      // An object's repr can print values holding the object again (ns.me = ns): count those
      // re-entries too, since the depth parameter restarts inside Object::repr.
      thread_local int object_depth = 0;
      if (++object_depth > kMaxNesting) {
        object_depth = 0;
        throw_error("template error: value nested too deeply");
      }
      try {
        out += v.as_object()->repr();
      } catch (...) {
        object_depth = 0;
        throw;
      }
      --object_depth;
      return;
    }
    default:
      out += v.str();
      return;
  }
}

}  // namespace

std::string Value::str() const {
  switch (kind()) {
    case Kind::Undefined:
      return "";
    case Kind::None:
      return "None";
    case Kind::Bool:
      return as_bool() ? "True" : "False";
    case Kind::Int:
      return std::to_string(as_int());
    case Kind::Float:
      return python_float_repr(as_double());
    case Kind::String:
      return as_string();
    default: {
      std::string out;
      repr_into(*this, out, 0);
      return out;
    }
  }
}

std::string Value::repr() const {
  std::string out;
  repr_into(*this, out, 0);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Equality and ordering

namespace {

bool equals_at(const Value& a, const Value& b, int depth) {
  check_depth(depth);
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::Undefined:
    case Value::Kind::None:
      return true;
    case Value::Kind::String:
      return a.as_string() == b.as_string();
    case Value::Kind::List: {
      const auto& la = a.as_list();
      const auto& lb = b.as_list();
      if (la.kind == SeqKind::Generator || lb.kind == SeqKind::Generator) return a.list_ptr() == b.list_ptr();
      if (la.kind != lb.kind) return false;
      if (la.items.size() != lb.items.size()) return false;
      for (size_t i = 0; i < la.items.size(); ++i) {
        if (!equals_at(la.items[i], lb.items[i], depth + 1)) return false;
      }
      return true;
    }
    case Value::Kind::Dict: {
      const auto& da = a.as_dict();
      const auto& db = b.as_dict();
      if (da.size() != db.size()) return false;
      for (const auto& [k, v] : da.items()) {
        const Value* other = db.find(k);
        if (!other || !equals_at(v, *other, depth + 1)) return false;
      }
      return true;
    }
    case Value::Kind::Object:
      return a.as_object() == b.as_object();
    default:
      return false;
  }
}

int compare_at(const Value& a, const Value& b, int depth) {
  check_depth(depth);
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) {
      const double x = a.as_double(), y = b.as_double();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    const int64_t x = a.as_int(), y = b.as_int();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.is_string() && b.is_string()) {
    const int c = a.as_string().compare(b.as_string());  // UTF-8 byte order == code point order
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a.is_list() && b.is_list() && a.as_list().kind == b.as_list().kind && a.as_list().kind != SeqKind::Generator) {
    const auto& la = a.as_list().items;
    const auto& lb = b.as_list().items;
    for (size_t i = 0; i < la.size() && i < lb.size(); ++i) {
      if (!equals_at(la[i], lb[i], depth + 1)) return compare_at(la[i], lb[i], depth + 1);
    }
    return la.size() < lb.size() ? -1 : (la.size() > lb.size() ? 1 : 0);
  }
  throw_error("template error: '<' not supported between instances of '{}' and '{}'", a.type_name(), b.type_name());
}

}  // namespace

bool Value::equals(const Value& other) const { return equals_at(*this, other, 0); }
int Value::compare(const Value& other) const { return compare_at(*this, other, 0); }

// ---------------------------------------------------------------------------------------------
// Object defaults

Value Object::get_attr(const std::string& name) const {
  return Value::undefined(fmt::format("'{}' object has no attribute '{}'", type_name(), name));
}

Value Object::call(Evaluator&, CallArgs&) { throw_error("template error: '{}' object is not callable", type_name()); }

std::string Object::repr() const { return fmt::format("<{} object>", type_name()); }

// ---------------------------------------------------------------------------------------------
// JSON

namespace {

template <typename Json>
Value from_json_impl(const Json& j, int depth) {
  check_depth(depth);
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return Value::none();
    case nlohmann::json::value_t::boolean:
      return Value(j.template get<bool>());
    case nlohmann::json::value_t::number_integer:
      return Value(j.template get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      const auto u = j.template get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<int64_t>(u));
      return Value(static_cast<double>(u));
    }
    case nlohmann::json::value_t::number_float:
      return Value(j.template get<double>());
    case nlohmann::json::value_t::string:
      return Value(j.template get<std::string>());
    case nlohmann::json::value_t::array: {
      std::vector<Value> items;
      items.reserve(j.size());
      for (const auto& e : j) items.push_back(from_json_impl(e, depth + 1));
      return Value::list(std::move(items));
    }
    case nlohmann::json::value_t::object: {
      Dict d;
      for (auto it = j.begin(); it != j.end(); ++it) d.set(Value(it.key()), from_json_impl(it.value(), depth + 1));
      return Value::dict(std::move(d));
    }
    default:
      return Value::none();
  }
}

void json_string_into(const std::string& s, std::string& out, bool ensure_ascii) {
  out.push_back('"');
  auto escape_cp = [&](char32_t c) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
    out += buf;
  };
  for (char32_t c : unicode::decode(s)) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          escape_cp(c);
        } else if (ensure_ascii && c >= 0x7F) {
          if (c < 0x10000) {
            escape_cp(c);
          } else {
            const char32_t v = c - 0x10000;
            escape_cp(0xD800 + (v >> 10));
            escape_cp(0xDC00 + (v & 0x3FF));
          }
        } else {
          unicode::append_utf8(out, c);
        }
    }
  }
  out.push_back('"');
}

std::string json_float(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return python_float_repr(d);
}

void dump_into(const Value& v, const JsonDumpOptions& o, std::string& out, int level) {
  check_depth(level);
  auto newline = [&](int lvl) {
    out.push_back('\n');
    out.append(static_cast<size_t>(o.indent) * static_cast<size_t>(lvl), ' ');
  };
  const std::string& item_sep = o.item_separator;
  switch (v.kind()) {
    case Value::Kind::None:
      out += "null";
      return;
    case Value::Kind::Bool:
      out += v.as_bool() ? "true" : "false";
      return;
    case Value::Kind::Int:
      out += std::to_string(v.as_int());
      return;
    case Value::Kind::Float:
      out += json_float(v.as_double());
      return;
    case Value::Kind::String:
      json_string_into(v.as_string(), out, o.ensure_ascii);
      return;
    case Value::Kind::List: {
      const auto& l = v.as_list();
      if (l.kind == SeqKind::Generator) break;
      if (l.items.empty()) {
        out += "[]";
        return;
      }
      out.push_back('[');
      for (size_t i = 0; i < l.items.size(); ++i) {
        if (i) out += item_sep;
        if (o.indent >= 0) newline(level + 1);
        dump_into(l.items[i], o, out, level + 1);
      }
      if (o.indent >= 0) newline(level);
      out.push_back(']');
      return;
    }
    case Value::Kind::Dict: {
      const auto& d = v.as_dict();
      if (d.size() == 0) {
        out += "{}";
        return;
      }
      std::vector<std::pair<std::string, const Value*>> entries;
      entries.reserve(d.size());
      for (const auto& [k, val] : d.items()) {
        std::string key;
        switch (k.kind()) {
          case Value::Kind::String:
            key = k.as_string();
            break;
          case Value::Kind::Bool:
            key = k.as_bool() ? "true" : "false";
            break;
          case Value::Kind::Int:
            key = std::to_string(k.as_int());
            break;
          case Value::Kind::Float:
            key = json_float(k.as_double());
            break;
          case Value::Kind::None:
            key = "null";
            break;
          default:
            throw_error("template error: keys must be str, int, float, bool or None, not {}", k.type_name());
        }
        entries.emplace_back(std::move(key), &val);
      }
      if (o.sort_keys) {
        std::stable_sort(entries.begin(), entries.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
      }
      out.push_back('{');
      bool first = true;
      for (const auto& [key, val] : entries) {
        if (!first) out += item_sep;
        first = false;
        if (o.indent >= 0) newline(level + 1);
        json_string_into(key, out, o.ensure_ascii);
        out += o.key_separator;
        dump_into(*val, o, out, level + 1);
      }
      if (o.indent >= 0) newline(level);
      out.push_back('}');
      return;
    }
    default:
      break;
  }
  const std::string type = v.is_undefined() ? "Undefined" : v.type_name();
  throw_error("template error: Object of type {} is not JSON serializable", type);
}

}  // namespace

Value from_json(const nlohmann::ordered_json& j) { return from_json_impl(j, 0); }
Value from_json(const nlohmann::json& j) { return from_json_impl(j, 0); }

std::string to_json_string(const Value& v, const JsonDumpOptions& options) {
  std::string out;
  dump_into(v, options, out, 0);
  return out;
}

}  // namespace vellum::jinja
