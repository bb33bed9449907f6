#pragma once
// The real stories260K model, converted once per test process from ../shared/fixtures.

#include <filesystem>
#include <string>

#include "gguf/gguf_file.h"
#include "gguf/llama2c_import.h"
#include "temp_path.h"

namespace vellum::testing {

inline const std::filesystem::path kStoriesDir = std::filesystem::path(VELLUM_FIXTURES_DIR) / "stories260K";

// The converted file (removed at exit) and the model opened from it.
struct StoriesFixture {
  TempPath path{"vellum_stories_fixture", ".gguf"};
  gguf::GgufFile file;
  StoriesFixture() : file(convert(path.str())) {}

 private:
  static gguf::GgufFile convert(const std::string& out) {
    gguf::Llama2cConvertOptions o;
    o.model_path = (kStoriesDir / "stories260K.bin").string();
    o.tokenizer_path = (kStoriesDir / "tok512.bin").string();
    o.output_path = out;
    gguf::convert_llama2c(o);
    return gguf::GgufFile::open(out);
  }
};

inline const StoriesFixture& stories_fixture() {
  static const StoriesFixture f;
  return f;
}
inline const gguf::GgufFile& stories_model() { return stories_fixture().file; }
inline const std::string& stories_model_path() { return stories_fixture().path.str(); }

}  // namespace vellum::testing
