#include "tokenizer/jinja/parser.h"

#include <initializer_list>

#include "core/error.h"

namespace vellum::jinja {

namespace {

using T = Token::Type;

class Parser {
 public:
  Parser(std::vector<Token> tokens, const ParseOptions& o) : toks_(std::move(tokens)), opt_(o) {}

  Body parse_template() {
    Body body = parse_body({});
    if (cur().type != T::End) fail(fmt::format("unexpected '{}'", cur().text));
    return body;
  }

 private:
  // -- token helpers -----------------------------------------------------------------------

  const Token& cur() const { return toks_[pos_]; }
  const Token& look(size_t ahead = 1) const {
    return toks_[std::min(pos_ + ahead, toks_.size() - 1)];
  }
  void next() {
    if (pos_ + 1 < toks_.size()) ++pos_;
  }
  bool is_op(const char* op) const { return cur().type == T::Op && cur().text == op; }
  bool is_name(const char* name) const { return cur().type == T::Name && cur().text == name; }
  bool skip_op(const char* op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  bool skip_name(const char* name) {
    if (!is_name(name)) return false;
    next();
    return true;
  }
  static std::string describe(const Token& t) {
    switch (t.type) {
      case T::Text:
        return "template data";
      case T::VarBegin:
        return "'{{'";
      case T::VarEnd:
        return "end of print statement";
      case T::BlockBegin:
        return "'{%'";
      case T::BlockEnd:
        return "end of statement block";
      case T::End:
        return "end of template";
      case T::String:
        return "string";
      case T::Int:
      case T::Float:
        return "number";
      default:
        return "'" + t.text + "'";
    }
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw_error("chat template line {}: syntax error: {}", cur().line, what);
  }
  void expect_op(const char* op) {
    if (!skip_op(op)) fail(fmt::format("expected '{}', got {}", op, describe(cur())));
  }
  std::string expect_name() {
    if (cur().type != T::Name) fail(fmt::format("expected a name, got {}", describe(cur())));
    std::string n = cur().text;
    next();
    return n;
  }
  void expect_block_end() {
    if (cur().type != T::BlockEnd) fail(fmt::format("expected end of statement block, got {}", describe(cur())));
    next();
  }

  struct DepthGuard {
    explicit DepthGuard(Parser& p) : p_(p) {
      if (++p_.depth_ > p_.opt_.max_nesting) p_.fail("template nested too deeply");
    }
    ~DepthGuard() { --p_.depth_; }
    Parser& p_;
  };

  ExprPtr make(Expr::Kind k) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->line = cur().line;
    return e;
  }

  // -- statements --------------------------------------------------------------------------

  // Parses until `{% <one of end_names>` (left unconsumed: the position is at the name) or the end.
  Body parse_body(std::initializer_list<const char*> end_names) {
    DepthGuard guard(*this);
    Body body;
    while (true) {
      const Token& t = cur();
      if (t.type == T::End) {
        if (end_names.size() > 0) fail(fmt::format("unexpected end of template, expected '{}'", *end_names.begin()));
        return body;
      }
      if (t.type == T::Text) {
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::Text;
        s->line = t.line;
        s->text = t.text;
        body.push_back(std::move(s));
        next();
        continue;
      }
      if (t.type == T::VarBegin) {
        next();
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::Output;
        s->line = t.line;
        s->expr = parse_tuple(true, false);
        if (cur().type != T::VarEnd) fail(fmt::format("expected end of print statement, got {}", describe(cur())));
        next();
        body.push_back(std::move(s));
        continue;
      }
      if (t.type == T::BlockBegin) {
        const Token& name = look();
        if (name.type == T::Name) {
          for (const char* e : end_names) {
            if (name.text == e) {
              next();  // now at the name
              return body;
            }
          }
        }
        next();
        body.push_back(parse_statement());
        continue;
      }
      fail(fmt::format("unexpected {}", describe(t)));
    }
  }

  StmtPtr new_stmt(Stmt::Kind k, int line) {
    auto s = std::make_unique<Stmt>();
    s->kind = k;
    s->line = line;
    return s;
  }

  StmtPtr parse_statement() {
    if (cur().type != T::Name) fail(fmt::format("expected a statement name, got {}", describe(cur())));
    const std::string kw = cur().text;
    const int line = cur().line;
    next();
    if (kw == "if") return parse_if(line);
    if (kw == "for") return parse_for(line);
    if (kw == "set") return parse_set(line);
    if (kw == "macro") return parse_macro(line);
    if (kw == "call") return parse_call_block(line);
    if (kw == "filter") return parse_filter_block(line);
    if (kw == "with") return parse_with(line);
    if (kw == "break" || kw == "continue") {
      if (loop_depth_ == 0) fail(fmt::format("'{}' outside of a loop", kw));
      expect_block_end();
      return new_stmt(kw == "break" ? Stmt::Kind::Break : Stmt::Kind::Continue, line);
    }
    if (kw == "generation" || kw == "block") {
      auto s = new_stmt(Stmt::Kind::Scope, line);
      if (kw == "block") {
        s->name = expect_name();
        skip_name("scoped");
        skip_name("required");
      }
      expect_block_end();
      s->body = kw == "block" ? parse_body({"endblock"}) : parse_body({"endgeneration"});
      next();  // end name
      if (kw == "block" && cur().type == T::Name) next();
      expect_block_end();
      return s;
    }
    if (kw == "include" || kw == "import" || kw == "from" || kw == "extends" || kw == "do" || kw == "autoescape" ||
        kw == "trans") {
      fail(fmt::format("'{}' is not supported in chat templates", kw));
    }
    fail(fmt::format("unknown or misplaced tag '{}'", kw));
  }

  StmtPtr parse_if(int line) {
    auto s = new_stmt(Stmt::Kind::If, line);
    while (true) {
      ExprPtr cond = parse_tuple(false, false);
      expect_block_end();
      Body body = parse_body({"elif", "else", "endif"});
      s->branches.emplace_back(std::move(cond), std::move(body));
      const std::string tag = cur().text;
      next();
      if (tag == "elif") continue;
      if (tag == "else") {
        expect_block_end();
        s->else_body = parse_body({"endif"});
        next();
      }
      expect_block_end();
      return s;
    }
  }

  void parse_target_names(Stmt& s) {
    const bool paren = skip_op("(");
    s.targets.push_back(expect_name());
    while (skip_op(",")) {
      s.tuple_target = true;
      if (cur().type != T::Name) break;
      s.targets.push_back(expect_name());
    }
    if (paren) {
      s.tuple_target = true;
      expect_op(")");
    }
  }

  StmtPtr parse_for(int line) {
    auto s = new_stmt(Stmt::Kind::For, line);
    parse_target_names(*s);
    for (const auto& t : s->targets) {
      if (t == "loop") fail("cannot assign to 'loop'");
    }
    if (!skip_name("in")) fail(fmt::format("expected 'in', got {}", describe(cur())));
    s->expr = parse_tuple(false, false, "recursive");
    if (skip_name("if")) s->expr2 = parse_expression(true);
    if (is_name("recursive")) fail("recursive loops are not supported");
    expect_block_end();
    ++loop_depth_;
    s->body = parse_body({"endfor", "else"});
    --loop_depth_;
    if (cur().text == "else") {
      next();
      expect_block_end();
      s->else_body = parse_body({"endfor"});
    }
    next();
    expect_block_end();
    return s;
  }

  StmtPtr parse_set(int line) {
    auto s = new_stmt(Stmt::Kind::Set, line);
    if (cur().type == T::Name && look().type == T::Op && look().text == ".") {
      s->targets.push_back(expect_name());
      next();  // .
      s->attr = expect_name();
    } else {
      parse_target_names(*s);
    }
    if (skip_op("=")) {
      s->expr = parse_tuple(true, false);
      expect_block_end();
      return s;
    }
    if (!s->attr.empty() || s->tuple_target) fail("block set needs a single plain name");
    s->kind = Stmt::Kind::BlockSet;
    if (is_op("|")) s->expr = parse_filter_chain(nullptr);
    expect_block_end();
    s->body = parse_body({"endset"});
    next();
    expect_block_end();
    return s;
  }

  void parse_params(std::vector<MacroParam>& params) {
    expect_op("(");
    while (!is_op(")")) {
      if (!params.empty()) {
        expect_op(",");
        if (is_op(")")) break;
      }
      MacroParam p;
      p.name = expect_name();
      if (skip_op("=")) {
        p.default_value = parse_expression(true);
      } else if (!params.empty() && params.back().default_value) {
        fail("non-default argument follows default argument");
      }
      params.push_back(std::move(p));
    }
    next();
  }

  StmtPtr parse_macro(int line) {
    auto s = new_stmt(Stmt::Kind::Macro, line);
    s->name = expect_name();
    parse_params(s->params);
    expect_block_end();
    const int saved = loop_depth_;
    loop_depth_ = 0;
    s->body = parse_body({"endmacro"});
    loop_depth_ = saved;
    next();
    if (cur().type == T::Name) next();  // {% endmacro name %}
    expect_block_end();
    return s;
  }

  StmtPtr parse_call_block(int line) {
    auto s = new_stmt(Stmt::Kind::CallBlock, line);
    if (is_op("(")) parse_params(s->params);
    s->expr = parse_expression(true);
    if (s->expr->kind != Expr::Kind::Call) fail("expected a call in {% call %}");
    expect_block_end();
    const int saved = loop_depth_;
    loop_depth_ = 0;
    s->body = parse_body({"endcall"});
    loop_depth_ = saved;
    next();
    expect_block_end();
    return s;
  }

  StmtPtr parse_filter_block(int line) {
    auto s = new_stmt(Stmt::Kind::FilterBlock, line);
    s->expr = parse_filter_chain(nullptr, /*start_inline=*/true);
    expect_block_end();
    s->body = parse_body({"endfilter"});
    next();
    expect_block_end();
    return s;
  }

  StmtPtr parse_with(int line) {
    auto s = new_stmt(Stmt::Kind::With, line);
    while (cur().type != T::BlockEnd) {
      if (!s->targets.empty()) expect_op(",");
      s->targets.push_back(expect_name());
      expect_op("=");
      s->values.push_back(parse_expression(true));
    }
    expect_block_end();
    s->body = parse_body({"endwith"});
    next();
    expect_block_end();
    return s;
  }

  // -- expressions -------------------------------------------------------------------------

  bool is_tuple_end(const char* extra_end) const {
    if (cur().type == T::VarEnd || cur().type == T::BlockEnd || cur().type == T::End) return true;
    if (is_op(")")) return true;
    return extra_end != nullptr && is_name(extra_end);
  }

  ExprPtr parse_tuple(bool with_condexpr, bool explicit_parens, const char* extra_end = nullptr) {
    const int line = cur().line;
    std::vector<ExprPtr> args;
    bool is_tuple = false;
    while (true) {
      if (!args.empty()) expect_op(",");
      if (is_tuple_end(extra_end)) break;
      args.push_back(parse_expression(with_condexpr));
      if (is_op(",")) {
        is_tuple = true;
      } else {
        break;
      }
    }
    if (!is_tuple) {
      if (!args.empty()) return std::move(args[0]);
      if (!explicit_parens) fail(fmt::format("expected an expression, got {}", describe(cur())));
    }
    auto e = make(Expr::Kind::Tuple);
    e->line = line;
    e->items = std::move(args);
    return e;
  }

  ExprPtr parse_expression(bool with_condexpr) {
    DepthGuard guard(*this);
    return with_condexpr ? parse_condexpr() : parse_or();
  }

  ExprPtr parse_condexpr() {
    ExprPtr expr1 = parse_or();
    while (skip_name("if")) {
      auto e = make(Expr::Kind::CondExpr);
      ExprPtr cond = parse_or();
      ExprPtr otherwise;
      if (skip_name("else")) otherwise = parse_condexpr();
      e->items.push_back(std::move(cond));
      e->items.push_back(std::move(expr1));
      e->items.push_back(std::move(otherwise));
      expr1 = std::move(e);
    }
    return expr1;
  }

  ExprPtr binary(std::string op, ExprPtr l, ExprPtr r) {
    auto e = make(Expr::Kind::Binary);
    e->name = std::move(op);
    e->items.push_back(std::move(l));
    e->items.push_back(std::move(r));
    return e;
  }

  ExprPtr parse_or() {
    ExprPtr left = parse_and();
    while (skip_name("or")) left = binary("or", std::move(left), parse_and());
    return left;
  }

  ExprPtr parse_and() {
    ExprPtr left = parse_not();
    while (skip_name("and")) left = binary("and", std::move(left), parse_not());
    return left;
  }

  ExprPtr parse_not() {
    if (is_name("not")) {
      DepthGuard guard(*this);
      auto e = make(Expr::Kind::Not);
      next();
      e->items.push_back(parse_not());
      return e;
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    ExprPtr expr = parse_math1();
    ExprPtr cmp;
    while (true) {
      std::string op;
      if (cur().type == T::Op && (cur().text == "==" || cur().text == "!=" || cur().text == "<" ||
                                  cur().text == "<=" || cur().text == ">" || cur().text == ">=")) {
        op = cur().text;
        next();
      } else if (is_name("in")) {
        op = "in";
        next();
      } else if (is_name("not") && look().type == T::Name && look().text == "in") {
        op = "notin";
        next();
        next();
      } else {
        break;
      }
      if (!cmp) {
        cmp = make(Expr::Kind::Compare);
        cmp->items.push_back(std::move(expr));
      }
      cmp->ops.push_back(op);
      cmp->items.push_back(parse_math1());
    }
    return cmp ? std::move(cmp) : std::move(expr);
  }

  ExprPtr parse_math1() {
    ExprPtr left = parse_concat();
    while (is_op("+") || is_op("-")) {
      const std::string op = cur().text;
      next();
      left = binary(op, std::move(left), parse_concat());
    }
    return left;
  }

  ExprPtr parse_concat() {
    ExprPtr left = parse_math2();
    while (skip_op("~")) left = binary("~", std::move(left), parse_math2());
    return left;
  }

  ExprPtr parse_math2() {
    ExprPtr left = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const std::string op = cur().text;
      next();
      left = binary(op, std::move(left), parse_pow());
    }
    return left;
  }

  ExprPtr parse_pow() {
    ExprPtr left = parse_unary(true);
    while (skip_op("**")) left = binary("**", std::move(left), parse_unary(true));
    return left;
  }

  ExprPtr parse_unary(bool with_filter) {
    DepthGuard guard(*this);
    ExprPtr node;
    if (is_op("-") || is_op("+")) {
      auto e = make(is_op("-") ? Expr::Kind::Neg : Expr::Kind::Pos);
      next();
      e->items.push_back(parse_unary(false));
      node = std::move(e);
    } else {
      node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_expr(std::move(node));
    return node;
  }

  ExprPtr parse_primary() {
    const Token& t = cur();
    if (t.type == T::Name) {
      auto e = make(Expr::Kind::Literal);
      if (t.text == "true" || t.text == "True") {
        e->value = Value(true);
      } else if (t.text == "false" || t.text == "False") {
        e->value = Value(false);
      } else if (t.text == "none" || t.text == "None") {
        e->value = Value::none();
      } else {
        e->kind = Expr::Kind::Name;
        e->name = t.text;
      }
      next();
      return e;
    }
    if (t.type == T::String) {
      auto e = make(Expr::Kind::Literal);
      std::string s;
      while (cur().type == T::String) {  // adjacent literals concatenate, as in Python
        s += cur().text;
        next();
      }
      e->value = Value(std::move(s));
      return e;
    }
    if (t.type == T::Int || t.type == T::Float) {
      auto e = make(Expr::Kind::Literal);
      e->value = t.type == T::Int ? Value(t.int_value) : Value(t.float_value);
      next();
      return e;
    }
    if (is_op("(")) {
      next();
      ExprPtr e = parse_tuple(true, true);
      expect_op(")");
      return e;
    }
    if (is_op("[")) {
      auto e = make(Expr::Kind::List);
      next();
      while (!is_op("]")) {
        if (!e->items.empty()) {
          expect_op(",");
          if (is_op("]")) break;
        }
        e->items.push_back(parse_expression(true));
      }
      next();
      return e;
    }
    if (is_op("{")) {
      auto e = make(Expr::Kind::Dict);
      next();
      while (!is_op("}")) {
        if (!e->items.empty()) {
          expect_op(",");
          if (is_op("}")) break;
        }
        e->items.push_back(parse_expression(true));
        expect_op(":");
        e->items.push_back(parse_expression(true));
      }
      next();
      return e;
    }
    fail(fmt::format("unexpected {}", describe(t)));
  }

  ExprPtr parse_postfix(ExprPtr node) {
    while (true) {
      if (is_op(".") || is_op("[")) {
        node = parse_subscript(std::move(node));
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_filter_expr(ExprPtr node) {
    while (true) {
      if (is_op("|")) {
        node = parse_filter_chain(std::move(node));
      } else if (is_name("is")) {
        node = parse_test(std::move(node));
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr node) {
    DepthGuard guard(*this);
    if (skip_op(".")) {
      if (cur().type == T::Name) {
        auto e = make(Expr::Kind::GetAttr);
        e->name = cur().text;
        next();
        e->items.push_back(std::move(node));
        return e;
      }
      if (cur().type == T::Int) {
        auto e = make(Expr::Kind::GetItem);
        auto idx = make(Expr::Kind::Literal);
        idx->value = Value(cur().int_value);
        next();
        e->items.push_back(std::move(node));
        e->items.push_back(std::move(idx));
        return e;
      }
      fail(fmt::format("expected a name after '.', got {}", describe(cur())));
    }
    expect_op("[");
    auto e = make(Expr::Kind::GetItem);
    std::vector<ExprPtr> args;
    while (!is_op("]")) {
      if (!args.empty()) {
        expect_op(",");
        if (is_op("]")) break;
      }
      args.push_back(parse_subscribed());
    }
    next();
    if (args.empty()) fail("empty subscript");
    e->items.push_back(std::move(node));
    if (args.size() == 1) {
      e->items.push_back(std::move(args[0]));
    } else {
      auto tup = make(Expr::Kind::Tuple);
      tup->items = std::move(args);
      e->items.push_back(std::move(tup));
    }
    return e;
  }

  ExprPtr parse_subscribed() {
    ExprPtr first;
    if (!is_op(":")) {
      first = parse_expression(true);
      if (!is_op(":")) return first;
    }
    next();  // ':'
    auto s = make(Expr::Kind::Slice);
    s->items.push_back(std::move(first));
    if (is_op("]") || is_op(",") || is_op(":")) {
      s->items.push_back(nullptr);
    } else {
      s->items.push_back(parse_expression(true));
    }
    if (skip_op(":")) {
      if (is_op("]") || is_op(",")) {
        s->items.push_back(nullptr);
      } else {
        s->items.push_back(parse_expression(true));
      }
    } else {
      s->items.push_back(nullptr);
    }
    return s;
  }

  void parse_call_args(Expr& e) {
    expect_op("(");
    bool require_comma = false;
    while (!is_op(")")) {
      if (require_comma) {
        expect_op(",");
        if (is_op(")")) break;
      }
      if (is_op("*") || is_op("**")) fail("*args and **kwargs in calls are not supported");
      if (cur().type == T::Name && look().type == T::Op && look().text == "=") {
        Keyword kw;
        kw.name = cur().text;
        next();
        next();
        kw.value = parse_expression(true);
        e.kwargs.push_back(std::move(kw));
      } else {
        if (!e.kwargs.empty()) fail("positional argument follows keyword argument");
        e.items.push_back(parse_expression(true));
      }
      require_comma = true;
    }
    next();
  }

  ExprPtr parse_call(ExprPtr node) {
    DepthGuard guard(*this);
    auto e = make(Expr::Kind::Call);
    e->items.push_back(std::move(node));
    parse_call_args(*e);
    return e;
  }

  ExprPtr parse_filter_chain(ExprPtr node, bool start_inline = false) {
    while (is_op("|") || start_inline) {
      DepthGuard guard(*this);
      if (!start_inline) next();
      start_inline = false;
      auto e = make(Expr::Kind::Filter);
      e->name = expect_name();
      while (skip_op(".")) e->name += "." + expect_name();
      e->items.push_back(std::move(node));
      if (is_op("(")) parse_call_args(*e);
      node = std::move(e);
    }
    return node;
  }

  ExprPtr parse_test(ExprPtr node) {
    DepthGuard guard(*this);
    next();  // is
    const bool negated = skip_name("not");
    auto e = make(Expr::Kind::Test);
    e->name = expect_name();
    while (skip_op(".")) e->name += "." + expect_name();
    e->items.push_back(std::move(node));
    if (is_op("(")) {
      parse_call_args(*e);
    } else if ((cur().type == T::Name || cur().type == T::String || cur().type == T::Int ||
                cur().type == T::Float || is_op("(") || is_op("[") || is_op("{")) &&
               !is_name("else") && !is_name("or") && !is_name("and")) {
      if (is_name("is")) fail("you cannot chain multiple tests with is");
      e->items.push_back(parse_postfix(parse_primary()));
    }
    if (!negated) return e;
    auto n = make(Expr::Kind::Not);
    n->items.push_back(std::move(e));
    return n;
  }

  std::vector<Token> toks_;
  ParseOptions opt_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
};

}  // namespace

Body parse(std::string_view source, const ParseOptions& options) {
  return Parser(tokenize(source, options.lexer), options).parse_template();
}

}  // namespace vellum::jinja
