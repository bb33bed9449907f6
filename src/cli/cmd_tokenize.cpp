// vellum tokenize -m FILE [--no-bos] [--special] (TEXT | -f TEXTFILE): prints the token ids, space-separated.

#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/command.h"
#include "core/error.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace vellum::cli {
namespace {

struct TokenizeOptions {
  std::string model;
  std::string text;
  std::string file;
  bool no_bos = false;
  bool special = false;
  bool pieces = false;
};

const CommandRegistration registration("", [](CLI::App& parent) {
  auto opts = std::make_shared<TokenizeOptions>();
  CLI::App* cmd = parent.add_subcommand("tokenize", "Print the token ids of a text");
  cmd->add_option("-m,--model", opts->model, "GGUF file with a tokenizer.ggml.* vocabulary")->required();
  cmd->add_flag("--no-bos", opts->no_bos, "Do not add BOS/EOS even where the vocabulary asks for them");
  cmd->add_flag("--special", opts->special, "Parse special tokens written in the text (e.g. <|im_end|>)");
  cmd->add_flag("--pieces", opts->pieces, "Print id and piece per line instead");
  auto* text_opt = cmd->add_option("text", opts->text, "Text to tokenize");
  auto* file_opt = cmd->add_option("-f,--file", opts->file, "Read the text from a file instead");
  text_opt->excludes(file_opt);
  cmd->callback([opts, text_opt, file_opt] {
    if (text_opt->count() == 0 && file_opt->count() == 0) throw_error("give the text to tokenize, or --file");
    if (file_opt->count() > 0) {
      std::ifstream in(opts->file, std::ios::binary);
      if (!in) throw_error("{}: cannot open", opts->file);
      std::ostringstream ss;
      ss << in.rdbuf();
      opts->text = ss.str();
    }
    const auto file = gguf::GgufFile::open(opts->model);
    const auto tok = tokenizer::Tokenizer::from_gguf(file);
    const auto ids = tok.encode(opts->text, !opts->no_bos, opts->special);
    if (opts->pieces) {
      for (int32_t id : ids) std::printf("%d\t'%s'\n", id, tok.token_to_piece(id, true).c_str());
      return;
    }
    std::string line;
    for (int32_t id : ids) line += (line.empty() ? "" : " ") + std::to_string(id);
    std::printf("%s\n", line.c_str());
  });
});

}  // namespace
}  // namespace vellum::cli
