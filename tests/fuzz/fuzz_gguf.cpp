// libFuzzer target: the GGUF reader on arbitrary bytes. Any input must either parse or throw
// vellum::Error; a crash, sanitizer report, hang or runaway allocation is a bug. On success, every
// accessor used by `vellum gguf info` is exercised too.

#include <cstddef>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "gguf/gguf_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto f = vellum::gguf::GgufFile::parse({data, size}, "fuzz");
    size_t sum = 0;
    for (const auto& [key, value] : f.metadata().entries()) {
      sum += key.size() + value.to_display().size() + value.type_description().size();
      (void)value.to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    for (const auto& t : f.tensors()) {
      const auto bytes = f.tensor_data(t);
      if (!bytes.empty()) sum += bytes.front() + bytes.back();  // touch both ends: must be inside the input
      sum += t.elements();
    }
    (void)f.metadata().find_int("llama.block_count");
    return sum == 0x7fffffff ? 1 : 0;
  } catch (const vellum::Error&) {
    return 0;
  }
}
