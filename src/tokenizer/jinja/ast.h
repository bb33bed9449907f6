#pragma once
// The syntax tree the parser builds and the evaluator walks. Two node families, each one struct
// with a kind tag and the few fields that kind uses (documented per kind) — simpler to walk than a
// class hierarchy, and the tree is immutable once parsed, so a Template can render concurrently.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/jinja/value.h"

namespace vellum::jinja {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Keyword {
  std::string name;
  ExprPtr value;
};

struct Expr {
  enum class Kind {
    Literal,   // value
    Name,      // name
    List,      // items
    Tuple,     // items
    Dict,      // items: key0, value0, key1, value1, …
    GetAttr,   // items[0] . name
    GetItem,   // items[0] [ items[1] ]
    Slice,     // items: start, stop, step (each may be null); only as GetItem's index
    Call,      // items[0] ( items[1..] , kwargs )
    Filter,    // items[0] | name ( items[1..], kwargs ); items[0] null inside {% filter %}
    Test,      // items[0] is name ( items[1..], kwargs )
    Not,       // not items[0]
    Neg,       // - items[0]
    Pos,       // + items[0]
    Binary,    // items[0] op items[1]; op one of + - * / // % ** ~ and or
    Compare,   // items[0] ops[0] items[1] ops[1] items[2] …; ops: == != < <= > >= in notin
    CondExpr,  // items[1] if items[0] else items[2] (items[2] may be null)
  };
  Kind kind = Kind::Literal;
  int line = 0;
  Value value;
  std::string name;
  std::vector<ExprPtr> items;
  std::vector<Keyword> kwargs;
  std::vector<std::string> ops;
};

struct MacroParam {
  std::string name;
  ExprPtr default_value;  // may be null
};

struct Stmt {
  enum class Kind {
    Text,         // text
    Output,       // {{ expr }}
    If,           // branches (cond, body); else_body
    For,          // targets in expr [if expr2] body else_body
    Set,          // targets = expr  |  targets[0].attr = expr (namespace)
    BlockSet,     // {% set targets[0] | filters %} body  (expr: filter chain with a null base, may be null)
    Macro,        // name(params) body
    CallBlock,    // {% call(params) expr %} body
    FilterBlock,  // {% filter expr %} body (expr: filter chain with a null base)
    Break,
    Continue,
    With,         // targets = values (items); body
    Scope,        // plain body: {% generation %}, {% block %}
  };
  Kind kind = Kind::Text;
  int line = 0;
  std::string text;
  std::string name;
  std::string attr;
  ExprPtr expr;
  ExprPtr expr2;
  std::vector<std::string> targets;
  bool tuple_target = false;
  std::vector<ExprPtr> values;
  std::vector<MacroParam> params;
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body body;
  Body else_body;
};

}  // namespace vellum::jinja
