#pragma once
// Hugging Face tokenizer.json (+ tokenizer_config.json) -> GGUF tokenizer.ggml.* metadata, written the
// way llama.cpp's convert_hf_to_gguf.py writes it for byte-level BPE models: token texts and types
// (added tokens CONTROL when special or special-looking, else USER_DEFINED; holes as UNUSED
// "[PAD<id>]"), merges as "left right" strings, the pre-tokenizer name recognised from the
// pre_tokenizer's regexes (llama-bpe, qwen2, gpt-2, ...), special token ids and add_bos/add_eos from
// the config (or the post-processor template), and tokenizer.chat_template.
//
// Limitations: only byte-level BPE tokenizer.json files (model.type "BPE" with a ByteLevel
// pre-tokenizer or decoder); normalizers (e.g. Qwen's NFC) are not recorded, as in llama.cpp.

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "gguf/metadata.h"

namespace vellum::tokenizer {

// Metadata for a parsed tokenizer.json; `config` is tokenizer_config.json when there is one.
gguf::Metadata import_hf_tokenizer(const nlohmann::json& tokenizer, const nlohmann::json* config);
// Reads the files (errors name the file).
gguf::Metadata import_hf_tokenizer_files(const std::filesystem::path& tokenizer_json,
                                         const std::optional<std::filesystem::path>& tokenizer_config);
// The tokenizer.ggml.pre name whose regexes equal what `pre_tokenizer` (a tokenizer.json
// "pre_tokenizer" object) applies; throws vellum::Error when none does.
std::string detect_pre_tokenizer(const nlohmann::json& pre_tokenizer);
// Writes a tensor-less GGUF holding `metadata`.
void write_tokenizer_gguf(const gguf::Metadata& metadata, const std::filesystem::path& out);

}  // namespace vellum::tokenizer
