// Methods of Python's str, dict and list that templates call: "x".startswith(…), d.get(…), d.items().

#include <algorithm>
#include <unordered_set>

#include "core/error.h"
#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/unicode.h"

namespace vellum::jinja {

namespace {

const std::unordered_set<std::string>& str_methods() {
  static const std::unordered_set<std::string> s = {
      "startswith", "endswith", "split",   "rsplit",  "strip",      "lstrip",       "rstrip",       "replace",
      "upper",      "lower",    "title",   "capitalize", "find",    "rfind",        "index",        "rindex",
      "count",      "format",   "join",    "isdigit", "isalpha",    "isalnum",      "isspace",      "islower",
      "isupper",    "splitlines", "removeprefix", "removesuffix", "swapcase", "zfill", "center", "ljust", "rjust",
      "partition",  "rpartition", "casefold", "isnumeric", "isdecimal", "istitle", "expandtabs"};
  return s;
}
const std::unordered_set<std::string>& dict_methods() {
  static const std::unordered_set<std::string> s = {"get", "items", "keys", "values", "copy"};
  return s;
}
const std::unordered_set<std::string>& dict_unsafe() {
  static const std::unordered_set<std::string> s = {"pop", "popitem", "update", "clear", "setdefault", "fromkeys"};
  return s;
}
const std::unordered_set<std::string>& list_methods() {
  static const std::unordered_set<std::string> s = {"index", "count", "copy"};
  return s;
}
const std::unordered_set<std::string>& list_unsafe() {
  static const std::unordered_set<std::string> s = {"append", "pop",  "insert", "extend",
                                                    "remove", "sort", "reverse", "clear"};
  return s;
}

std::u32string strip_set(const Value& chars) {
  if (chars.is_none() || chars.is_undefined()) return {};
  if (!chars.is_string()) throw_error("TypeError: strip arg must be None or str");
  return unicode::decode(chars.as_string());
}

std::string do_strip(const std::string& s, const Value& chars, bool left, bool right) {
  const bool ws = chars.is_none() || chars.is_undefined();
  const std::u32string set = strip_set(chars);
  auto strip_it = [&](char32_t c) { return ws ? unicode::is_space(c) : set.find(c) != std::u32string::npos; };
  const std::u32string u = unicode::decode(s);
  size_t b = 0, e = u.size();
  if (left) {
    while (b < e && strip_it(u[b])) ++b;
  }
  if (right) {
    while (e > b && strip_it(u[e - 1])) --e;
  }
  return unicode::encode(std::u32string_view(u).substr(b, e - b));
}

std::vector<Value> split_ws(const std::string& s, int64_t maxsplit, bool from_right) {
  const std::u32string u = unicode::decode(s);
  std::vector<std::pair<size_t, size_t>> words;  // [begin, end)
  if (!from_right) {
    size_t i = 0;
    while (i < u.size()) {
      while (i < u.size() && unicode::is_space(u[i])) ++i;
      if (i >= u.size()) break;
      if (maxsplit >= 0 && static_cast<int64_t>(words.size()) == maxsplit) {
        words.emplace_back(i, u.size());  // the rest, trailing whitespace included
        break;
      }
      size_t j = i;
      while (j < u.size() && !unicode::is_space(u[j])) ++j;
      words.emplace_back(i, j);
      i = j;
    }
  } else {
    size_t i = u.size();
    while (i > 0) {
      while (i > 0 && unicode::is_space(u[i - 1])) --i;
      if (i == 0) break;
      if (maxsplit >= 0 && static_cast<int64_t>(words.size()) == maxsplit) {
        words.emplace_back(0, i);  // the rest, leading whitespace included
        break;
      }
      size_t j = i;
      while (j > 0 && !unicode::is_space(u[j - 1])) --j;
      words.emplace_back(j, i);
      i = j;
    }
    std::reverse(words.begin(), words.end());
  }
  std::vector<Value> out;
  for (const auto& [b, e] : words) out.emplace_back(unicode::encode(std::u32string_view(u).substr(b, e - b)));
  return out;
}

std::vector<Value> split_sep(const std::string& s, const std::string& sep, int64_t maxsplit, bool from_right) {
  if (sep.empty()) throw_error("ValueError: empty separator");
  std::vector<Value> out;
  if (!from_right) {
    size_t pos = 0;
    while (true) {
      if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) break;
      const size_t f = s.find(sep, pos);
      if (f == std::string::npos) break;
      out.emplace_back(s.substr(pos, f - pos));
      pos = f + sep.size();
    }
    out.emplace_back(s.substr(pos));
    return out;
  }
  size_t end = s.size();
  std::vector<Value> rev;
  while (true) {
    if (maxsplit >= 0 && static_cast<int64_t>(rev.size()) == maxsplit) break;
    if (end < sep.size()) break;
    const size_t f = s.rfind(sep, end - sep.size());
    if (f == std::string::npos) break;
    rev.emplace_back(s.substr(f + sep.size(), end - f - sep.size()));
    end = f;
  }
  rev.emplace_back(s.substr(0, end));
  std::reverse(rev.begin(), rev.end());
  return rev;
}

bool affix_match(const std::string& s, const Value& affix, bool prefix) {
  auto one = [&](const Value& a) {
    if (!a.is_string()) {
      throw_error("TypeError: {} first arg must be str or a tuple of str, not {}",
                  prefix ? "startswith" : "endswith", a.type_name());
    }
    const std::string& x = a.as_string();
    if (x.size() > s.size()) return false;
    return prefix ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0;
  };
  if (affix.is_tuple()) {
    for (const auto& a : affix.as_list().items) {
      if (one(a)) return true;
    }
    return false;
  }
  return one(affix);
}

// str.format: {} {0} {name} {0.attr} {0[key]} with !s/!r conversions; format specs beyond
// alignment/width are refused.
std::string do_format(Evaluator& ev, const std::string& fmt_str, CallArgs& args) {
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < fmt_str.size(); ++i) {
    const char c = fmt_str[i];
    if (c == '}') {
      if (i + 1 < fmt_str.size() && fmt_str[i + 1] == '}') {
        out.push_back('}');
        ++i;
        continue;
      }
      throw_error("ValueError: Single '}}' encountered in format string");
    }
    if (c != '{') {
      out.push_back(c);
      continue;
    }
    if (i + 1 < fmt_str.size() && fmt_str[i + 1] == '{') {
      out.push_back('{');
      ++i;
      continue;
    }
    const size_t close = fmt_str.find('}', i);
    if (close == std::string::npos) throw_error("ValueError: Single '{{' encountered in format string");
    std::string field = fmt_str.substr(i + 1, close - i - 1);
    i = close;
    std::string spec, conv;
    if (const size_t colon = field.find(':'); colon != std::string::npos) {
      spec = field.substr(colon + 1);
      field = field.substr(0, colon);
    }
    if (const size_t bang = field.find('!'); bang != std::string::npos) {
      conv = field.substr(bang + 1);
      field = field.substr(0, bang);
    }
    size_t name_end = 0;
    while (name_end < field.size() && field[name_end] != '.' && field[name_end] != '[') ++name_end;
    const std::string name = field.substr(0, name_end);
    Value v;
    if (name.empty()) {
      if (auto_index >= args.positional.size()) throw_error("IndexError: Replacement index {} out of range", auto_index);
      v = args.positional[auto_index++];
    } else if (std::all_of(name.begin(), name.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
      const size_t idx = std::stoul(name.substr(0, 9));
      if (idx >= args.positional.size()) throw_error("IndexError: Replacement index {} out of range", idx);
      v = args.positional[idx];
    } else {
      bool found = false;
      for (const auto& [k, val] : args.kwargs) {
        if (k == name) {
          v = val;
          found = true;
        }
      }
      if (!found) throw_error("KeyError: '{}'", name);
    }
    size_t p = name_end;
    while (p < field.size()) {
      if (field[p] == '.') {
        size_t e = p + 1;
        while (e < field.size() && field[e] != '.' && field[e] != '[') ++e;
        v = ev.get_attr(v, field.substr(p + 1, e - p - 1));
        p = e;
      } else {
        const size_t e = field.find(']', p);
        if (e == std::string::npos) throw_error("ValueError: Missing ']' in format string");
        const std::string key = field.substr(p + 1, e - p - 1);
        const bool numeric = !key.empty() && std::all_of(key.begin(), key.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
        v = ev.get_item(v, numeric ? Value(static_cast<int64_t>(std::stoll(key.substr(0, 18)))) : Value(key));
        p = e + 1;
      }
    }
    std::string text = conv == "r" ? v.repr() : to_str(v);
    if (!spec.empty()) {
      // [[fill]align][width]
      char fill = ' ', align = v.is_number() ? '>' : '<';
      size_t k = 0;
      if (spec.size() >= 2 && (spec[1] == '<' || spec[1] == '>' || spec[1] == '^')) {
        fill = spec[0];
        align = spec[1];
        k = 2;
      } else if (spec[0] == '<' || spec[0] == '>' || spec[0] == '^') {
        align = spec[0];
        k = 1;
      }
      const std::string width_str = spec.substr(k);
      if (width_str.empty() || width_str.size() > 6 ||
          !std::all_of(width_str.begin(), width_str.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
        throw_error("template error: unsupported format spec '{}'", spec);
      }
      const size_t width = std::stoul(width_str);
      const size_t len = unicode::length(text);
      if (len < width) {
        const size_t pad = width - len;
        if (align == '<') {
          text += std::string(pad, fill);
        } else if (align == '>') {
          text = std::string(pad, fill) + text;
        } else {
          text = std::string(pad / 2, fill) + text + std::string(pad - pad / 2, fill);
        }
      }
    }
    out += text;
    ev.check_string_size(out.size());
  }
  return out;
}

Value str_method(Evaluator& ev, const std::string& s, const std::string& name, CallArgs& args) {
  auto done = [&](size_t n) { args.finish("str." + name, n); };
  if (name == "startswith" || name == "endswith") {
    const Value affix = args.get(0, "prefix");
    done(1);
    if (affix.is_undefined()) throw_error("TypeError: {}() takes at least 1 argument", name);
    return Value(affix_match(s, affix, name == "startswith"));
  }
  if (name == "split" || name == "rsplit") {
    const Value sep = args.get(0, "sep", Value::none());
    const Value maxsplit = args.get(1, "maxsplit", Value(int64_t{-1}));
    done(2);
    if (!maxsplit.is_integer()) throw_error("TypeError: maxsplit must be an integer");
    std::vector<Value> parts = sep.is_none() ? split_ws(s, maxsplit.as_int(), name == "rsplit")
                                             : split_sep(s, to_str(sep), maxsplit.as_int(), name == "rsplit");
    ev.step(parts.size());
    return Value::list(std::move(parts));
  }
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    const Value chars = args.get(0, "chars", Value::none());
    done(1);
    return Value(do_strip(s, chars, name != "rstrip", name != "lstrip"));
  }
  if (name == "upper") return done(0), Value(unicode::upper(s));
  if (name == "lower" || name == "casefold") return done(0), Value(unicode::lower(s));
  if (name == "title") return done(0), Value(unicode::title(s));
  if (name == "capitalize") return done(0), Value(unicode::capitalize(s));
  if (name == "swapcase") {
    done(0);
    std::string out;
    for (char32_t c : unicode::decode(s)) {
      unicode::append_utf8(out, unicode::is_upper(c) ? unicode::to_lower(c) : unicode::to_upper(c));
    }
    return Value(out);
  }
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count") {
    const Value sub = args.get(0, "sub");
    done(1);
    if (!sub.is_string()) throw_error("TypeError: must be str, not {}", sub.type_name());
    const std::string& x = sub.as_string();
    if (name == "count") {
      if (x.empty()) return Value(static_cast<int64_t>(unicode::length(s) + 1));
      int64_t n = 0;
      for (size_t p = s.find(x); p != std::string::npos; p = s.find(x, p + x.size())) ++n;
      return Value(n);
    }
    const size_t p = (name == "find" || name == "index") ? s.find(x) : s.rfind(x);
    if (p == std::string::npos) {
      if (name == "index" || name == "rindex") throw_error("ValueError: substring not found");
      return Value(int64_t{-1});
    }
    return Value(static_cast<int64_t>(unicode::length(std::string_view(s).substr(0, p))));
  }
  if (name == "format") return Value(do_format(ev, s, args));
  if (name == "join") {
    const Value items = args.get(0, "iterable");
    done(1);
    std::string out;
    bool first = true;
    for (const auto& v : iterate(items)) {
      if (!v.is_string()) throw_error("TypeError: sequence item: expected str instance, {} found", v.type_name());
      if (!first) out += s;
      first = false;
      out += v.as_string();
      ev.check_string_size(out.size());
    }
    return Value(out);
  }
  if (name == "isdigit" || name == "isalpha" || name == "isalnum" || name == "isspace" || name == "isnumeric" ||
      name == "isdecimal" || name == "islower" || name == "isupper" || name == "istitle") {
    done(0);
    const std::u32string u = unicode::decode(s);
    if (u.empty()) return Value(false);
    if (name == "islower" || name == "isupper") {
      bool cased = false;
      for (char32_t c : u) {
        if (name == "islower" ? unicode::is_upper(c) : unicode::is_lower(c)) return Value(false);
        cased = cased || unicode::is_upper(c) || unicode::is_lower(c);
      }
      return Value(cased);
    }
    if (name == "istitle") return Value(unicode::title(s) == s && unicode::lower(s) != s);
    for (char32_t c : u) {
      bool ok = false;
      if (name == "isdigit" || name == "isnumeric" || name == "isdecimal") ok = unicode::is_digit(c);
      if (name == "isalpha") ok = unicode::is_alpha(c);
      if (name == "isalnum") ok = unicode::is_alpha(c) || unicode::is_digit(c);
      if (name == "isspace") ok = unicode::is_space(c);
      if (!ok) return Value(false);
    }
    return Value(true);
  }
  if (name == "splitlines") {
    const Value keep = args.get(0, "keepends", Value(false));
    done(1);
    std::vector<Value> lines;
    size_t start = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\n' || s[i] == '\r') {
        size_t e = i + 1;
        if (s[i] == '\r' && e < s.size() && s[e] == '\n') ++e;
        lines.emplace_back(s.substr(start, (keep.truthy() ? e : i) - start));
        start = e;
        i = e - 1;
      }
    }
    if (start < s.size()) lines.emplace_back(s.substr(start));
    return Value::list(std::move(lines));
  }
  if (name == "removeprefix" || name == "removesuffix") {
    const Value a = args.get(0, "affix");
    done(1);
    if (!a.is_string()) throw_error("TypeError: {}() argument must be str", name);
    const std::string& x = a.as_string();
    if (name == "removeprefix") return Value(s.compare(0, x.size(), x) == 0 ? s.substr(x.size()) : s);
    if (x.size() <= s.size() && s.compare(s.size() - x.size(), x.size(), x) == 0) {
      return Value(s.substr(0, s.size() - x.size()));
    }
    return Value(s);
  }
  if (name == "partition" || name == "rpartition") {
    const Value sep = args.get(0, "sep");
    done(1);
    if (!sep.is_string() || sep.as_string().empty()) throw_error("ValueError: empty separator");
    const size_t p = name == "partition" ? s.find(sep.as_string()) : s.rfind(sep.as_string());
    if (p == std::string::npos) {
      return name == "partition" ? Value::list({Value(s), Value(""), Value("")}, SeqKind::Tuple)
                                 : Value::list({Value(""), Value(""), Value(s)}, SeqKind::Tuple);
    }
    return Value::list({Value(s.substr(0, p)), sep, Value(s.substr(p + sep.as_string().size()))}, SeqKind::Tuple);
  }
  if (name == "zfill" || name == "center" || name == "ljust" || name == "rjust") {
    const Value w = args.get(0, "width");
    const Value fill_v = args.get(1, "fillchar", Value(" "));
    done(name == "zfill" ? 1 : 2);
    if (!w.is_integer()) throw_error("TypeError: width must be an integer");
    const int64_t width = w.as_int();
    ev.check_string_size(width < 0 ? 0 : static_cast<size_t>(width) * 4);
    const auto len = static_cast<int64_t>(unicode::length(s));
    if (width <= len) return Value(s);
    const auto pad = static_cast<size_t>(width - len);
    if (name == "zfill") {
      if (!s.empty() && (s[0] == '-' || s[0] == '+')) return Value(s.substr(0, 1) + std::string(pad, '0') + s.substr(1));
      return Value(std::string(pad, '0') + s);
    }
    std::string fill = to_str(fill_v);
    auto rep = [&](size_t n) {
      std::string r;
      for (size_t i = 0; i < n; ++i) r += fill;
      return r;
    };
    if (name == "ljust") return Value(s + rep(pad));
    if (name == "rjust") return Value(rep(pad) + s);
    const size_t left = pad / 2 + (pad & static_cast<size_t>(width) & 1);
    return Value(rep(left) + s + rep(pad - left));
  }
  if (name == "expandtabs") {
    done(0);
    std::string out;
    size_t col = 0;
    for (char c : s) {
      if (c == '\t') {
        const size_t n = 8 - col % 8;
        out.append(n, ' ');
        col += n;
      } else {
        out.push_back(c);
        col = (c == '\n' || c == '\r') ? 0 : col + 1;
      }
    }
    return Value(out);
  }
  throw_error("template error: str has no method '{}'", name);
}

}  // namespace

MethodKind method_kind(const Value& self, const std::string& name) {
  if (self.is_string()) return str_methods().count(name) ? MethodKind::Safe : MethodKind::None;
  if (self.is_dict()) {
    if (dict_methods().count(name)) return MethodKind::Safe;
    return dict_unsafe().count(name) ? MethodKind::Unsafe : MethodKind::None;
  }
  if (self.is_list() && !self.is_generator()) {
    if (self.is_tuple()) return (name == "index" || name == "count") ? MethodKind::Safe : MethodKind::None;
    if (list_methods().count(name)) return MethodKind::Safe;
    return list_unsafe().count(name) ? MethodKind::Unsafe : MethodKind::None;
  }
  return MethodKind::None;
}

Value call_method(Evaluator& ev, const Value& self, const std::string& name, CallArgs& args) {
  if (self.is_string()) {
    if (name == "replace") {
      const Value old_v = args.get(0, "old");
      const Value new_v = args.get(1, "new");
      const Value count_v = args.get(2, "count", Value(int64_t{-1}));
      args.finish("str.replace", 3);
      if (!old_v.is_string() || !new_v.is_string()) throw_error("TypeError: replace() arguments must be str");
      if (!count_v.is_integer()) throw_error("TypeError: replace() count must be an integer");
      return Value(python_replace(ev, self.as_string(), old_v.as_string(), new_v.as_string(), count_v.as_int()));
    }
    return str_method(ev, self.as_string(), name, args);
  }
  if (self.is_dict()) {
    const Dict& d = self.as_dict();
    if (name == "get") {
      const Value key = args.get(0, "key");
      const Value fallback = args.get(1, "default", Value::none());
      args.finish("dict.get", 2);
      const Value* v = d.find(key);
      return v ? *v : fallback;
    }
    args.finish("dict." + name, 0);
    std::vector<Value> out;
    out.reserve(d.size());
    ev.step(d.size());
    if (name == "copy") return self;
    for (const auto& [k, v] : d.items()) {
      if (name == "items") {
        out.push_back(Value::list({k, v}, SeqKind::Tuple));
      } else if (name == "keys") {
        out.push_back(k);
      } else {
        out.push_back(v);
      }
    }
    return Value::list(std::move(out));
  }
  if (self.is_list()) {
    const auto& items = self.as_list().items;
    if (name == "copy") {
      args.finish("list.copy", 0);
      return Value::list(items);
    }
    const Value x = args.get(0, "value");
    args.finish(self.type_name() + "." + name, 1);
    if (name == "count") {
      int64_t n = 0;
      for (const auto& v : items) n += v.equals(x);
      return Value(n);
    }
    for (size_t i = 0; i < items.size(); ++i) {
      if (items[i].equals(x)) return Value(static_cast<int64_t>(i));
    }
    throw_error("ValueError: {} is not in list", x.repr());
  }
  throw_error("template error: '{}' object has no method '{}'", self.type_name(), name);
}

}  // namespace vellum::jinja
