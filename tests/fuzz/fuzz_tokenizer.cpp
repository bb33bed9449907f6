// libFuzzer target: encode arbitrary bytes (invalid UTF-8, huge repetitions, special-token text) with
// real vocabularies of each kind, decode the ids, stream them through the detokenizer.
// Checks: no crash or sanitizer report; decode(encode(x)) == x for valid UTF-8 x where the
// tokenizer is lossless (SentencePiece with byte fallback, byte-level BPE); every streamed delta is
// valid UTF-8. Vocabularies are loaded once from $VELLUM_FIXTURES_DIR, else from the fixtures
// directory next to the source tree (../shared/fixtures relative to the repository root).
//
// The first input byte picks the vocabulary and the mode (parse_special, add_bos).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "gguf/gguf_file.h"
#include "tokenizer/detokenizer.h"
#include "tokenizer/hf_tokenizer_import.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace {

using vellum::tokenizer::Tokenizer;

std::filesystem::path fixtures_dir() {
  if (const char* env = std::getenv("VELLUM_FIXTURES_DIR"); env != nullptr && *env != '\0') return env;
  // tests/fuzz/fuzz_tokenizer.cpp -> repository root -> ../shared/fixtures
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path().parent_path() / "shared" /
         "fixtures";
}

std::vector<Tokenizer>& tokenizers() {
  static std::vector<Tokenizer> all = [] {
    std::vector<Tokenizer> out;
    const auto dir = fixtures_dir() / "tokenizers" / "ggml-vocab";
    for (const char* name : {"llama-spm", "gpt-2", "deepseek-llm", "falcon", "bert-bge", "starcoder"}) {
      const auto path = dir / (std::string("ggml-vocab-") + name + ".gguf");
      if (!std::filesystem::exists(path)) {
        std::fprintf(stderr, "fuzz_tokenizer: missing fixture %s (set VELLUM_FIXTURES_DIR)\n", path.c_str());
        std::abort();
      }
      out.push_back(Tokenizer::from_gguf(vellum::gguf::GgufFile::open(path.string())));
    }
    // Qwen3 through the tokenizer.json importer: NFC normalization, user-defined and control tokens.
    const auto hf = fixtures_dir() / "tokenizers" / "hf" / "qwen3";
    if (!std::filesystem::exists(hf / "tokenizer.json")) {
      std::fprintf(stderr, "fuzz_tokenizer: missing fixture %s\n", (hf / "tokenizer.json").c_str());
      std::abort();
    }
    out.push_back(Tokenizer::from_metadata(
        vellum::tokenizer::import_hf_tokenizer_files(hf / "tokenizer.json", hf / "tokenizer_config.json")));
    return out;
  }();
  return all;
}

// WordPiece normalizes (lowercase, accents); a BPE vocabulary may lack some byte tokens (Falcon has
// none for most control bytes), and such bytes are dropped, as Hugging Face drops them.
// SentencePiece writes spaces as U+2581, so a literal U+2581 in the text decodes as a space.
// NFC-normalizing vocabularies (Qwen) only round-trip text that is already NFC.
bool lossless(const Tokenizer& t, const std::string& text) {
  if (t.vocab().type() == vellum::tokenizer::VocabType::Wpm) return false;
  if (t.vocab().normalize_nfc() && vellum::tokenizer::unicode::nfc(text) != text) return false;
  if (t.vocab().type() == vellum::tokenizer::VocabType::Spm && text.find("\xe2\x96\x81") != std::string::npos) {
    return false;
  }
  for (char c : text) {
    if (t.vocab().byte_token(static_cast<uint8_t>(c)) < 0) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& toks = tokenizers();
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const Tokenizer& tok = toks[mode % toks.size()];
  const bool parse_special = (mode >> 4) & 1;
  const bool add_bos = (mode >> 5) & 1;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);

  std::vector<int32_t> ids;
  try {
    ids = tok.encode(text, add_bos, parse_special);
  } catch (const vellum::Error& e) {
    std::fprintf(stderr, "encode threw: %s\n", e.what());
    std::abort();  // encoding never fails on any input
  }
  for (int32_t id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= tok.vocab_size()) std::abort();
  }
  const std::string decoded = tok.decode(ids, /*special=*/parse_special);
  if (lossless(tok, text) && vellum::tokenizer::unicode::is_valid_utf8(text)) {
    if (!parse_special) {
      // Without parse_special, control-token text stays plain text, so the round trip is exact.
      if (decoded != text) {
        std::fprintf(stderr, "round trip failed: %zu bytes in, %zu bytes out\n", text.size(), decoded.size());
        std::abort();
      }
    }
  }
  vellum::tokenizer::StreamingDetokenizer detok(tok, true, parse_special);
  std::string streamed;
  for (int32_t id : ids) {
    const std::string d = detok.push(id);
    if (!vellum::tokenizer::unicode::is_valid_utf8(d)) std::abort();
    streamed += d;
  }
  streamed += detok.flush();
  if (streamed != vellum::tokenizer::unicode::sanitize_utf8(decoded) && tok.vocab().type() != vellum::tokenizer::VocabType::Wpm) {
    std::fprintf(stderr, "streamed text differs from decode\n");
    std::abort();
  }
  return 0;
}
