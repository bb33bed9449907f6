#include "tokenizer/jinja/lexer.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "tokenizer/jinja/unicode.h"

namespace vellum::jinja {

namespace {

// Length in bytes of the whitespace code point at s[pos], or 0 when it is not whitespace.
size_t space_at(std::string_view s, size_t pos) {
  const auto c = static_cast<unsigned char>(s[pos]);
  if (c < 0x80) return unicode::is_space(c) ? 1 : 0;
  size_t n = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
  if (pos + n > s.size()) return 0;
  const auto cps = unicode::decode(s.substr(pos, n));
  return (cps.size() == 1 && unicode::is_space(cps[0])) ? n : 0;
}

size_t skip_space(std::string_view s, size_t pos) {
  while (pos < s.size()) {
    const size_t n = space_at(s, pos);
    if (n == 0) break;
    pos += n;
  }
  return pos;
}

// Python's str.rstrip() (Unicode whitespace).
std::string rstrip(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    const auto c = static_cast<unsigned char>(s[end - 1]);
    if (c < 0x80) {
      if (!unicode::is_space(c)) break;
      --end;
      continue;
    }
    size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80 && end - start < 4) --start;
    if (space_at(s, start) == end - start) {
      end = start;
    } else {
      break;
    }
  }
  return std::string(s.substr(0, end));
}

// The whole of s (non-empty) is whitespace other than newlines (regex `\s+` on a line's tail).
bool all_space(std::string_view s) {
  if (s.empty()) return false;
  size_t pos = 0;
  while (pos < s.size()) {
    const size_t n = space_at(s, pos);
    if (n == 0) return false;
    pos += n;
  }
  return true;
}

class Lexer {
 public:
  Lexer(std::string_view src, const LexerOptions& o) : src_(src), opt_(o) {}

  std::vector<Token> run() {
    size_t pos = 0;
    bool line_starting = true;
    while (pos < src_.size()) {
      const size_t start = find_tag(pos);
      if (start == std::string_view::npos) {
        emit_text(std::string(src_.substr(pos)));
        break;
      }
      const char kind = src_[start + 1];  // '{', '%' or '#'
      const char modifier = start + 2 < src_.size() ? src_[start + 2] : '\0';
      std::string text(src_.substr(pos, start - pos));
      const bool raw = kind == '%' && is_raw_begin(start);
      if (modifier == '-') {
        text = rstrip(text);
      } else if (opt_.lstrip_blocks && kind != '{' && modifier != '+') {
        text = lstrip_line(text, line_starting);
      }
      emit_text(std::move(text));
      line_ += count_lines(pos, start);
      size_t end = 0;
      if (raw) {
        end = lex_raw(start, line_starting);
      } else if (kind == '#') {
        end = lex_comment(start);
      } else {
        end = lex_tag(start, kind);
      }
      line_starting = end > 0 && src_[end - 1] == '\n';
      pos = end;
    }
    Token t;
    t.type = Token::Type::End;
    t.line = line_;
    tokens_.push_back(std::move(t));
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw_error("chat template line {}: {}", line_, what); }

  int count_lines(size_t from, size_t to) const {
    int n = 0;
    for (size_t i = from; i < to && i < src_.size(); ++i) n += src_[i] == '\n';
    return n;
  }

  size_t find_tag(size_t pos) const {
    while (true) {
      const size_t p = src_.find('{', pos);
      if (p == std::string_view::npos || p + 1 >= src_.size()) return std::string_view::npos;
      const char c = src_[p + 1];
      if (c == '{' || c == '%' || c == '#') return p;
      pos = p + 1;
    }
  }

  std::string lstrip_line(const std::string& text, bool line_starting) const {
    const size_t nl = text.rfind('\n');
    const size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
    if ((l_pos > 0 || line_starting) && all_space(std::string_view(text).substr(l_pos))) return text.substr(0, l_pos);
    return text;
  }

  void emit_text(std::string text) {
    if (text.empty()) return;
    Token t;
    t.type = Token::Type::Text;
    t.text = std::move(text);
    t.line = line_;
    tokens_.push_back(std::move(t));
  }

  void emit(Token::Type type, std::string text = {}) {
    Token t;
    t.type = type;
    t.text = std::move(text);
    t.line = line_;
    tokens_.push_back(std::move(t));
  }

  // After a tag's closing delimiter ending at `pos`: `-` strips all following whitespace,
  // trim_blocks (block and comment tags, not `+%}`) drops one newline.
  size_t after_close(size_t pos, bool strip, bool trim) {
    if (strip) {
      const size_t e = skip_space(src_, pos);
      line_ += count_lines(pos, e);
      return e;
    }
    if (trim && pos < src_.size() && src_[pos] == '\n') {
      ++line_;
      return pos + 1;
    }
    return pos;
  }

  // `{%` [-+] ws "raw" ws [-]%}  →  position after it, or npos.
  // jinja2 accepts `+%}` after endraw but not after raw.
  size_t match_keyword_tag(size_t start, const char* word, bool* strip_after) const {
    const bool allow_plus = std::strcmp(word, "endraw") == 0;
    size_t p = start + 2;
    if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) ++p;
    p = skip_space(src_, p);
    const size_t wl = std::strlen(word);
    if (src_.substr(p, wl) != word) return std::string_view::npos;
    p += wl;
    p = skip_space(src_, p);
    bool strip = false;
    if (p < src_.size() && (src_[p] == '-' || (allow_plus && src_[p] == '+'))) {
      strip = src_[p] == '-';
      ++p;
    }
    if (src_.substr(p, 2) != "%}") return std::string_view::npos;
    if (strip_after) *strip_after = strip;
    return p + 2;
  }

  bool is_raw_begin(size_t start) const {
    return match_keyword_tag(start, "raw", nullptr) != std::string_view::npos;
  }

  size_t lex_raw(size_t start, bool /*line_starting*/) {
    bool strip = false;
    size_t pos = match_keyword_tag(start, "raw", &strip);
    if (strip) pos = skip_space(src_, pos);
    const bool content_line_starting = pos > 0 && src_[pos - 1] == '\n';
    size_t search = pos;
    while (true) {
      const size_t p = src_.find("{%", search);
      if (p == std::string_view::npos) fail("missing {% endraw %}");
      bool strip_after = false;
      const size_t end = match_keyword_tag(p, "endraw", &strip_after);
      if (end == std::string_view::npos) {
        search = p + 2;
        continue;
      }
      std::string text(src_.substr(pos, p - pos));
      const char modifier = src_[p + 2];
      if (modifier == '-') {
        text = rstrip(text);
      } else if (opt_.lstrip_blocks && modifier != '+') {
        text = lstrip_line(text, content_line_starting);
      }
      line_ += count_lines(pos, end);
      emit_text(std::move(text));
      const bool plus = src_[end - 3] == '+';
      return after_close(end, strip_after, opt_.trim_blocks && !plus);
    }
  }

  size_t lex_comment(size_t start) {
    const size_t p = src_.find("#}", start + 2);
    if (p == std::string_view::npos) fail("missing end of comment tag");
    line_ += count_lines(start, p);
    const bool strip = p > start + 2 && src_[p - 1] == '-';
    return after_close(p + 2, strip, opt_.trim_blocks);
  }

  size_t lex_tag(size_t start, char kind) {
    const bool block = kind == '%';
    emit(block ? Token::Type::BlockBegin : Token::Type::VarBegin);
    size_t pos = start + 2;
    if (pos < src_.size() && (src_[pos] == '-' || src_[pos] == '+')) ++pos;
    const char close = block ? '%' : '}';
    int depth = 0;
    while (true) {
      while (pos < src_.size()) {
        const size_t n = space_at(src_, pos);
        if (n == 0) break;
        if (src_[pos] == '\n') ++line_;
        pos += n;
      }
      if (pos >= src_.size()) fail(block ? "missing %} to close a block tag" : "missing }} to close an expression");
      const char c = src_[pos];
      if (depth == 0) {
        const bool modified = (c == '-' || c == '+') && pos + 2 < src_.size() && src_[pos + 1] == close &&
                              src_[pos + 2] == '}';
        if (modified) {
          emit(block ? Token::Type::BlockEnd : Token::Type::VarEnd);
          return after_close(pos + 3, c == '-', block && opt_.trim_blocks && c != '+');
        }
        if (c == close && pos + 1 < src_.size() && src_[pos + 1] == '}') {
          emit(block ? Token::Type::BlockEnd : Token::Type::VarEnd);
          return after_close(pos + 2, false, block && opt_.trim_blocks);
        }
      }
      pos = lex_token(pos, depth);
    }
  }

  size_t lex_token(size_t pos, int& depth) {
    const char c = src_[pos];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t e = pos + 1;
      while (e < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[e])) || src_[e] == '_')) ++e;
      emit(Token::Type::Name, std::string(src_.substr(pos, e - pos)));
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) return lex_number(pos);
    if (c == '\'' || c == '"') return lex_string(pos);
    static const char* const two[] = {"//", "**", "==", "!=", ">=", "<="};
    for (const char* op : two) {
      if (src_.substr(pos, 2) == op) {
        emit(Token::Type::Op, op);
        return pos + 2;
      }
    }
    if (std::strchr("+-/*%~[](){}<>=.:|,", c) != nullptr && c != '\0') {
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') {
        if (depth == 0) fail(fmt::format("unexpected '{}'", c));
        --depth;
      }
      emit(Token::Type::Op, std::string(1, c));
      return pos + 1;
    }
    fail(fmt::format("unexpected character '{}'", c));
  }

  size_t digits_with_underscores(size_t pos) const {
    // (\d+_)*\d+
    size_t e = pos;
    while (true) {
      const size_t d0 = e;
      while (e < src_.size() && std::isdigit(static_cast<unsigned char>(src_[e]))) ++e;
      if (e == d0) return d0 == pos ? pos : d0 - 1;  // trailing '_' is not part of the number
      if (e < src_.size() && src_[e] == '_' && e + 1 < src_.size() &&
          std::isdigit(static_cast<unsigned char>(src_[e + 1]))) {
        ++e;
        continue;
      }
      return e;
    }
  }

  size_t lex_number(size_t pos) {
    size_t e = digits_with_underscores(pos);
    bool is_float = false;
    if (e + 1 < src_.size() && src_[e] == '.' && std::isdigit(static_cast<unsigned char>(src_[e + 1]))) {
      e = digits_with_underscores(e + 1);
      is_float = true;
    }
    if (e < src_.size() && (src_[e] == 'e' || src_[e] == 'E')) {
      size_t x = e + 1;
      if (x < src_.size() && (src_[x] == '+' || src_[x] == '-')) ++x;
      if (x < src_.size() && std::isdigit(static_cast<unsigned char>(src_[x]))) {
        e = digits_with_underscores(x);
        is_float = true;
      }
    }
    std::string text;
    for (size_t i = pos; i < e; ++i) {
      if (src_[i] != '_') text.push_back(src_[i]);
    }
    Token t;
    t.line = line_;
    t.text = text;
    if (is_float) {
      t.type = Token::Type::Float;
      t.float_value = std::strtod(text.c_str(), nullptr);
    } else {
      t.type = Token::Type::Int;
      errno = 0;
      const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
      if (errno == ERANGE || v > static_cast<unsigned long long>(INT64_MAX)) fail("integer literal too large");
      t.int_value = static_cast<int64_t>(v);
    }
    tokens_.push_back(std::move(t));
    return e;
  }

  static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // Python string-literal escapes, as jinja2 decodes them.
  size_t lex_string(size_t pos) {
    const char quote = src_[pos];
    std::string out;
    size_t i = pos + 1;
    const int start_line = line_;
    while (true) {
      if (i >= src_.size()) {
        line_ = start_line;
        fail("unterminated string literal");
      }
      const char c = src_[i];
      if (c == quote) break;
      if (c == '\n') ++line_;
      if (c != '\\') {
        out.push_back(c);
        ++i;
        continue;
      }
      if (i + 1 >= src_.size()) {  // a trailing backslash: unterminated, reported above
        i = src_.size();
        continue;
      }
      const char e = src_[i + 1];
      i += 2;
      switch (e) {
        case 'n':
          out.push_back('\n');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case '\\':
          out.push_back('\\');
          break;
        case '\'':
          out.push_back('\'');
          break;
        case '"':
          out.push_back('"');
          break;
        case 'a':
          out.push_back('\a');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'v':
          out.push_back('\v');
          break;
        case '\n':
          ++line_;
          break;  // line continuation
        case 'x':
        case 'u':
        case 'U': {
          const int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          char32_t cp = 0;
          for (int k = 0; k < n; ++k) {
            const int h = i < src_.size() ? hex_value(src_[i]) : -1;
            if (h < 0) fail("truncated \\x/\\u escape in string literal");
            cp = cp * 16 + static_cast<char32_t>(h);
            ++i;
          }
          if (cp > 0x10FFFF) fail("invalid \\U escape in string literal");
          unicode::append_utf8(out, cp);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            char32_t cp = static_cast<char32_t>(e - '0');
            for (int k = 0; k < 2 && i < src_.size() && src_[i] >= '0' && src_[i] <= '7'; ++k, ++i) {
              cp = cp * 8 + static_cast<char32_t>(src_[i] - '0');
            }
            unicode::append_utf8(out, cp);
          } else {
            out.push_back('\\');
            out.push_back(e);
          }
      }
    }
    Token t;
    t.type = Token::Type::String;
    t.text = std::move(out);
    t.line = start_line;
    tokens_.push_back(std::move(t));
    return i + 1;
  }

  std::string_view src_;
  LexerOptions opt_;
  std::vector<Token> tokens_;
  int line_ = 1;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source, const LexerOptions& options) {
  // jinja2 normalizes \r\n and \r to \n and, without keep_trailing_newline (HF leaves it off),
  // drops one trailing newline before lexing.
  std::string normalized;
  normalized.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      normalized.push_back('\n');
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      normalized.push_back(source[i]);
    }
  }
  if (!normalized.empty() && normalized.back() == '\n') normalized.pop_back();
  return Lexer(normalized, options).run();
}

}  // namespace vellum::jinja
