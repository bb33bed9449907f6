#pragma once
// Template text → tokens, with jinja2's whitespace rules as Hugging Face configures them:
// `{%-`/`-%}` (and the same for `{{ }}`, `{# #}`) strip all whitespace on that side;
// trim_blocks drops the first newline after a block or comment tag; lstrip_blocks drops spaces
// and tabs before a block or comment tag that starts its line (`{%+` opts out). `{% raw %}` bodies
// come out as one text token. Inside tags, `}}`/`%}` end the tag only outside brackets, as in jinja2.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vellum::jinja {

struct Token {
  enum class Type : uint8_t {
    Text,        // literal output
    VarBegin,    // {{
    VarEnd,      // }}
    BlockBegin,  // {%
    BlockEnd,    // %}
    Name,
    String,
    Int,
    Float,
    Op,  // operators and punctuation, in `text`
    End,
  };
  Type type = Type::End;
  std::string text;  // Text/Name/String/Op contents
  int64_t int_value = 0;
  double float_value = 0;
  int line = 1;
};

struct LexerOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
};

// Throws vellum::Error ("chat template line N: …") for unterminated tags, strings or comments.
std::vector<Token> tokenize(std::string_view source, const LexerOptions& options = {});

}  // namespace vellum::jinja
