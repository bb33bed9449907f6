#pragma once
// The few pieces of Unicode that Python's str methods need for chat templates: UTF-8 decoding
// (invalid bytes decode as U+FFFD rather than failing), whitespace as str.strip() sees it, simple
// case mapping (ASCII, Latin-1, Latin Extended-A, Greek, Cyrillic) and repr()'s printability.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vellum::jinja::unicode {

std::u32string decode(std::string_view s);
std::string encode(std::u32string_view s);
void append_utf8(std::string& out, char32_t cp);
bool is_ascii(std::string_view s);
size_t length(std::string_view s);  // in code points

bool is_space(char32_t cp);  // Python str.isspace()
bool is_printable(char32_t cp);  // Python str.isprintable(), approximately
bool is_alpha(char32_t cp);      // letters with a case mapping, plus ASCII letters
bool is_digit(char32_t cp);
bool is_upper(char32_t cp);
bool is_lower(char32_t cp);
char32_t to_upper(char32_t cp);
char32_t to_lower(char32_t cp);

std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string title(std::string_view s);       // Python str.title()
std::string capitalize(std::string_view s);  // Python str.capitalize()

}  // namespace vellum::jinja::unicode
