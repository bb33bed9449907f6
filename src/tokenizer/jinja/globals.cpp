// Global functions: range, namespace, dict, joiner, and the two Hugging Face adds:
// raise_exception(msg) and strftime_now(format).

#include <ctime>
#include <unordered_map>

#include "core/error.h"
#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/objects.h"

namespace vellum::jinja {

namespace {

Value builtin(const char* name, BuiltinFunction::Fn fn) {
  return Value(ObjectPtr(std::make_shared<BuiltinFunction>(name, std::move(fn))));
}

Value fn_range(Evaluator& ev, CallArgs& a) {
  if (!a.kwargs.empty()) throw_error("TypeError: range() takes no keyword arguments");
  if (a.positional.empty() || a.positional.size() > 3) throw_error("TypeError: range expected 1 to 3 arguments");
  for (const auto& v : a.positional) {
    if (v.is_undefined()) undefined_error(v);
    if (!v.is_integer()) throw_error("TypeError: '{}' object cannot be interpreted as an integer", v.type_name());
  }
  int64_t start = 0, stop = 0, step = 1;
  if (a.positional.size() == 1) {
    stop = a.positional[0].as_int();
  } else {
    start = a.positional[0].as_int();
    stop = a.positional[1].as_int();
    if (a.positional.size() == 3) step = a.positional[2].as_int();
  }
  if (step == 0) throw_error("ValueError: range() arg 3 must not be zero");
  __int128 count = 0;
  if (step > 0 && stop > start) count = (static_cast<__int128>(stop) - start + step - 1) / step;
  if (step < 0 && stop < start) count = (static_cast<__int128>(start) - stop - step - 1) / -step;
  if (count > static_cast<__int128>(ev.options().limits.max_steps)) {
    throw_error("template error: range() of {} items exceeds the evaluation limit", static_cast<int64_t>(count));
  }
  ev.step(static_cast<uint64_t>(count));
  std::vector<Value> out;
  out.reserve(static_cast<size_t>(count));
  int64_t v = start;
  for (__int128 i = 0; i < count; ++i, v += step) out.emplace_back(v);
  return Value::list(std::move(out));
}

Value fn_namespace(Evaluator& ev, CallArgs& a) {
  auto ns = std::make_shared<Namespace>();
  for (const auto& p : a.positional) {
    if (!p.is_dict()) throw_error("TypeError: namespace() positional arguments must be mappings");
    for (const auto& [k, v] : p.as_dict().items()) ns->attrs.set(k, v);
  }
  for (const auto& [k, v] : a.kwargs) ns->attrs.set(Value(k), v);
  ev.track([ns] { ns->attrs = Dict(); });
  return Value(ObjectPtr(ns));
}

Value fn_dict(Evaluator&, CallArgs& a) {
  Dict d;
  if (a.positional.size() > 1) throw_error("TypeError: dict expected at most 1 argument");
  if (!a.positional.empty()) {
    const Value& p = a.positional[0];
    if (p.is_dict()) {
      d = p.as_dict();
    } else {
      for (const auto& item : iterate(p)) {
        if (!item.is_list() || item.as_list().items.size() != 2) {
          throw_error("ValueError: dictionary update sequence element has wrong length");
        }
        d.set(item.as_list().items[0], item.as_list().items[1]);
      }
    }
  }
  for (const auto& [k, v] : a.kwargs) d.set(Value(k), v);
  return Value::dict(std::move(d));
}

Value fn_raise_exception(Evaluator&, CallArgs& a) {
  const Value msg = a.get(0, "message", Value(""));
  throw TemplateRaised(to_str(msg));
}

Value fn_strftime_now(Evaluator& ev, CallArgs& a) {
  const Value f = a.get(0, "format");
  a.finish("strftime_now", 1);
  if (!f.is_string()) throw_error("TypeError: strftime_now() argument must be str");
  std::tm tm{};
  if (ev.options().now) {
    const std::time_t t = *ev.options().now;
    gmtime_r(&t, &tm);
  } else {
    const std::time_t t = std::time(nullptr);
    localtime_r(&t, &tm);
  }
  if (f.as_string().empty()) return Value("");
  std::string buf(256 + f.as_string().size() * 8, '\0');
  const size_t n = std::strftime(buf.data(), buf.size(), f.as_string().c_str(), &tm);
  buf.resize(n);
  return Value(buf);
}

Value fn_joiner(Evaluator&, CallArgs& a) {
  const std::string sep = to_str(a.get(0, "sep", Value(", ")));
  a.finish("joiner", 1);
  auto used = std::make_shared<bool>(false);
  return builtin("joiner", [sep, used](Evaluator&, CallArgs&) {
    if (!*used) {
      *used = true;
      return Value("");
    }
    return Value(sep);
  });
}

}  // namespace

Value lookup_global(const std::string& name) {
  static const std::unordered_map<std::string, Value> globals = [] {
    std::unordered_map<std::string, Value> g;
    g["range"] = builtin("range", fn_range);
    g["namespace"] = builtin("namespace", fn_namespace);
    g["dict"] = builtin("dict", fn_dict);
    g["raise_exception"] = builtin("raise_exception", fn_raise_exception);
    g["strftime_now"] = builtin("strftime_now", fn_strftime_now);
    g["joiner"] = builtin("joiner", fn_joiner);
    return g;
  }();
  const auto it = globals.find(name);
  return it == globals.end() ? Value() : it->second;
}

}  // namespace vellum::jinja
