#pragma once
// Tokens → syntax tree, following jinja2's grammar and operator precedence (filters and tests bind
// tighter than arithmetic; `**` is left-associative; `a if b` without else yields Undefined).
// Malformed input throws vellum::Error naming the line; nesting is bounded so hostile input cannot
// exhaust the stack.

#include <string_view>

#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/lexer.h"

namespace vellum::jinja {

struct ParseOptions {
  LexerOptions lexer;
  int max_nesting = 200;  // nested expressions + statements
};

Body parse(std::string_view source, const ParseOptions& options = {});

}  // namespace vellum::jinja
