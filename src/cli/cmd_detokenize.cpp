// vellum detokenize -m FILE IDS...: prints the text that token ids spell.

#include <cstdio>

#include "cli/command.h"
#include "core/error.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace vellum::cli {
namespace {

struct DetokenizeOptions {
  std::string model;
  std::vector<std::string> ids;
  bool special = false;
};

const CommandRegistration registration("", [](CLI::App& parent) {
  auto opts = std::make_shared<DetokenizeOptions>();
  CLI::App* cmd = parent.add_subcommand("detokenize", "Print the text of token ids");
  cmd->add_option("-m,--model", opts->model, "GGUF file with a tokenizer.ggml.* vocabulary")->required();
  cmd->add_flag("--special", opts->special, "Print control tokens (BOS, EOS, ...) as their text");
  cmd->add_option("ids", opts->ids, "Token ids (separate arguments, or one space/comma-separated list)")->required();
  cmd->callback([opts] {
    const auto file = gguf::GgufFile::open(opts->model);
    const auto tok = tokenizer::Tokenizer::from_gguf(file);
    std::vector<int32_t> ids;
    for (const auto& arg : opts->ids) {
      std::string cur;
      auto flush = [&] {
        if (cur.empty()) return;
        size_t used = 0;
        long long v = 0;
        try {
          v = std::stoll(cur, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != cur.size() || v < INT32_MIN || v > INT32_MAX) throw_error("not a token id: '{}'", cur);
        ids.push_back(static_cast<int32_t>(v));
        cur.clear();
      };
      for (char c : arg) {
        if (c == ' ' || c == ',' || c == '\t' || c == '\n' || c == '[' || c == ']') {
          flush();
        } else {
          cur += c;
        }
      }
      flush();
    }
    const std::string text = tok.decode(ids, opts->special);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::printf("\n");
  });
});

}  // namespace
}  // namespace vellum::cli
