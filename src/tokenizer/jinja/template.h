#pragma once
// A parsed Jinja template: parse once, render many times (concurrently: rendering does not touch
// the template). Parsing checks what jinja2 checks at compile time: syntax, and filters/tests that
// exist (outside `if` blocks, where jinja2 defers the check to run time).
//
// Errors: vellum::Error with "chat template line N: …" for syntax and evaluation errors;
// TemplateRaised (a vellum::Error) carrying the template's own message for raise_exception().

#include <nlohmann/json.hpp>
#include <string>

#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/evaluator.h"
#include "tokenizer/jinja/parser.h"

namespace vellum::jinja {

class Template {
 public:
  explicit Template(std::string_view source, const ParseOptions& options = {});

  // `context` maps variable names to values (a JSON object); its key order is kept.
  std::string render(const nlohmann::ordered_json& context, const RenderOptions& options = {}) const;
  std::string render(const Dict& context, const RenderOptions& options = {}) const;

 private:
  Body body_;
};

}  // namespace vellum::jinja
