// Statements: output, if, for, set, macro, call and filter blocks, break/continue, with.

#include "tokenizer/jinja/evaluator.h"

#include "core/error.h"
#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/objects.h"

namespace vellum::jinja {

const Value* Frame::find(const std::string& name) const {
  for (const Frame* f = this; f != nullptr; f = f->parent.get()) {
    const auto it = f->vars.find(name);
    if (it != f->vars.end()) return &it->second;
  }
  return nullptr;
}

Value CallArgs::get(size_t i, const char* name, Value fallback) {
  if (i < positional.size()) {
    for (const auto& [k, v] : kwargs) {
      if (k == name) throw_error("template error: got multiple values for argument '{}'", name);
    }
    return positional[i];
  }
  for (auto it = kwargs.begin(); it != kwargs.end(); ++it) {
    if (it->first == name) {
      Value v = std::move(it->second);
      kwargs.erase(it);
      return v;
    }
  }
  return fallback;
}

bool CallArgs::has(size_t i, const char* name) const {
  if (i < positional.size()) return true;
  for (const auto& [k, v] : kwargs) {
    if (k == name) return true;
  }
  return false;
}

void CallArgs::finish(const std::string& what, size_t n_params) const {
  if (positional.size() > n_params) {
    throw_error("template error: {} takes at most {} argument(s), {} given", what, n_params, positional.size());
  }
  if (!kwargs.empty()) throw_error("template error: {} got an unexpected keyword argument '{}'", what, kwargs[0].first);
}

Evaluator::Evaluator(RenderOptions options) : options_(std::move(options)) {}

Evaluator::~Evaluator() {
  // Macros hold their defining frame and frames hold macros; namespaces can hold themselves.
  for (auto& c : cleanups_) c();
}

Evaluator::DepthGuard::DepthGuard(Evaluator& ev) : ev_(ev) {
  if (++ev_.depth_ > ev_.options_.limits.max_depth) {
    --ev_.depth_;
    throw_error("template error: maximum recursion depth exceeded");
  }
}

void Evaluator::step(uint64_t n) {
  steps_ += n;
  if (steps_ > options_.limits.max_steps) {
    throw_error("template error: evaluation exceeded {} steps (runaway loop?)", options_.limits.max_steps);
  }
}

void Evaluator::check_string_size(size_t n) const {
  if (n > options_.limits.max_output_bytes) {
    throw_error("template error: output exceeds {} bytes", options_.limits.max_output_bytes);
  }
}

void Evaluator::append(std::string& out, const std::string& s) const {
  check_string_size(out.size() + s.size());
  out += s;
}

std::string Evaluator::render(const Body& body, const Dict& context) {
  auto root = std::make_shared<Frame>();
  for (const auto& [k, v] : context.items()) {
    if (k.is_string()) root->vars[k.as_string()] = v;
  }
  std::string out;
  exec(body, root, out);
  return out;
}

std::string Evaluator::render_body(const Body& body, const FramePtr& frame) {
  std::string out;
  exec(body, frame, out);
  return out;
}

Evaluator::Flow Evaluator::exec(const Body& body, const FramePtr& frame, std::string& out) {
  DepthGuard guard(*this);
  for (const auto& s : body) {
    const Flow f = exec_stmt(*s, frame, out);
    if (f != Flow::Normal) return f;
  }
  return Flow::Normal;
}

Evaluator::Flow Evaluator::exec_stmt(const Stmt& s, const FramePtr& frame, std::string& out) {
  step();
  try {
    switch (s.kind) {
      case Stmt::Kind::Text:
        append(out, s.text);
        return Flow::Normal;
      case Stmt::Kind::Output: {
        const Value v = eval(*s.expr, frame);
        append(out, to_str(v));
        return Flow::Normal;
      }
      case Stmt::Kind::If:
        for (const auto& [cond, body] : s.branches) {
          if (eval(*cond, frame).truthy()) return exec(body, frame, out);
        }
        return exec(s.else_body, frame, out);
      case Stmt::Kind::For:
        return exec_for(s, frame, out);
      case Stmt::Kind::Set:
        exec_set(s, frame);
        return Flow::Normal;
      case Stmt::Kind::BlockSet: {
        Value v(render_body(s.body, frame));
        if (s.expr) v = apply_filter_chain(*s.expr, v, frame);
        frame->vars[s.targets[0]] = std::move(v);
        return Flow::Normal;
      }
      case Stmt::Kind::Macro: {
        auto m = std::make_shared<Macro>(&s, frame, s.name);
        track([m] { m->clear(); });
        frame->vars[s.name] = Value(ObjectPtr(m));
        return Flow::Normal;
      }
      case Stmt::Kind::CallBlock:
        exec_call_block(s, frame, out);
        return Flow::Normal;
      case Stmt::Kind::FilterBlock: {
        const Value body(render_body(s.body, frame));
        append(out, to_str(apply_filter_chain(*s.expr, body, frame)));
        return Flow::Normal;
      }
      case Stmt::Kind::Break:
        return Flow::Break;
      case Stmt::Kind::Continue:
        return Flow::Continue;
      case Stmt::Kind::With: {
        auto inner = std::make_shared<Frame>();
        inner->parent = frame;
        for (size_t i = 0; i < s.targets.size(); ++i) inner->vars[s.targets[i]] = eval(*s.values[i], frame);
        return exec(s.body, inner, out);
      }
      case Stmt::Kind::Scope:
        return exec(s.body, frame, out);
    }
  } catch (const TemplateRaised&) {
    throw;
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.rfind("chat template line", 0) == 0) throw;
    throw_error("chat template line {}: {}", s.line, msg);
  }
  return Flow::Normal;
}

std::vector<Value> iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined:
      return {};
    case Value::Kind::List:
      return v.as_list().items;
    case Value::Kind::Dict: {
      std::vector<Value> keys;
      keys.reserve(v.as_dict().size());
      for (const auto& [k, val] : v.as_dict().items()) keys.push_back(k);
      return keys;
    }
    case Value::Kind::String: {
      std::vector<Value> chars;
      const std::string& s = v.as_string();
      for (size_t i = 0; i < s.size();) {
        size_t n = 1;
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0xF0) {
          n = 4;
        } else if (c >= 0xE0) {
          n = 3;
        } else if (c >= 0xC0) {
          n = 2;
        }
        n = std::min(n, s.size() - i);
        chars.emplace_back(s.substr(i, n));
        i += n;
      }
      return chars;
    }
    default:
      throw_error("template error: '{}' object is not iterable", v.type_name());
  }
}

void Evaluator::assign_targets(const Stmt& s, const FramePtr& frame, const Value& v) {
  if (!s.tuple_target) {
    frame->vars[s.targets[0]] = v;
    return;
  }
  if (v.is_undefined()) undefined_error(v);
  const std::vector<Value> items = iterate(v);
  if (items.size() != s.targets.size()) {
    throw_error("template error: cannot unpack {} values into {} names", items.size(), s.targets.size());
  }
  for (size_t i = 0; i < items.size(); ++i) frame->vars[s.targets[i]] = items[i];
}

Evaluator::Flow Evaluator::exec_for(const Stmt& s, const FramePtr& frame, std::string& out) {
  const Value iterable = eval(*s.expr, frame);
  if (iterable.is_none() || iterable.is_number() || iterable.is_object()) {
    throw_error("template error: '{}' object is not iterable", iterable.type_name());
  }
  std::vector<Value> items = iterate(iterable);
  step(items.size());
  if (s.expr2) {  // `for x in xs if cond`: filtered before the loop, so loop.length counts kept items
    std::vector<Value> kept;
    for (auto& item : items) {
      auto f = std::make_shared<Frame>();
      f->parent = frame;
      assign_targets(s, f, item);
      if (eval(*s.expr2, f).truthy()) kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  if (items.empty()) return exec(s.else_body, frame, out);
  auto loop = std::make_shared<LoopInfo>();
  {
    auto l = std::make_shared<List>();
    l->items = std::move(items);
    loop->items = std::move(l);
  }
  const Value loop_value{ObjectPtr(loop)};
  const size_t n = loop->items->items.size();
  for (size_t i = 0; i < n; ++i) {
    step();
    loop->index0 = i;
    auto f = std::make_shared<Frame>();
    f->parent = frame;
    f->vars["loop"] = loop_value;
    assign_targets(s, f, loop->items->items[i]);
    const Flow flow = exec(s.body, f, out);
    if (flow == Flow::Break) break;
  }
  return Flow::Normal;
}

void Evaluator::exec_set(const Stmt& s, const FramePtr& frame) {
  Value v = eval(*s.expr, frame);
  if (!s.attr.empty()) {
    const Value* target = frame->find(s.targets[0]);
    Namespace* ns = nullptr;
    if (target && target->is_object()) ns = dynamic_cast<Namespace*>(target->as_object().get());
    if (!ns) throw_error("template error: cannot assign attribute on non-namespace object");
    ns->attrs.set(Value(s.attr), std::move(v));
    return;
  }
  assign_targets(s, frame, v);
}

void Evaluator::exec_call_block(const Stmt& s, const FramePtr& frame, std::string& out) {
  const Expr& call_expr = *s.expr;
  const Value callee = eval(*call_expr.items[0], frame);
  CallArgs args;
  eval_args(call_expr, 1, frame, args);
  auto caller = std::make_shared<Macro>(&s, frame, "caller");
  track([caller] { caller->clear(); });
  args.kwargs.emplace_back("caller", Value(ObjectPtr(caller)));
  append(out, to_str(call(callee, args)));
}

Value Evaluator::apply_filter_chain(const Expr& e, const Value& base, const FramePtr& frame) {
  DepthGuard guard(*this);
  const Value input = e.items[0] ? apply_filter_chain(*e.items[0], base, frame) : base;
  CallArgs args;
  eval_args(e, 1, frame, args);
  return apply_filter(*this, e.name, input, args);
}

}  // namespace vellum::jinja
