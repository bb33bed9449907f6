// Python's printf-style `str % args`: %s %r %a %d %i %u %f %F %e %E %g %G %x %X %o %c %%, with
// %(name)s keys, flags, width and precision.

#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/unicode.h"

namespace vellum::jinja {

namespace {

std::string pad(std::string body, const std::string& flags, int width, bool numeric) {
  const auto len = static_cast<int>(unicode::length(body));
  if (width <= len) return body;
  const auto n = static_cast<size_t>(width - len);
  if (flags.find('-') != std::string::npos) return body + std::string(n, ' ');
  if (numeric && flags.find('0') != std::string::npos) {
    size_t sign = (!body.empty() && (body[0] == '-' || body[0] == '+' || body[0] == ' ')) ? 1 : 0;
    return body.substr(0, sign) + std::string(n, '0') + body.substr(sign);
  }
  return std::string(n, ' ') + body;
}

std::string format_one(Evaluator& ev, char type, const std::string& flags, int width, int precision, const Value& v) {
  switch (type) {
    case 's':
    case 'r':
    case 'a': {
      std::string s = type == 's' ? to_str(v) : v.repr();
      if (precision >= 0) {
        std::u32string u = unicode::decode(s);
        if (u.size() > static_cast<size_t>(precision)) s = unicode::encode(u.substr(0, static_cast<size_t>(precision)));
      }
      return pad(std::move(s), flags, width, false);
    }
    case 'c': {
      if (v.is_string() && unicode::length(v.as_string()) == 1) return pad(v.as_string(), flags, width, false);
      if (!v.is_integer() || v.as_int() < 0 || v.as_int() > 0x10FFFF) throw_error("TypeError: %c requires an int or a char");
      std::string s;
      unicode::append_utf8(s, static_cast<char32_t>(v.as_int()));
      return pad(std::move(s), flags, width, false);
    }
    default:
      break;
  }
  if (v.is_undefined()) undefined_error(v);
  if (!v.is_number()) throw_error("TypeError: %{} format: a real number is required, not {}", type, v.type_name());
  std::string cflags;
  for (char f : flags) {
    if (f == '+' || f == ' ' || f == '#') cflags.push_back(f);
  }
  char buf[512];
  if (type == 'd' || type == 'i' || type == 'u' || type == 'x' || type == 'X' || type == 'o') {
    int64_t i = 0;
    if (v.is_float()) {
      const double d = v.as_double();
      if (type != 'd' && type != 'i' && type != 'u') throw_error("TypeError: %{} format: an integer is required", type);
      if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) throw_error("OverflowError: cannot convert float to integer");
      i = static_cast<int64_t>(d);
    } else {
      i = v.as_int();
    }
    const char conv = (type == 'i' || type == 'u') ? 'd' : type;
    const std::string f = "%" + cflags + "ll" + std::string(1, conv);
    if (conv == 'd') {
      std::snprintf(buf, sizeof(buf), f.c_str(), static_cast<long long>(i));
    } else {
      // Python prints negative hex/octal as -0x…, not two's complement.
      const std::string body_fmt = "%" + std::string(cflags.find('#') != std::string::npos ? "#" : "") + "ll" +
                                   std::string(1, conv);
      const unsigned long long mag = i < 0 ? 0ull - static_cast<unsigned long long>(i) : static_cast<unsigned long long>(i);
      std::snprintf(buf, sizeof(buf), body_fmt.c_str(), mag);
      std::string body = buf;
      if (conv == 'o' && cflags.find('#') != std::string::npos && body.size() > 1) body = "0o" + body.substr(1);
      std::string sign = i < 0 ? "-" : cflags.find('+') != std::string::npos ? "+" : cflags.find(' ') != std::string::npos ? " " : "";
      return pad(sign + body, flags, width, true);
    }
    return pad(buf, flags, width, true);
  }
  if (type == 'f' || type == 'F' || type == 'e' || type == 'E' || type == 'g' || type == 'G') {
    const std::string f = "%" + cflags + "." + std::to_string(precision < 0 ? 6 : std::min(precision, 300)) + type;
    std::snprintf(buf, sizeof(buf), f.c_str(), v.as_double());
    std::string s = buf;
    if (s == "nan" || s == "-nan") s = "nan";
    (void)ev;
    return pad(s, flags, width, true);
  }
  throw_error("ValueError: unsupported format character '{}'", type);
}

}  // namespace

std::string python_percent_format(Evaluator& ev, const std::string& fmt, const Value& args) {
  std::vector<Value> positional;
  const Value* mapping = nullptr;
  if (args.is_tuple()) {
    positional = args.as_list().items;
  } else {
    positional.push_back(args);
    // CPython treats any non-tuple, non-str object with __getitem__ as a possible mapping.
    if (args.is_dict() || (args.is_list() && !args.is_generator()) || args.is_undefined()) mapping = &args;
  }
  size_t next = 0;
  std::string out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out.push_back(fmt[i]);
      continue;
    }
    if (++i >= fmt.size()) throw_error("ValueError: incomplete format");
    const Value* value = nullptr;
    Value keyed;
    if (fmt[i] == '(') {
      const size_t close = fmt.find(')', i);
      if (close == std::string::npos) throw_error("ValueError: incomplete format key");
      if (!mapping || !mapping->is_dict()) throw_error("TypeError: format requires a mapping");
      const Value* found = mapping->as_dict().find(fmt.substr(i + 1, close - i - 1));
      if (!found) throw_error("KeyError: '{}'", fmt.substr(i + 1, close - i - 1));
      keyed = *found;
      value = &keyed;
      i = close + 1;
    }
    std::string flags;
    while (i < fmt.size() && std::string("-+ #0").find(fmt[i]) != std::string::npos) flags.push_back(fmt[i++]);
    auto number = [&](int& target) {
      if (i < fmt.size() && fmt[i] == '*') {
        if (next >= positional.size() || !positional[next].is_integer()) throw_error("TypeError: * wants int");
        target = static_cast<int>(std::clamp<int64_t>(positional[next++].as_int(), -100000, 100000));
        ++i;
        return;
      }
      int64_t n = -1;
      while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9') {
        n = (n < 0 ? 0 : n) * 10 + (fmt[i++] - '0');
        if (n > 100000) throw_error("ValueError: width too big");
      }
      target = static_cast<int>(n);
    };
    int width = -1, precision = -1;
    number(width);
    if (i < fmt.size() && fmt[i] == '.') {
      ++i;
      precision = 0;
      number(precision);
      if (precision < 0) precision = 0;
    }
    while (i < fmt.size() && (fmt[i] == 'l' || fmt[i] == 'h' || fmt[i] == 'L')) ++i;
    if (i >= fmt.size()) throw_error("ValueError: incomplete format");
    const char type = fmt[i];
    if (type == '%') {
      out.push_back('%');
      continue;
    }
    if (!value) {
      if (next >= positional.size()) throw_error("TypeError: not enough arguments for format string");
      value = &positional[next++];
    }
    out += format_one(ev, type, flags, width, precision, *value);
    ev.check_string_size(out.size());
  }
  if (next < positional.size() && !mapping) throw_error("TypeError: not all arguments converted during string formatting");
  return out;
}

}  // namespace vellum::jinja
