// Expressions: names, literals, attribute/item access and slicing, calls, filters, tests,
// Python arithmetic and comparison.

#include <cmath>

#include "core/error.h"
#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/evaluator.h"
#include "tokenizer/jinja/objects.h"
#include "tokenizer/jinja/unicode.h"

namespace vellum::jinja {

void undefined_error(const Value& v) { throw_error("UndefinedError: {}", v.undefined_hint()); }

namespace {

int64_t add_checked(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw_error("template error: integer overflow");
  return r;
}
int64_t sub_checked(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) throw_error("template error: integer overflow");
  return r;
}
int64_t mul_checked(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw_error("template error: integer overflow");
  return r;
}

[[noreturn]] void type_error(const std::string& op, const Value& a, const Value& b) {
  throw_error("TypeError: unsupported operand type(s) for {}: '{}' and '{}'", op, a.type_name(), b.type_name());
}

Value repeat(Evaluator& ev, const Value& seq, int64_t n) {
  if (n <= 0) return seq.is_string() ? Value(std::string()) : Value::list({}, seq.as_list().kind);
  if (seq.is_string()) {
    const std::string& s = seq.as_string();
    if (!s.empty() && static_cast<uint64_t>(n) > ev.options().limits.max_output_bytes / s.size() + 1) {
      ev.check_string_size(SIZE_MAX);
    }
    ev.check_string_size(s.size() * static_cast<size_t>(n));
    std::string out;
    out.reserve(s.size() * static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) out += s;
    return Value(std::move(out));
  }
  const auto& items = seq.as_list().items;
  const uint64_t total = items.empty() ? 0 : static_cast<uint64_t>(n);
  if (total > 0 && total > ev.options().limits.max_steps / items.size() + 1) ev.step(UINT64_MAX / 2);
  ev.step(total * items.size());
  std::vector<Value> out;
  for (int64_t i = 0; i < n && !items.empty(); ++i) out.insert(out.end(), items.begin(), items.end());
  return Value::list(std::move(out), seq.as_list().kind);
}

bool is_seq(const Value& v) { return v.is_list() && !v.is_generator(); }

Value slice(Evaluator& ev, const Value& obj, const Value& start_v, const Value& stop_v, const Value& step_v) {
  auto as_index = [](const Value& v) -> std::optional<int64_t> {
    if (v.is_none() || v.is_undefined()) return std::nullopt;
    if (!v.is_integer()) throw_error("TypeError: slice indices must be integers or None");
    return v.as_int();
  };
  const auto step_o = as_index(step_v);
  const int64_t step = step_o.value_or(1);
  if (step == 0) throw_error("ValueError: slice step cannot be zero");
  std::u32string chars;
  const bool is_str = obj.is_string();
  if (is_str) chars = unicode::decode(obj.as_string());
  const int64_t len = is_str ? static_cast<int64_t>(chars.size()) : static_cast<int64_t>(obj.as_list().items.size());
  auto clamp = [&](std::optional<int64_t> o, int64_t dflt) {
    if (!o) return dflt;
    int64_t v = *o;
    if (v < 0) v += len;
    if (step > 0) return std::clamp<int64_t>(v, 0, len);
    return std::clamp<int64_t>(v, -1, len - 1);
  };
  const int64_t start = clamp(as_index(start_v), step > 0 ? 0 : len - 1);
  const int64_t stop = clamp(as_index(stop_v), step > 0 ? len : -1);
  std::vector<size_t> idx;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) idx.push_back(static_cast<size_t>(i));
  ev.step(idx.size());
  if (is_str) {
    std::u32string out;
    for (size_t i : idx) out.push_back(chars[i]);
    return Value(unicode::encode(out));
  }
  std::vector<Value> out;
  for (size_t i : idx) out.push_back(obj.as_list().items[i]);
  return Value::list(std::move(out), obj.as_list().kind == SeqKind::Tuple ? SeqKind::Tuple : SeqKind::List);
}

}  // namespace

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::Undefined:
      return false;
    case Value::Kind::String:
      if (!item.is_string()) {
        throw_error("TypeError: 'in <string>' requires string as left operand, not {}", item.type_name());
      }
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::List:
      for (const auto& v : container.as_list().items) {
        if (v.equals(item)) return true;
      }
      return false;
    case Value::Kind::Dict:
      if (item.is_list() && !item.is_tuple()) throw_error("TypeError: unhashable type: '{}'", item.type_name());
      if (item.is_dict()) throw_error("TypeError: unhashable type: 'dict'");
      return container.as_dict().find(item) != nullptr;
    default:
      throw_error("TypeError: argument of type '{}' is not iterable", container.type_name());
  }
}

Value binary_op(Evaluator& ev, const std::string& op, const Value& a, const Value& b) {
  if (op == "~") {
    std::string s = to_str(a);
    const std::string t = to_str(b);
    ev.check_string_size(s.size() + t.size());
    return Value(s + t);
  }
  if (op == "%" && a.is_string()) {
    std::string s = python_percent_format(ev, a.as_string(), b);
    return a.is_safe() ? Value(std::move(s)).mark_safe() : Value(std::move(s));
  }
  if (a.is_undefined()) undefined_error(a);
  if (b.is_undefined()) undefined_error(b);
  const bool ints = a.is_integer() && b.is_integer();
  const bool nums = a.is_number() && b.is_number();
  if (op == "+") {
    if (ints) {
      return Value(add_checked(a.as_int(), b.as_int()));
    }
    if (nums) return Value(a.as_double() + b.as_double());
    if (a.is_string() && b.is_string()) {
      if (a.is_safe() || b.is_safe()) {  // Markup + str escapes the str
        std::string s = (a.is_safe() ? a.as_string() : html_escape(a.as_string())) +
                        (b.is_safe() ? b.as_string() : html_escape(b.as_string()));
        ev.check_string_size(s.size());
        return Value(std::move(s)).mark_safe();
      }
      ev.check_string_size(a.as_string().size() + b.as_string().size());
      return Value(a.as_string() + b.as_string());
    }
    if (is_seq(a) && is_seq(b) && a.as_list().kind == b.as_list().kind) {
      std::vector<Value> items = a.as_list().items;
      items.insert(items.end(), b.as_list().items.begin(), b.as_list().items.end());
      ev.step(items.size());
      return Value::list(std::move(items), a.as_list().kind);
    }
    if (a.is_string() || b.is_string()) {
      throw_error("TypeError: can only concatenate str (not \"{}\") to str",
                  a.is_string() ? b.type_name() : a.type_name());
    }
    type_error(op, a, b);
  }
  if (op == "-") {
    if (ints) {
      return Value(sub_checked(a.as_int(), b.as_int()));
    }
    if (nums) return Value(a.as_double() - b.as_double());
    type_error(op, a, b);
  }
  if (op == "*") {
    if (ints) {
      return Value(mul_checked(a.as_int(), b.as_int()));
    }
    if (nums) return Value(a.as_double() * b.as_double());
    if ((a.is_string() || is_seq(a)) && b.is_integer()) return repeat(ev, a, b.as_int());
    if ((b.is_string() || is_seq(b)) && a.is_integer()) return repeat(ev, b, a.as_int());
    type_error(op, a, b);
  }
  if (!nums) type_error(op, a, b);
  if (op == "/") {
    if (b.as_double() == 0) throw_error("ZeroDivisionError: division by zero");
    return Value(a.as_double() / b.as_double());
  }
  if (op == "//") {
    if (ints) {
      const int64_t x = a.as_int(), y = b.as_int();
      if (y == 0) throw_error("ZeroDivisionError: integer division or modulo by zero");
      if (x == INT64_MIN && y == -1) throw_error("template error: integer overflow");
      int64_t q = x / y;
      if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
      return Value(q);
    }
    if (b.as_double() == 0) throw_error("ZeroDivisionError: float floor division by zero");
    return Value(std::floor(a.as_double() / b.as_double()));
  }
  if (op == "%") {
    if (ints) {
      const int64_t x = a.as_int(), y = b.as_int();
      if (y == 0) throw_error("ZeroDivisionError: integer division or modulo by zero");
      if (y == -1) return Value(int64_t{0});
      int64_t r = x % y;
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      return Value(r);
    }
    const double y = b.as_double();
    if (y == 0) throw_error("ZeroDivisionError: float modulo");
    double r = std::fmod(a.as_double(), y);
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return Value(r);
  }
  if (op == "**") {
    if (ints && b.as_int() >= 0) {
      int64_t result = 1, base = a.as_int(), e = b.as_int();
      while (e > 0) {
        if (e & 1) result = mul_checked(result, base);
        e >>= 1;
        if (e > 0) base = mul_checked(base, base);
      }
      return Value(result);
    }
    if (a.as_double() == 0 && b.as_double() < 0) {
      throw_error("ZeroDivisionError: 0.0 cannot be raised to a negative power");
    }
    return Value(std::pow(a.as_double(), b.as_double()));
  }
  throw_error("template error: unknown operator {}", op);
}

Value Evaluator::lookup(const std::string& name, const FramePtr& frame) {
  if (const Value* v = frame->find(name)) return *v;
  Value g = lookup_global(name);
  if (!g.is_undefined()) return g;
  return Value::undefined(fmt::format("'{}' is undefined", name));
}

Value Evaluator::get_attr(const Value& obj, const std::string& name) {
  if (obj.is_undefined()) undefined_error(obj);
  if (obj.is_object()) return obj.as_object()->get_attr(name);
  const MethodKind mk = name.empty() || name[0] == '_' ? MethodKind::None : method_kind(obj, name);
  if (mk == MethodKind::Safe) return Value(ObjectPtr(std::make_shared<BoundMethod>(obj, name)));
  if (mk == MethodKind::Unsafe) {
    return Value::undefined(fmt::format("SecurityError: access to attribute '{}' of '{}' object is unsafe.", name,
                                        obj.type_name()));
  }
  if (obj.is_dict() && !(name.size() > 0 && name[0] == '_')) {
    if (const Value* v = obj.as_dict().find(name)) return *v;
  }
  return Value::undefined(fmt::format("'{}' has no attribute '{}'",
                                      obj.is_dict() ? std::string("dict object") : obj.repr(), name));
}

Value Evaluator::get_item(const Value& obj, const Value& key) {
  if (obj.is_undefined()) undefined_error(obj);
  if (obj.is_dict()) {
    if (const Value* v = obj.as_dict().find(key)) return *v;
  } else if (is_seq(obj) && key.is_integer()) {
    const auto& items = obj.as_list().items;
    int64_t i = key.as_int();
    if (i < 0) i += static_cast<int64_t>(items.size());
    if (i >= 0 && i < static_cast<int64_t>(items.size())) return items[static_cast<size_t>(i)];
  } else if (obj.is_string() && key.is_integer()) {
    const std::u32string chars = unicode::decode(obj.as_string());
    int64_t i = key.as_int();
    if (i < 0) i += static_cast<int64_t>(chars.size());
    if (i >= 0 && i < static_cast<int64_t>(chars.size())) {
      std::string out;
      unicode::append_utf8(out, chars[static_cast<size_t>(i)]);
      return Value(std::move(out));
    }
  }
  if (key.is_string()) {
    if (obj.is_dict()) {
      const MethodKind mk = method_kind(obj, key.as_string());
      if (mk == MethodKind::Safe) return Value(ObjectPtr(std::make_shared<BoundMethod>(obj, key.as_string())));
      return Value::undefined(fmt::format("'dict object' has no attribute '{}'", key.as_string()));
    }
    return get_attr(obj, key.as_string());
  }
  return Value::undefined(fmt::format("'{}' has no item {}", obj.type_name(), key.repr()));
}

void Evaluator::eval_args(const Expr& e, size_t first, const FramePtr& frame, CallArgs& args) {
  for (size_t i = first; i < e.items.size(); ++i) args.positional.push_back(eval(*e.items[i], frame));
  for (const auto& kw : e.kwargs) args.kwargs.emplace_back(kw.name, eval(*kw.value, frame));
}

Value Evaluator::call(const Value& callee, CallArgs& args) {
  if (callee.is_undefined()) undefined_error(callee);
  if (!callee.is_object() || !callee.as_object()->callable()) {
    throw_error("TypeError: '{}' object is not callable", callee.type_name());
  }
  DepthGuard guard(*this);
  step();
  return callee.as_object()->call(*this, args);
}

Value Evaluator::eval_call(const Expr& e, const FramePtr& frame) {
  const Expr& target = *e.items[0];
  if (target.kind == Expr::Kind::GetAttr) {  // obj.method(...) without materializing a bound method
    const Value obj = eval(*target.items[0], frame);
    if (!obj.is_undefined() && !obj.is_object() && !target.name.empty() && target.name[0] != '_' &&
        method_kind(obj, target.name) == MethodKind::Safe) {
      CallArgs args;
      eval_args(e, 1, frame, args);
      step();
      return call_method(*this, obj, target.name, args);
    }
    const Value callee = get_attr(obj, target.name);
    CallArgs args;
    eval_args(e, 1, frame, args);
    return call(callee, args);
  }
  const Value callee = eval(target, frame);
  CallArgs args;
  eval_args(e, 1, frame, args);
  return call(callee, args);
}

Value Evaluator::eval_filter(const Expr& e, const FramePtr& frame) {
  const Value input = eval(*e.items[0], frame);
  CallArgs args;
  eval_args(e, 1, frame, args);
  return apply_filter(*this, e.name, input, args);
}

Value Evaluator::eval_test(const Expr& e, const FramePtr& frame) {
  const Value input = eval(*e.items[0], frame);
  CallArgs args;
  eval_args(e, 1, frame, args);
  return Value(apply_test(*this, e.name, input, args));
}

Value Evaluator::eval_getitem(const Expr& e, const FramePtr& frame) {
  const Value obj = eval(*e.items[0], frame);
  const Expr& idx = *e.items[1];
  if (idx.kind == Expr::Kind::Slice) {
    const Value start = idx.items[0] ? eval(*idx.items[0], frame) : Value::none();
    const Value stop = idx.items[1] ? eval(*idx.items[1], frame) : Value::none();
    const Value stride = idx.items[2] ? eval(*idx.items[2], frame) : Value::none();
    if (obj.is_undefined()) undefined_error(obj);
    if (obj.is_string() || is_seq(obj)) return slice(*this, obj, start, stop, stride);
    // jinja2 compiles slices to a plain Python subscript (no getitem fallback to Undefined).
    throw_error("TypeError: '{}' object is not subscriptable", obj.type_name());
  }
  return get_item(obj, eval(idx, frame));
}

Value Evaluator::eval_binary(const Expr& e, const FramePtr& frame) {
  const std::string& op = e.name;
  if (op == "and") {
    Value a = eval(*e.items[0], frame);
    return a.truthy() ? eval(*e.items[1], frame) : a;
  }
  if (op == "or") {
    Value a = eval(*e.items[0], frame);
    return a.truthy() ? a : eval(*e.items[1], frame);
  }
  const Value a = eval(*e.items[0], frame);
  const Value b = eval(*e.items[1], frame);
  return binary_op(*this, op, a, b);
}

Value Evaluator::eval_compare(const Expr& e, const FramePtr& frame) {
  Value left = eval(*e.items[0], frame);
  for (size_t i = 0; i < e.ops.size(); ++i) {
    Value right = eval(*e.items[i + 1], frame);
    const std::string& op = e.ops[i];
    bool r = false;
    if (op == "==") {
      r = left.equals(right);
    } else if (op == "!=") {
      r = !left.equals(right);
    } else if (op == "in") {
      r = contains(right, left);
    } else if (op == "notin") {
      r = !contains(right, left);
    } else {
      if (left.is_undefined()) undefined_error(left);
      if (right.is_undefined()) undefined_error(right);
      const int c = left.compare(right);
      r = op == "<" ? c < 0 : op == "<=" ? c <= 0 : op == ">" ? c > 0 : c >= 0;
    }
    if (!r) return Value(false);
    left = std::move(right);
  }
  return Value(true);
}

Value Evaluator::eval(const Expr& e, const FramePtr& frame) {
  DepthGuard guard(*this);
  switch (e.kind) {
    case Expr::Kind::Literal:
      return e.value;
    case Expr::Kind::Name:
      return lookup(e.name, frame);
    case Expr::Kind::List:
    case Expr::Kind::Tuple: {
      std::vector<Value> items;
      items.reserve(e.items.size());
      for (const auto& i : e.items) items.push_back(eval(*i, frame));
      return Value::list(std::move(items), e.kind == Expr::Kind::Tuple ? SeqKind::Tuple : SeqKind::List);
    }
    case Expr::Kind::Dict: {
      Dict d;
      for (size_t i = 0; i + 1 < e.items.size(); i += 2) {
        Value k = eval(*e.items[i], frame);
        d.set(k, eval(*e.items[i + 1], frame));
      }
      return Value::dict(std::move(d));
    }
    case Expr::Kind::GetAttr:
      return get_attr(eval(*e.items[0], frame), e.name);
    case Expr::Kind::GetItem:
      return eval_getitem(e, frame);
    case Expr::Kind::Slice:
      throw_error("template error: slice outside of a subscript");
    case Expr::Kind::Call:
      return eval_call(e, frame);
    case Expr::Kind::Filter:
      return eval_filter(e, frame);
    case Expr::Kind::Test:
      return eval_test(e, frame);
    case Expr::Kind::Not:
      return Value(!eval(*e.items[0], frame).truthy());
    case Expr::Kind::Neg:
    case Expr::Kind::Pos: {
      const Value v = eval(*e.items[0], frame);
      if (v.is_undefined()) undefined_error(v);
      if (!v.is_number()) {
        throw_error("TypeError: bad operand type for unary {}: '{}'", e.kind == Expr::Kind::Neg ? "-" : "+",
                    v.type_name());
      }
      if (e.kind == Expr::Kind::Pos) return v.is_bool() ? Value(v.as_int()) : v;
      if (v.is_float()) return Value(-v.as_double());
      if (v.as_int() == INT64_MIN) throw_error("template error: integer overflow");
      return Value(-v.as_int());
    }
    case Expr::Kind::Binary:
      return eval_binary(e, frame);
    case Expr::Kind::Compare:
      return eval_compare(e, frame);
    case Expr::Kind::CondExpr:
      if (eval(*e.items[0], frame).truthy()) return eval(*e.items[1], frame);
      if (e.items[2]) return eval(*e.items[2], frame);
      return Value::undefined("the inline if-expression evaluated to false and no else section was defined.");
  }
  return Value();
}

}  // namespace vellum::jinja
