// vellum gguf convert-tokenizer tokenizer.json [tokenizer_config.json] OUT.gguf: writes a Hugging Face
// tokenizer as GGUF tokenizer.ggml.* metadata (and tokenizer.chat_template), as llama.cpp's converter would.

#include <cstdio>

#include "cli/command.h"
#include "core/error.h"
#include "tokenizer/hf_tokenizer_import.h"

namespace vellum::cli {
namespace {

const CommandRegistration registration("gguf", [](CLI::App& parent) {
  auto files = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = parent.add_subcommand("convert-tokenizer",
                                        "Convert a Hugging Face tokenizer.json (+ tokenizer_config.json) to GGUF");
  cmd->add_option("files", *files, "tokenizer.json [tokenizer_config.json] OUT.gguf")->required()->expected(2, 3);
  cmd->callback([files] {
    if (files->size() < 2 || files->size() > 3) throw_error("expected tokenizer.json [tokenizer_config.json] OUT.gguf");
    const std::string out = files->back();
    std::optional<std::filesystem::path> config;
    if (files->size() == 3) config = (*files)[1];
    const auto md = tokenizer::import_hf_tokenizer_files((*files)[0], config);
    tokenizer::write_tokenizer_gguf(md, out);
    std::printf("wrote %s: %zu tokens, %zu merges, pre-tokenizer %s%s\n", out.c_str(),
                md.at("tokenizer.ggml.tokens").as_array().size(), md.at("tokenizer.ggml.merges").as_array().size(),
                md.get<std::string>("tokenizer.ggml.pre").c_str(),
                md.contains("tokenizer.chat_template") ? ", chat template" : "");
  });
});

}  // namespace
}  // namespace vellum::cli
