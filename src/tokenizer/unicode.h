#pragma once
// UTF-8 and Unicode helpers for the tokenizers: strict UTF-8 decoding (invalid bytes are reported,
// never guessed), GPT-2's byte <-> printable-code-point mapping used by byte-level BPE, and the few
// character properties that the WordPiece normalizer needs (the pre-tokenizer regexes get theirs from
// PCRE2). Property tables come from tools/gen_unicode_data.py.

#include <cstdint>
#include <string>
#include <string_view>

namespace vellum::tokenizer::unicode {

constexpr uint32_t kReplacement = 0xFFFD;

// Length of the UTF-8 sequence that `lead` starts, judged from its high bits alone (1 for stray
// continuation bytes), as llama.cpp's tokenizers split text into symbols.
inline size_t sequence_length(uint8_t lead) {
  static constexpr uint8_t kLengths[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLengths[lead >> 4];
}

// Decodes one code point at `pos`. On success stores it, advances `pos` past it and returns true; on an
// invalid, overlong, surrogate or truncated sequence advances `pos` by one byte and returns false.
bool decode(std::string_view text, size_t& pos, uint32_t& cp);
void append_utf8(std::string& out, uint32_t cp);  // U+FFFD for a value beyond U+10FFFF
std::string to_utf8(uint32_t cp);
bool is_valid_utf8(std::string_view text);
// Number of bytes at the end of `text` that form the start of a possibly valid but unfinished
// sequence (0..3): what a streaming decoder must hold back until more bytes arrive.
size_t incomplete_suffix(std::string_view text);
// Replaces each invalid byte with U+FFFD.
std::string sanitize_utf8(std::string_view text);

// GPT-2 byte-level mapping: every byte has a printable code point ("Ġ" for ' ').
const std::string& byte_to_unicode(uint8_t byte);
// The byte a code point stands for, or -1 when it is not one of the 256 mapped code points.
int unicode_to_byte(uint32_t cp);

// Character properties.
bool is_whitespace(uint32_t cp);   // Unicode White_Space
bool is_letter(uint32_t cp);       // L*
bool is_number(uint32_t cp);       // N*
bool is_mark(uint32_t cp);         // M*
bool is_nonspacing_mark(uint32_t cp);  // Mn
bool is_punctuation(uint32_t cp);  // P*
bool is_symbol(uint32_t cp);       // S*
bool is_other(uint32_t cp);        // C* (control, format, private use, surrogate, unassigned)
bool is_cjk(uint32_t cp);          // the CJK ranges BERT isolates as single-character words
uint32_t nfd_first(uint32_t cp);   // first code point of the canonical decomposition (itself if none)
uint32_t to_lower(uint32_t cp);    // simple lowercase mapping (first code point of it)

// Unicode Normalization Form C (canonical decomposition, reordering, canonical composition), as
// Hugging Face's NFC normalizer applies it. Invalid UTF-8 bytes are kept as they are. Text with
// nothing to normalize (all ASCII, most CJK) is returned unchanged cheaply.
std::string nfc(std::string_view text);
uint8_t combining_class(uint32_t cp);

}  // namespace vellum::tokenizer::unicode
