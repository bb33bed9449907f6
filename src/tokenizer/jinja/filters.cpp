// jinja2 3.1's builtin filters, plus `tojson` as Hugging Face overrides it:
// json.dumps(x, ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <unordered_map>

#include "core/error.h"
#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/objects.h"
#include "tokenizer/jinja/unicode.h"

namespace vellum::jinja {

std::string to_str(const Value& v) { return v.str(); }

std::string python_replace(Evaluator& ev, const std::string& s, const std::string& old, const std::string& repl,
                           int64_t count) {
  std::string out;
  if (old.empty()) {  // Python inserts `repl` between characters and at both ends
    const auto chars = iterate(Value(s));
    int64_t n = 0;
    for (const auto& c : chars) {
      if (count < 0 || n < count) {
        out += repl;
        ++n;
      }
      out += c.as_string();
      ev.check_string_size(out.size());
    }
    if (count < 0 || n < count) out += repl;
    return out;
  }
  size_t pos = 0;
  int64_t n = 0;
  while (count < 0 || n < count) {
    const size_t f = s.find(old, pos);
    if (f == std::string::npos) break;
    out.append(s, pos, f - pos);
    out += repl;
    ev.check_string_size(out.size());
    pos = f + old.size();
    ++n;
  }
  out.append(s, pos, std::string::npos);
  ev.check_string_size(out.size());
  return out;
}

Value attribute_path(Evaluator& ev, const Value& v, const std::string& path) {
  Value cur = v;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const bool numeric = !part.empty() && part.size() < 18 &&
                         std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    cur = ev.get_item(cur, numeric ? Value(static_cast<int64_t>(std::stoll(part))) : Value(part));
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

namespace {

using FilterFn = std::function<Value(Evaluator&, const Value&, CallArgs&)>;

Value generator(std::vector<Value> items) { return Value::list(std::move(items), SeqKind::Generator); }

// Sort/unique key: with case_sensitive=False strings compare lower-cased, as jinja2's ignore_case.
Value fold_key(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value(unicode::lower(v.as_string()));
  return v;
}

std::vector<std::string> split_attrs(const Value& attribute) {
  std::vector<std::string> out;
  if (attribute.is_none() || attribute.is_undefined()) return out;
  if (attribute.is_integer()) return {std::to_string(attribute.as_int())};
  const std::string s = to_str(attribute);
  size_t start = 0;
  while (true) {
    const size_t comma = s.find(',', start);
    std::string part = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    part.erase(0, part.find_first_not_of(' '));
    if (const size_t e = part.find_last_not_of(' '); e != std::string::npos) part.erase(e + 1);
    out.push_back(part);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

Value sort_key(Evaluator& ev, const Value& item, const std::vector<std::string>& attrs, bool case_sensitive) {
  if (attrs.empty()) return fold_key(item, case_sensitive);
  if (attrs.size() == 1) return fold_key(attribute_path(ev, item, attrs[0]), case_sensitive);
  std::vector<Value> parts;
  for (const auto& a : attrs) parts.push_back(fold_key(attribute_path(ev, item, a), case_sensitive));
  return Value::list(std::move(parts));
}

// `list_keys`: jinja2's sort(attribute=…) compares one-element lists of keys, so equal keys (even
// two Undefined) never reach `<`; sort() without attribute and dictsort compare keys directly.
std::vector<Value> sorted(Evaluator& ev, std::vector<Value> items, const std::vector<std::string>& attrs,
                          bool case_sensitive, bool reverse, bool list_keys) {
  ev.step(items.size());
  std::vector<std::pair<Value, Value>> keyed;
  keyed.reserve(items.size());
  for (auto& i : items) keyed.emplace_back(sort_key(ev, i, attrs, case_sensitive), std::move(i));
  auto less = [list_keys](const Value& x, const Value& y) {
    if (list_keys && x.equals(y)) return false;
    return x.compare(y) < 0;
  };
  std::stable_sort(keyed.begin(), keyed.end(), [reverse, &less](const auto& a, const auto& b) {
    return reverse ? less(b.first, a.first) : less(a.first, b.first);
  });
  std::vector<Value> out;
  out.reserve(keyed.size());
  for (auto& [k, v] : keyed) out.push_back(std::move(v));
  return out;
}

size_t py_len(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined:
      return 0;
    case Value::Kind::String:
      return unicode::length(v.as_string());
    case Value::Kind::List:
      if (v.is_generator()) throw_error("TypeError: object of type 'generator' has no len()");
      return v.as_list().items.size();
    case Value::Kind::Dict:
      return v.as_dict().size();
    default:
      throw_error("TypeError: object of type '{}' has no len()", v.type_name());
  }
}

}  // namespace

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

namespace {

// Python int(str): optional sign, digits with single underscores, surrounding whitespace.
std::optional<int64_t> parse_int(const std::string& s, int base) {
  std::string t;
  {
    const std::u32string u = unicode::decode(s);
    size_t b = 0, e = u.size();
    while (b < e && unicode::is_space(u[b])) ++b;
    while (e > b && unicode::is_space(u[e - 1])) --e;
    t = unicode::encode(std::u32string_view(u).substr(b, e - b));
  }
  if (t.empty()) return std::nullopt;
  bool neg = false;
  size_t i = 0;
  if (t[0] == '+' || t[0] == '-') {
    neg = t[0] == '-';
    i = 1;
  }
  if (base == 16 && t.size() > i + 1 && t[i] == '0' && (t[i + 1] == 'x' || t[i + 1] == 'X')) i += 2;
  if (i >= t.size()) return std::nullopt;
  __int128 v = 0;
  bool prev_digit = false;
  for (; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '_') {
      if (!prev_digit) return std::nullopt;
      prev_digit = false;
      continue;
    }
    int d = -1;
    if (c >= '0' && c <= '9') d = c - '0';
    if (c >= 'a' && c <= 'z') d = c - 'a' + 10;
    if (c >= 'A' && c <= 'Z') d = c - 'A' + 10;
    if (d < 0 || d >= base) return std::nullopt;
    v = v * base + d;
    if (v > static_cast<__int128>(INT64_MAX) + 1) throw_error("template error: integer too large");
    prev_digit = true;
  }
  if (!prev_digit) return std::nullopt;
  if (neg) v = -v;
  if (v > INT64_MAX) throw_error("template error: integer too large");
  return static_cast<int64_t>(v);
}

std::optional<double> parse_float(const std::string& s) {
  const std::u32string u = unicode::decode(s);
  size_t b = 0, e = u.size();
  while (b < e && unicode::is_space(u[b])) ++b;
  while (e > b && unicode::is_space(u[e - 1])) --e;
  std::string t = unicode::encode(std::u32string_view(u).substr(b, e - b));
  if (t.empty()) return std::nullopt;
  std::string lower = unicode::lower(t);
  const std::string body = (lower[0] == '+' || lower[0] == '-') ? lower.substr(1) : lower;
  const double sign = lower[0] == '-' ? -1.0 : 1.0;
  if (body == "inf" || body == "infinity") return sign * INFINITY;
  if (body == "nan") return NAN;
  // digits [. digits] [e [sign] digits], underscores between digits
  std::string clean;
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '_') {
      if (i == 0 || i + 1 >= t.size() || !std::isdigit(static_cast<unsigned char>(t[i - 1])) ||
          !std::isdigit(static_cast<unsigned char>(t[i + 1])))
        return std::nullopt;
      continue;
    }
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) {
      return std::nullopt;
    }
    clean.push_back(c);
  }
  char* end = nullptr;
  const double d = std::strtod(clean.c_str(), &end);
  if (end != clean.c_str() + clean.size()) return std::nullopt;
  return d;
}

double python_round(double x, int64_t ndigits) {
  if (!std::isfinite(x)) return x;
  if (ndigits >= 0) {
    if (ndigits > 300) return x;
    char buf[512];
    std::snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(ndigits), x);  // exact value, ties to even
    return std::strtod(buf, nullptr);
  }
  if (ndigits < -308) return 0.0 * x;
  const double p = std::pow(10.0, static_cast<double>(-ndigits));
  const double y = x / p;
  double r = std::nearbyint(y);  // default rounding mode: ties to even
  return r * p;
}

Value filter_tojson(Evaluator& ev, const Value& input, CallArgs& args) {
  const Value ensure_ascii = args.get(0, "ensure_ascii", Value(false));
  const Value indent = args.get(1, "indent", Value::none());
  const Value separators = args.get(2, "separators", Value::none());
  const Value sort_keys = args.get(3, "sort_keys", Value(false));
  args.finish("tojson", 4);
  JsonDumpOptions o;
  o.ensure_ascii = ensure_ascii.truthy();
  o.sort_keys = sort_keys.truthy();
  if (!indent.is_none() && !indent.is_undefined()) {
    if (indent.is_integer()) {
      o.indent = static_cast<int>(std::clamp<int64_t>(indent.as_int(), 0, 64));
    } else if (indent.is_string() && indent.as_string().empty()) {
      o.indent = 0;
    } else if (indent.is_string() && indent.as_string().find_first_not_of(' ') == std::string::npos &&
               indent.as_string().size() <= 64) {
      o.indent = static_cast<int>(indent.as_string().size());
    } else {
      throw_error("template error: tojson indent must be an integer");
    }
    o.item_separator = std::string(1, ',');  // (plain "," trips a GCC 12 -Wrestrict false positive)
  }
  if (!separators.is_none() && !separators.is_undefined()) {
    if (!separators.is_list() || separators.as_list().items.size() != 2 || !separators.as_list().items[0].is_string() ||
        !separators.as_list().items[1].is_string()) {
      throw_error("template error: tojson separators must be a pair of strings");
    }
    o.item_separator = separators.as_list().items[0].as_string();
    o.key_separator = separators.as_list().items[1].as_string();
  }
  std::string s = to_json_string(input, o);
  ev.check_string_size(s.size());
  return Value(std::move(s));
}

Value filter_indent(Evaluator& ev, const Value& input, CallArgs& args) {
  const Value width = args.get(0, "width", Value(int64_t{4}));
  const Value first = args.get(1, "first", Value(false));
  const Value blank = args.get(2, "blank", Value(false));
  args.finish("indent", 3);
  std::string indention;
  if (width.is_string()) {
    indention = width.as_string();
  } else if (width.is_integer()) {
    ev.check_string_size(width.as_int() < 0 ? 0 : static_cast<size_t>(width.as_int()));
    indention = std::string(width.as_int() < 0 ? 0 : static_cast<size_t>(width.as_int()), ' ');
  } else {
    throw_error("TypeError: indent width must be an int or a str");
  }
  if (input.is_undefined()) undefined_error(input);
  if (!input.is_string()) throw_error("TypeError: indent expects a string, got {}", input.type_name());
  std::string s = input.as_string() + "\n";
  // str.splitlines(): \n, \r, \r\n (and a few rarer separators, treated as text here).
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n' || s[i] == '\r') {
      lines.push_back(s.substr(start, i - start));
      if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
      start = i + 1;
    }
  }
  if (start < s.size()) lines.push_back(s.substr(start));
  std::string rv;
  if (blank.truthy()) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i) rv += "\n" + indention;
      rv += lines[i];
      ev.check_string_size(rv.size());
    }
  } else if (!lines.empty()) {
    rv = lines[0];
    for (size_t i = 1; i < lines.size(); ++i) {
      rv += "\n";
      if (!lines[i].empty()) rv += indention;
      rv += lines[i];
      ev.check_string_size(rv.size());
    }
  }
  if (first.truthy()) rv = indention + rv;
  return Value(std::move(rv));
}

// select/reject/selectattr/rejectattr share this: keep items whose test result equals `keep`.
Value select_items(Evaluator& ev, const Value& input, CallArgs& args, bool keep, bool by_attr) {
  if (!input.truthy()) return generator({});  // jinja2: `if value:` before anything else
  std::string attr;
  size_t next = 0;
  if (by_attr) {
    if (args.positional.empty()) throw_error("TypeError: missing attribute for selectattr/rejectattr");
    attr = to_str(args.positional[0]);
    next = 1;
  }
  std::string test;
  CallArgs test_args;
  const bool with_test = args.positional.size() > next;
  if (with_test) {
    test = to_str(args.positional[next]);
    test_args.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(next + 1), args.positional.end());
    test_args.kwargs = args.kwargs;
    if (!has_test(test)) throw_error("TemplateRuntimeError: No test named '{}'", test);
  } else if (!args.kwargs.empty()) {
    throw_error("template error: unexpected keyword argument '{}'", args.kwargs[0].first);
  }
  std::vector<Value> out;
  const auto items = iterate(input);
  ev.step(items.size());
  for (const auto& item : items) {
    const Value subject = by_attr ? attribute_path(ev, item, attr) : item;
    bool r;
    if (with_test) {
      CallArgs a = test_args;
      r = apply_test(ev, test, subject, a);
    } else {
      r = subject.truthy();
    }
    if (r == keep) out.push_back(item);
  }
  return generator(std::move(out));
}

Value filter_map(Evaluator& ev, const Value& input, CallArgs& args) {
  if (!input.truthy()) return generator({});
  const auto items = iterate(input);
  ev.step(items.size());
  std::vector<Value> out;
  out.reserve(items.size());
  if (args.positional.empty()) {
    const Value attribute = args.get(99, "attribute");
    const bool has_default = args.has(99, "default");
    const Value dflt = args.get(99, "default");
    if (attribute.is_undefined()) throw_error("TypeError: map requires a filter name or attribute=");
    args.finish("map", 0);
    const std::string path = to_str(attribute);
    for (const auto& item : items) {
      Value v = attribute_path(ev, item, path);
      if (v.is_undefined() && has_default) v = dflt;
      out.push_back(std::move(v));
    }
    return generator(std::move(out));
  }
  const std::string name = to_str(args.positional[0]);
  if (!has_filter(name)) throw_error("TemplateRuntimeError: No filter named '{}'", name);
  CallArgs rest;
  rest.positional.assign(args.positional.begin() + 1, args.positional.end());
  rest.kwargs = args.kwargs;
  for (const auto& item : items) {
    CallArgs a = rest;
    out.push_back(apply_filter(ev, name, item, a));
  }
  return generator(std::move(out));
}

Value min_max(Evaluator& ev, const Value& input, CallArgs& args, bool want_max) {
  const bool case_sensitive = args.get(0, "case_sensitive", Value(false)).truthy();
  const std::vector<std::string> attrs = split_attrs(args.get(1, "attribute", Value::none()));
  args.finish(want_max ? "max" : "min", 2);
  const auto items = iterate(input);
  ev.step(items.size());
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  size_t best = 0;
  Value best_key = sort_key(ev, items[0], attrs, case_sensitive);
  for (size_t i = 1; i < items.size(); ++i) {
    Value k = sort_key(ev, items[i], attrs, case_sensitive);
    const int c = k.compare(best_key);
    if (want_max ? c > 0 : c < 0) {
      best = i;
      best_key = std::move(k);
    }
  }
  return items[best];
}

const std::unordered_map<std::string, FilterFn>& filter_table() {
  static const std::unordered_map<std::string, FilterFn> table = [] {
    std::unordered_map<std::string, FilterFn> t;
    t["tojson"] = filter_tojson;
    t["indent"] = filter_indent;
    t["map"] = filter_map;
    t["select"] = [](Evaluator& ev, const Value& v, CallArgs& a) { return select_items(ev, v, a, true, false); };
    t["reject"] = [](Evaluator& ev, const Value& v, CallArgs& a) { return select_items(ev, v, a, false, false); };
    t["selectattr"] = [](Evaluator& ev, const Value& v, CallArgs& a) { return select_items(ev, v, a, true, true); };
    t["rejectattr"] = [](Evaluator& ev, const Value& v, CallArgs& a) { return select_items(ev, v, a, false, true); };
    t["max"] = [](Evaluator& ev, const Value& v, CallArgs& a) { return min_max(ev, v, a, true); };
    t["min"] = [](Evaluator& ev, const Value& v, CallArgs& a) { return min_max(ev, v, a, false); };
    t["trim"] = [](Evaluator& ev, const Value& v, CallArgs& a) {
      CallArgs m;
      m.positional.push_back(a.get(0, "chars", Value::none()));
      a.finish("trim", 1);
      return call_method(ev, Value(to_str(v)), "strip", m);
    };
    auto str_fn = [](const char* method) {
      return [method](Evaluator& ev, const Value& v, CallArgs& a) {
        a.finish(method, 0);
        CallArgs none;
        return call_method(ev, Value(to_str(v)), method, none);
      };
    };
    t["upper"] = str_fn("upper");
    t["lower"] = str_fn("lower");
    // jinja2's title is not str.title: words start after runs of whitespace, '-', '(', '{', '[', '<'.
    t["title"] = [](Evaluator&, const Value& v, CallArgs& a) {
      a.finish("title", 0);
      std::string out;
      bool word_start = true;
      for (char32_t c : unicode::decode(to_str(v))) {
        const bool sep = unicode::is_space(c) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<';
        if (sep) {
          unicode::append_utf8(out, c);
          word_start = true;
        } else {
          unicode::append_utf8(out, word_start ? unicode::to_upper(c) : unicode::to_lower(c));
          word_start = false;
        }
      }
      return Value(std::move(out));
    };
    t["capitalize"] = str_fn("capitalize");
    t["string"] = [](Evaluator&, const Value& v, CallArgs& a) {
      a.finish("string", 0);
      return Value(to_str(v));
    };
    t["safe"] = [](Evaluator&, const Value& v, CallArgs& a) {
      a.finish("safe", 0);
      return Value(to_str(v)).mark_safe();
    };
    t["escape"] = [](Evaluator&, const Value& v, CallArgs& a) {
      a.finish("escape", 0);
      if (v.is_safe()) return v;
      return Value(html_escape(to_str(v))).mark_safe();
    };
    t["e"] = t["escape"];
    t["forceescape"] = [](Evaluator&, const Value& v, CallArgs& a) {
      a.finish("forceescape", 0);
      return Value(html_escape(to_str(v))).mark_safe();
    };
    t["length"] = [](Evaluator&, const Value& v, CallArgs& a) {
      a.finish("length", 0);
      return Value(static_cast<int64_t>(py_len(v)));
    };
    t["count"] = t["length"];
    t["default"] = [](Evaluator&, const Value& v, CallArgs& a) {
      const Value dflt = a.get(0, "default_value", Value(""));
      const bool boolean = a.get(1, "boolean", Value(false)).truthy();
      a.finish("default", 2);
      if (v.is_undefined() || (boolean && !v.truthy())) return dflt;
      return v;
    };
    t["d"] = t["default"];
    t["first"] = [](Evaluator&, const Value& v, CallArgs& a) {
      a.finish("first", 0);
      if (v.is_list() || v.is_undefined()) {
        if (!v.is_undefined() && !v.as_list().items.empty()) return v.as_list().items.front();
        return Value::undefined("No first item, sequence was empty.");
      }
      const auto items = iterate(v);
      if (items.empty()) return Value::undefined("No first item, sequence was empty.");
      return items.front();
    };
    t["last"] = [](Evaluator&, const Value& v, CallArgs& a) {
      a.finish("last", 0);
      if (v.is_generator()) throw_error("TypeError: 'generator' object is not reversible");
      const auto items = iterate(v);
      if (items.empty()) return Value::undefined("No last item, sequence was empty.");
      return items.back();
    };
    t["list"] = [](Evaluator& ev, const Value& v, CallArgs& a) {
      a.finish("list", 0);
      auto items = iterate(v);
      ev.step(items.size());
      return Value::list(std::move(items));
    };
    t["join"] = [](Evaluator& ev, const Value& v, CallArgs& a) {
      const std::string sep = to_str(a.get(0, "d", Value("")));
      const Value attribute = a.get(1, "attribute", Value::none());
      a.finish("join", 2);
      std::string out;
      bool first = true;
      const auto items = iterate(v);
      ev.step(items.size());
      for (const auto& item : items) {
        if (!first) out += sep;
        first = false;
        out += to_str(attribute.is_none() ? item : attribute_path(ev, item, to_str(attribute)));
        ev.check_string_size(out.size());
      }
      return Value(std::move(out));
    };
    t["items"] = [](Evaluator& ev, const Value& v, CallArgs& a) {
      a.finish("items", 0);
      if (v.is_undefined()) return generator({});
      if (!v.is_dict()) throw_error("TypeError: Can only get item pairs from a mapping.");
      std::vector<Value> out;
      ev.step(v.as_dict().size());
      for (const auto& [k, val] : v.as_dict().items()) out.push_back(Value::list({k, val}, SeqKind::Tuple));
      return generator(std::move(out));
    };
    t["dictsort"] = [](Evaluator& ev, const Value& v, CallArgs& a) {
      const bool case_sensitive = a.get(0, "case_sensitive", Value(false)).truthy();
      const std::string by = to_str(a.get(1, "by", Value("key")));
      const bool reverse = a.get(2, "reverse", Value(false)).truthy();
      a.finish("dictsort", 3);
      if (v.is_undefined()) undefined_error(v);
      if (!v.is_dict()) throw_error("TypeError: dictsort needs a mapping");
      if (by != "key" && by != "value") throw_error("FilterArgumentError: You can only sort by either \"key\" or \"value\"");
      std::vector<Value> pairs;
      for (const auto& [k, val] : v.as_dict().items()) pairs.push_back(Value::list({k, val}, SeqKind::Tuple));
      return Value::list(sorted(ev, std::move(pairs), {by == "key" ? "0" : "1"}, case_sensitive, reverse, false));
    };
    t["sort"] = [](Evaluator& ev, const Value& v, CallArgs& a) {
      const bool reverse = a.get(0, "reverse", Value(false)).truthy();
      const bool case_sensitive = a.get(1, "case_sensitive", Value(false)).truthy();
      const auto attrs = split_attrs(a.get(2, "attribute", Value::none()));
      a.finish("sort", 3);
      return Value::list(sorted(ev, iterate(v), attrs, case_sensitive, reverse, !attrs.empty()));
    };
    t["unique"] = [](Evaluator& ev, const Value& v, CallArgs& a) {
      const bool case_sensitive = a.get(0, "case_sensitive", Value(false)).truthy();
      const auto attrs = split_attrs(a.get(1, "attribute", Value::none()));
      a.finish("unique", 2);
      std::vector<Value> out;
      Dict seen;
      const auto items = iterate(v);
      ev.step(items.size());
      for (const auto& item : items) {
        const Value key = sort_key(ev, item, attrs, case_sensitive);
        if (seen.find(key)) continue;
        seen.set(key, Value(true));
        out.push_back(item);
      }
      return generator(std::move(out));
    };
    t["reverse"] = [](Evaluator& ev, const Value& v, CallArgs& a) {
      a.finish("reverse", 0);
      if (v.is_string()) {
        std::u32string u = unicode::decode(v.as_string());
        std::reverse(u.begin(), u.end());
        return Value(unicode::encode(u));
      }
      auto items = iterate(v);
      ev.step(items.size());
      std::reverse(items.begin(), items.end());
      return generator(std::move(items));
    };
    t["replace"] = [](Evaluator& ev, const Value& v, CallArgs& a) {
      const Value old_v = a.get(0, "old");
      const Value new_v = a.get(1, "new");
      const Value count = a.get(2, "count", Value::none());
      a.finish("replace", 3);
      int64_t n = -1;
      if (!count.is_none() && !count.is_undefined()) {
        if (!count.is_integer()) throw_error("TypeError: replace count must be an integer");
        n = count.as_int();
      }
      return Value(python_replace(ev, to_str(v), to_str(old_v), to_str(new_v), n));
    };
    t["int"] = [](Evaluator&, const Value& v, CallArgs& a) {
      const Value dflt = a.get(0, "default", Value(int64_t{0}));
      const Value base = a.get(1, "base", Value(int64_t{10}));
      a.finish("int", 2);
      if (v.is_undefined()) undefined_error(v);  // int(Undefined) raises, and do_int does not catch it
      if (v.is_integer()) return Value(v.as_int());
      if (v.is_float()) {
        const double d = v.as_double();
        if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) throw_error("OverflowError: cannot convert float to integer");
        return Value(static_cast<int64_t>(d));
      }
      if (v.is_string()) {
        const int b = base.is_integer() ? static_cast<int>(std::clamp<int64_t>(base.as_int(), 2, 36)) : 10;
        if (auto i = parse_int(v.as_string(), b)) return Value(*i);
        if (auto f = parse_float(v.as_string())) {
          if (!std::isfinite(*f) || std::fabs(*f) >= 9.2e18) throw_error("OverflowError: cannot convert float to integer");
          return Value(static_cast<int64_t>(*f));
        }
      }
      return dflt;
    };
    t["float"] = [](Evaluator&, const Value& v, CallArgs& a) {
      const Value dflt = a.get(0, "default", Value(0.0));
      a.finish("float", 1);
      if (v.is_undefined()) undefined_error(v);
      if (v.is_number()) return Value(v.as_double());
      if (v.is_string()) {
        if (auto f = parse_float(v.as_string())) return Value(*f);
      }
      return dflt;
    };
    t["abs"] = [](Evaluator&, const Value& v, CallArgs& a) {
      a.finish("abs", 0);
      if (v.is_undefined()) undefined_error(v);
      if (v.is_float()) return Value(std::fabs(v.as_double()));
      if (v.is_integer()) {
        if (v.as_int() == INT64_MIN) throw_error("template error: integer overflow");
        return Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
      }
      throw_error("TypeError: bad operand type for abs(): '{}'", v.type_name());
    };
    t["round"] = [](Evaluator&, const Value& v, CallArgs& a) {
      const Value precision = a.get(0, "precision", Value(int64_t{0}));
      const std::string method = to_str(a.get(1, "method", Value("common")));
      a.finish("round", 2);
      if (v.is_undefined()) undefined_error(v);
      if (!v.is_number()) throw_error("TypeError: type {} doesn't define __round__ method", v.type_name());
      if (!precision.is_integer()) throw_error("TypeError: round precision must be an integer");
      const int64_t p = precision.as_int();
      if (method == "common") {
        if (v.is_integer()) return Value(v.as_int());  // round(int, n) stays an int (n >= 0)
        return Value(python_round(v.as_double(), p));
      }
      if (method != "ceil" && method != "floor") {
        throw_error("FilterArgumentError: method must be common, ceil or floor");
      }
      const double scale = std::pow(10.0, static_cast<double>(p));
      const double x = v.as_double() * scale;
      return Value((method == "ceil" ? std::ceil(x) : std::floor(x)) / scale);
    };
    t["sum"] = [](Evaluator& ev, const Value& v, CallArgs& a) {
      const Value attribute = a.get(0, "attribute", Value::none());
      Value total = a.get(1, "start", Value(int64_t{0}));
      a.finish("sum", 2);
      const auto items = iterate(v);
      ev.step(items.size());
      for (const auto& item : items) {
        total = binary_op(ev, "+", total, attribute.is_none() ? item : attribute_path(ev, item, to_str(attribute)));
      }
      return total;
    };
    t["batch"] = [](Evaluator& ev, const Value& v, CallArgs& a) {
      const Value count = a.get(0, "linecount");
      const Value fill = a.get(1, "fill_with", Value::none());
      a.finish("batch", 2);
      if (!count.is_integer() || count.as_int() <= 0) throw_error("template error: batch size must be positive");
      const auto n = static_cast<size_t>(count.as_int());
      const auto items = iterate(v);
      ev.step(items.size());
      std::vector<Value> out;
      std::vector<Value> cur;
      for (const auto& item : items) {
        cur.push_back(item);
        if (cur.size() == n) {
          out.push_back(Value::list(std::move(cur)));
          cur.clear();
        }
      }
      if (!cur.empty()) {
        if (!fill.is_none()) {
          while (cur.size() < n) cur.push_back(fill);
        }
        out.push_back(Value::list(std::move(cur)));
      }
      return generator(std::move(out));
    };
    t["center"] = [](Evaluator& ev, const Value& v, CallArgs& a) {
      CallArgs m;
      m.positional.push_back(a.get(0, "width", Value(int64_t{80})));
      a.finish("center", 1);
      return call_method(ev, Value(to_str(v)), "center", m);
    };
    t["wordcount"] = [](Evaluator&, const Value& v, CallArgs& a) {
      a.finish("wordcount", 0);
      int64_t n = 0;
      bool in_word = false;
      for (char32_t c : unicode::decode(to_str(v))) {
        const bool w = unicode::is_alpha(c) || unicode::is_digit(c) || c == '_';
        if (w && !in_word) ++n;
        in_word = w;
      }
      return Value(n);
    };
    t["truncate"] = [](Evaluator&, const Value& v, CallArgs& a) {
      const Value length = a.get(0, "length", Value(int64_t{255}));
      const bool killwords = a.get(1, "killwords", Value(false)).truthy();
      const std::string end = to_str(a.get(2, "end", Value("...")));
      const Value leeway_v = a.get(3, "leeway", Value(int64_t{5}));
      a.finish("truncate", 4);
      if (!length.is_integer() || !leeway_v.is_integer()) throw_error("TypeError: truncate needs integer lengths");
      const std::u32string s = unicode::decode(to_str(v));
      const std::u32string e = unicode::decode(end);
      const int64_t len = length.as_int();
      if (len < static_cast<int64_t>(e.size())) throw_error("AssertionError: expected length >= {}, got {}", e.size(), len);
      if (static_cast<int64_t>(s.size()) <= len + leeway_v.as_int()) return Value(unicode::encode(s));
      std::u32string head = s.substr(0, static_cast<size_t>(len) - e.size());
      if (!killwords) {
        const size_t sp = head.rfind(U' ');
        if (sp != std::u32string::npos) head = head.substr(0, sp);
      }
      return Value(unicode::encode(head + e));
    };
    t["attr"] = [](Evaluator& ev, const Value& v, CallArgs& a) {
      const std::string name = to_str(a.get(0, "name"));
      a.finish("attr", 1);
      if (v.is_dict()) {  // attribute only, no item fallback
        if (method_kind(v, name) == MethodKind::Safe) return ev.get_attr(v, name);
        return Value::undefined(fmt::format("'dict object' has no attribute '{}'", name));
      }
      return ev.get_attr(v, name);
    };
    return t;
  }();
  return table;
}

}  // namespace

bool has_filter(const std::string& name) { return filter_table().count(name) > 0; }

Value apply_filter(Evaluator& ev, const std::string& name, const Value& input, CallArgs& args) {
  const auto& t = filter_table();
  const auto it = t.find(name);
  if (it == t.end()) throw_error("TemplateRuntimeError: No filter named '{}'", name);
  ev.step();
  return it->second(ev, input, args);
}

}  // namespace vellum::jinja
