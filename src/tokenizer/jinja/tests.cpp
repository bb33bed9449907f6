// jinja2 3.1's builtin tests (`x is defined`, `x is divisibleby 3`, …).

#include <functional>
#include <unordered_map>

#include "core/error.h"
#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/objects.h"
#include "tokenizer/jinja/unicode.h"

namespace vellum::jinja {

namespace {

using TestFn = std::function<bool(Evaluator&, const Value&, CallArgs&)>;

Value one_arg(CallArgs& a, const char* test, const char* name) {
  if (!a.has(0, name)) throw_error("TypeError: test '{}' needs an argument", test);
  Value v = a.get(0, name);
  a.finish(std::string("test ") + test, 1);
  return v;
}

bool ordered(const Value& a, const Value& b, const char* op) {
  if (a.is_undefined()) undefined_error(a);
  if (b.is_undefined()) undefined_error(b);
  const int c = a.compare(b);
  const std::string o = op;
  return o == "<" ? c < 0 : o == "<=" ? c <= 0 : o == ">" ? c > 0 : c >= 0;
}

const std::unordered_map<std::string, TestFn>& test_table() {
  static const std::unordered_map<std::string, TestFn> table = [] {
    std::unordered_map<std::string, TestFn> t;
    auto no_args = [](const char* name, std::function<bool(const Value&)> f) {
      return [name, f](Evaluator&, const Value& v, CallArgs& a) {
        a.finish(std::string("test ") + name, 0);
        return f(v);
      };
    };
    t["defined"] = no_args("defined", [](const Value& v) { return !v.is_undefined(); });
    t["undefined"] = no_args("undefined", [](const Value& v) { return v.is_undefined(); });
    t["none"] = no_args("none", [](const Value& v) { return v.is_none(); });
    t["boolean"] = no_args("boolean", [](const Value& v) { return v.is_bool(); });
    t["true"] = no_args("true", [](const Value& v) { return v.is_bool() && v.as_bool(); });
    t["false"] = no_args("false", [](const Value& v) { return v.is_bool() && !v.as_bool(); });
    t["string"] = no_args("string", [](const Value& v) { return v.is_string(); });
    t["number"] = no_args("number", [](const Value& v) { return v.is_number(); });
    t["integer"] = no_args("integer", [](const Value& v) { return v.is_int(); });
    t["float"] = no_args("float", [](const Value& v) { return v.is_float(); });
    t["mapping"] = no_args("mapping", [](const Value& v) { return v.is_dict(); });
    t["sequence"] = no_args("sequence", [](const Value& v) {
      return v.is_string() || v.is_dict() || (v.is_list() && !v.is_generator()) || v.is_undefined();
    });
    t["iterable"] = no_args("iterable", [](const Value& v) {
      return v.is_string() || v.is_dict() || v.is_list() || v.is_undefined();
    });
    t["callable"] = no_args("callable", [](const Value& v) { return v.is_object() && v.as_object()->callable(); });
    t["escaped"] = no_args("escaped", [](const Value&) { return false; });
    t["lower"] = no_args("lower", [](const Value& v) {
      const std::string s = to_str(v);
      return unicode::lower(s) == s && unicode::upper(s) != s;
    });
    t["upper"] = no_args("upper", [](const Value& v) {
      const std::string s = to_str(v);
      return unicode::upper(s) == s && unicode::lower(s) != s;
    });
    // jinja2: value % 2 == 1, value % 2 == 0, value % num == 0, with Python's % (floats too).
    t["odd"] = [](Evaluator& ev, const Value& v, CallArgs& a) {
      a.finish("test odd", 0);
      return binary_op(ev, "%", v, Value(int64_t{2})).equals(Value(int64_t{1}));
    };
    t["even"] = [](Evaluator& ev, const Value& v, CallArgs& a) {
      a.finish("test even", 0);
      return binary_op(ev, "%", v, Value(int64_t{2})).equals(Value(int64_t{0}));
    };
    t["divisibleby"] = [](Evaluator& ev, const Value& v, CallArgs& a) {
      const Value n = one_arg(a, "divisibleby", "num");
      return binary_op(ev, "%", v, n).equals(Value(int64_t{0}));
    };
    t["eq"] = [](Evaluator&, const Value& v, CallArgs& a) { return v.equals(one_arg(a, "eq", "other")); };
    t["equalto"] = t["eq"];
    t["=="] = t["eq"];
    t["ne"] = [](Evaluator&, const Value& v, CallArgs& a) { return !v.equals(one_arg(a, "ne", "other")); };
    t["!="] = t["ne"];
    t["lt"] = [](Evaluator&, const Value& v, CallArgs& a) { return ordered(v, one_arg(a, "lt", "other"), "<"); };
    t["lessthan"] = t["lt"];
    t["<"] = t["lt"];
    t["le"] = [](Evaluator&, const Value& v, CallArgs& a) { return ordered(v, one_arg(a, "le", "other"), "<="); };
    t["<="] = t["le"];
    t["gt"] = [](Evaluator&, const Value& v, CallArgs& a) { return ordered(v, one_arg(a, "gt", "other"), ">"); };
    t["greaterthan"] = t["gt"];
    t[">"] = t["gt"];
    t["ge"] = [](Evaluator&, const Value& v, CallArgs& a) { return ordered(v, one_arg(a, "ge", "other"), ">="); };
    t[">="] = t["ge"];
    t["in"] = [](Evaluator&, const Value& v, CallArgs& a) { return contains(one_arg(a, "in", "seq"), v); };
    t["sameas"] = [](Evaluator&, const Value& v, CallArgs& a) {
      const Value other = one_arg(a, "sameas", "other");
      if (v.kind() != other.kind()) return false;
      if (v.is_list()) return v.list_ptr() == other.list_ptr();
      if (v.is_object()) return v.as_object() == other.as_object();
      if (v.is_dict()) return &v.as_dict() == &other.as_dict();
      return v.equals(other);
    };
    t["filter"] = [](Evaluator&, const Value& v, CallArgs& a) {
      a.finish("test filter", 0);
      return v.is_string() && has_filter(v.as_string());
    };
    t["test"] = [](Evaluator&, const Value& v, CallArgs& a) {
      a.finish("test test", 0);
      return v.is_string() && has_test(v.as_string());
    };
    return t;
  }();
  return table;
}

}  // namespace

bool has_test(const std::string& name) { return test_table().count(name) > 0; }

bool apply_test(Evaluator& ev, const std::string& name, const Value& input, CallArgs& args) {
  const auto& t = test_table();
  const auto it = t.find(name);
  if (it == t.end()) throw_error("TemplateRuntimeError: No test named '{}' found.", name);
  ev.step();
  return it->second(ev, input, args);
}

}  // namespace vellum::jinja
