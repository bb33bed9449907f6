#include "tokenizer/jinja/objects.h"

#include "core/error.h"
#include "tokenizer/jinja/builtins.h"

namespace vellum::jinja {

Value Namespace::get_attr(const std::string& name) const {
  if (const Value* v = attrs.find(name)) return *v;
  return Value::undefined(fmt::format("'Namespace' object has no attribute '{}'", name));
}

std::string Namespace::repr() const { return "<Namespace " + Value::dict(attrs).repr() + ">"; }

Value LoopInfo::get_attr(const std::string& name) const {
  const auto n = items->items.size();
  const auto i = index0;
  if (name == "index") return Value(static_cast<int64_t>(i + 1));
  if (name == "index0") return Value(static_cast<int64_t>(i));
  if (name == "revindex") return Value(static_cast<int64_t>(n - i));
  if (name == "revindex0") return Value(static_cast<int64_t>(n - i - 1));
  if (name == "first") return Value(i == 0);
  if (name == "last") return Value(i + 1 == n);
  if (name == "length") return Value(static_cast<int64_t>(n));
  if (name == "depth") return Value(int64_t{depth0 + 1});
  if (name == "depth0") return Value(int64_t{depth0});
  if (name == "previtem") {
    if (i == 0) return Value::undefined("there is no previous item");
    return items->items[i - 1];
  }
  if (name == "nextitem") {
    if (i + 1 >= n) return Value::undefined("there is no next item");
    return items->items[i + 1];
  }
  if (name == "cycle") {
    const size_t idx = i;
    return Value(ObjectPtr(std::make_shared<BuiltinFunction>("cycle", [idx](Evaluator&, CallArgs& args) {
      if (!args.kwargs.empty()) throw_error("template error: loop.cycle takes no keyword arguments");
      if (args.positional.empty()) throw_error("TypeError: no items for cycling given");
      return args.positional[idx % args.positional.size()];
    })));
  }
  if (name == "changed") {
    auto self = std::const_pointer_cast<LoopInfo>(shared_from_this());
    return Value(ObjectPtr(std::make_shared<BuiltinFunction>("changed", [self](Evaluator&, CallArgs& args) {
      const Value v = Value::list(args.positional, SeqKind::Tuple);
      if (!self->changed_called || !self->last_changed.equals(v)) {
        self->changed_called = true;
        self->last_changed = v;
        return Value(true);
      }
      return Value(false);
    })));
  }
  return Object::get_attr(name);
}

std::string LoopInfo::repr() const {
  return fmt::format("<LoopContext {}/{}>", index0 + 1, items ? items->items.size() : 0);
}

namespace {

bool uses_name_expr(const Expr* e, const std::string& name);

bool uses_name_body(const Body& body, const std::string& name) {
  for (const auto& s : body) {
    if (s->kind == Stmt::Kind::Macro) continue;  // a nested macro's own varargs are its own
    if (uses_name_expr(s->expr.get(), name) || uses_name_expr(s->expr2.get(), name)) return true;
    for (const auto& v : s->values) {
      if (uses_name_expr(v.get(), name)) return true;
    }
    for (const auto& p : s->params) {
      if (uses_name_expr(p.default_value.get(), name)) return true;
    }
    for (const auto& [c, b] : s->branches) {
      if (uses_name_expr(c.get(), name) || uses_name_body(b, name)) return true;
    }
    if (uses_name_body(s->body, name) || uses_name_body(s->else_body, name)) return true;
  }
  return false;
}

bool uses_name_expr(const Expr* e, const std::string& name) {
  if (!e) return false;
  if (e->kind == Expr::Kind::Name && e->name == name) return true;
  for (const auto& i : e->items) {
    if (uses_name_expr(i.get(), name)) return true;
  }
  for (const auto& k : e->kwargs) {
    if (uses_name_expr(k.value.get(), name)) return true;
  }
  return false;
}

}  // namespace

Value Macro::get_attr(const std::string& name) const {
  if (name == "name") return Value(name_);
  return Object::get_attr(name);
}

Value Macro::call(Evaluator& ev, CallArgs& args) {
  if (!closure_) throw_error("template error: macro '{}' called after its template finished", name_);
  auto frame = std::make_shared<Frame>();
  frame->parent = closure_;
  const auto& params = def_->params;
  const bool takes_varargs = uses_name_body(def_->body, "varargs");
  const bool takes_kwargs = uses_name_body(def_->body, "kwargs");
  if (args.positional.size() > params.size() && !takes_varargs) {
    throw_error("TypeError: macro '{}' takes not more than {} argument(s)", name_, params.size());
  }
  std::vector<std::pair<std::string, Value>> kwargs = std::move(args.kwargs);
  auto take_kwarg = [&](const std::string& n, Value* out) {
    for (auto it = kwargs.begin(); it != kwargs.end(); ++it) {
      if (it->first == n) {
        *out = std::move(it->second);
        kwargs.erase(it);
        return true;
      }
    }
    return false;
  };
  Value caller;
  const bool has_caller = take_kwarg("caller", &caller);
  for (size_t i = 0; i < params.size(); ++i) {
    Value v;
    if (i < args.positional.size()) {
      v = args.positional[i];
      Value dup;
      if (take_kwarg(params[i].name, &dup)) {
        throw_error("TypeError: macro '{}' got multiple values for argument '{}'", name_, params[i].name);
      }
    } else if (take_kwarg(params[i].name, &v)) {
    } else if (params[i].default_value) {
      v = ev.eval(*params[i].default_value, frame);
    } else {
      v = Value::undefined(fmt::format("parameter '{}' was not provided", params[i].name));
    }
    frame->vars[params[i].name] = std::move(v);
  }
  if (has_caller) frame->vars["caller"] = caller;
  std::vector<Value> extra;
  for (size_t i = params.size(); i < args.positional.size(); ++i) extra.push_back(args.positional[i]);
  frame->vars["varargs"] = Value::list(std::move(extra), SeqKind::Tuple);
  if (!kwargs.empty() && !takes_kwargs) {
    throw_error("TypeError: macro '{}' takes no keyword argument '{}'", name_, kwargs[0].first);
  }
  Dict kw;
  for (auto& [k, v] : kwargs) kw.set(Value(k), std::move(v));
  frame->vars["kwargs"] = Value::dict(std::move(kw));
  return Value(ev.render_body(def_->body, frame));
}

Value BoundMethod::call(Evaluator& ev, CallArgs& args) {
  if (method_kind(self_, name_) != MethodKind::Safe) {
    throw_error("SecurityError: access to attribute '{}' of '{}' object is unsafe.", name_, self_.type_name());
  }
  return call_method(ev, self_, name_, args);
}

}  // namespace vellum::jinja
