#pragma once
// The real stories260K model, converted once per test process from ../shared/fixtures.

#include <filesystem>
#include <string>
#include <unistd.h>

#include "gguf/gguf_file.h"
#include "gguf/llama2c_import.h"

namespace vellum::testing {

inline const std::filesystem::path kStoriesDir = std::filesystem::path(VELLUM_FIXTURES_DIR) / "stories260K";

inline const gguf::GgufFile& stories_model() {
  static const gguf::GgufFile file = [] {
    const std::string out = (std::filesystem::temp_directory_path() /
                             ("vellum_stories_fixture_" + std::to_string(::getpid()) + ".gguf")).string();
    gguf::Llama2cConvertOptions o;
    o.model_path = (kStoriesDir / "stories260K.bin").string();
    o.tokenizer_path = (kStoriesDir / "tok512.bin").string();
    o.output_path = out;
    gguf::convert_llama2c(o);
    return gguf::GgufFile::open(out);
  }();
  return file;
}

}  // namespace vellum::testing
