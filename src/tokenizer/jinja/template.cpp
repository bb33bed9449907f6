#include "tokenizer/jinja/template.h"

#include "core/error.h"
#include "tokenizer/jinja/builtins.h"

namespace vellum::jinja {

namespace {

// jinja2 resolves filter and test names when it compiles a template, except inside an `if`
// statement or conditional expression ("soft" frames), where an unknown name fails only if reached.
void check_expr(const Expr* e, bool soft) {
  if (!e) return;
  if (e->kind == Expr::Kind::CondExpr) soft = true;
  if (!soft && e->kind == Expr::Kind::Filter && !has_filter(e->name)) {
    throw_error("chat template line {}: No filter named '{}'.", e->line, e->name);
  }
  if (!soft && e->kind == Expr::Kind::Test && !has_test(e->name)) {
    throw_error("chat template line {}: No test named '{}'.", e->line, e->name);
  }
  for (const auto& i : e->items) check_expr(i.get(), soft);
  for (const auto& k : e->kwargs) check_expr(k.value.get(), soft);
}

void check_body(const Body& body, bool soft) {
  for (const auto& s : body) {
    const bool s_soft = soft || s->kind == Stmt::Kind::If;
    check_expr(s->expr.get(), s_soft);
    check_expr(s->expr2.get(), false);
    for (const auto& v : s->values) check_expr(v.get(), s_soft);
    for (const auto& p : s->params) check_expr(p.default_value.get(), false);
    for (const auto& [c, b] : s->branches) {
      check_expr(c.get(), true);
      check_body(b, true);
    }
    // Loop, macro, call, filter and block-set bodies are new (non-soft) frames in jinja2.
    const bool inner_soft = s->kind == Stmt::Kind::Scope ? soft : false;
    check_body(s->body, inner_soft);
    check_body(s->else_body, s->kind == Stmt::Kind::If);
  }
}

}  // namespace

Template::Template(std::string_view source, const ParseOptions& options) : body_(parse(source, options)) {
  check_body(body_, false);
}

std::string Template::render(const Dict& context, const RenderOptions& options) const {
  Evaluator ev(options);
  return ev.render(body_, context);
}

std::string Template::render(const nlohmann::ordered_json& context, const RenderOptions& options) const {
  if (!context.is_object()) throw_error("template context must be a JSON object");
  const Value v = from_json(context);
  return render(v.as_dict(), options);
}

}  // namespace vellum::jinja
