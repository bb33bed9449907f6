// vellum template (-m FILE | --template FILE) --messages JSON [--tools JSON] [--no-generation-prompt]
//                 [--bos S --eos S] [--context JSON]: prints a conversation rendered through a chat template.
// JSON arguments are inline JSON or @file.

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/command.h"
#include "core/error.h"
#include "gguf/gguf_file.h"
#include "tokenizer/chat_template.h"

namespace vellum::cli {
namespace {

struct TemplateOptions {
  std::string model;
  std::string template_file;
  std::string messages;
  std::string tools;
  std::string context;
  bool no_generation_prompt = false;
  std::string bos;
  std::string eos;
  bool bos_set = false;
  bool eos_set = false;
};

std::string read_text_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw_error("cannot read {}", path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

nlohmann::ordered_json parse_json_arg(const std::string& what, const std::string& arg) {
  const std::string text = (!arg.empty() && arg[0] == '@') ? read_text_file(arg.substr(1)) : arg;
  try {
    return nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw_error("{}: invalid JSON: {}", what, e.what());
  }
}

// The token text at metadata key `id_key` (an index into tokenizer.ggml.tokens), or "" if absent.
std::string special_token(const gguf::Metadata& md, const char* id_key) {
  const auto id = md.find_int(id_key);
  const gguf::Value* tokens = md.find("tokenizer.ggml.tokens");
  if (!id || !tokens) return "";
  const auto& items = tokens->as_array();
  if (*id < 0 || static_cast<size_t>(*id) >= items.size()) {
    throw_error("{} = {} is outside the vocabulary ({} tokens)", id_key, *id, items.size());
  }
  return items[static_cast<size_t>(*id)].as_string();
}

void run(const TemplateOptions& o) {
  std::string source, bos, eos;
  if (!o.model.empty()) {
    const auto f = gguf::GgufFile::open(o.model);
    const auto& md = f.metadata();
    if (!md.contains("tokenizer.chat_template")) throw_error("{} has no tokenizer.chat_template", o.model);
    source = md.get<std::string>("tokenizer.chat_template");
    bos = special_token(md, "tokenizer.ggml.bos_token_id");
    eos = special_token(md, "tokenizer.ggml.eos_token_id");
  } else {
    source = read_text_file(o.template_file);
  }
  if (o.bos_set) bos = o.bos;
  if (o.eos_set) eos = o.eos;
  const auto messages = parse_json_arg("--messages", o.messages);
  const auto tools = o.tools.empty() ? nlohmann::ordered_json() : parse_json_arg("--tools", o.tools);
  const auto extra = o.context.empty() ? nlohmann::ordered_json::object() : parse_json_arg("--context", o.context);
  const tokenizer::ChatTemplate tmpl(source);
  const std::string out = tmpl.render(messages, tools, !o.no_generation_prompt, bos, eos, extra);
  std::fwrite(out.data(), 1, out.size(), stdout);
}

const CommandRegistration registration("", [](CLI::App& parent) {
  auto opts = std::make_shared<TemplateOptions>();
  CLI::App* cmd = parent.add_subcommand("template", "Render a conversation through a chat template");
  auto* model = cmd->add_option("-m,--model", opts->model, "GGUF file whose tokenizer.chat_template to use");
  auto* file = cmd->add_option("--template", opts->template_file, "Jinja chat template file");
  model->excludes(file);
  cmd->add_option("--messages", opts->messages, "Messages: a JSON array, inline or @file")->required();
  cmd->add_option("--tools", opts->tools, "Tools: a JSON array, inline or @file");
  cmd->add_option("--context", opts->context, "More template variables: a JSON object, inline or @file");
  cmd->add_flag("--no-generation-prompt", opts->no_generation_prompt, "Render without add_generation_prompt");
  cmd->add_option("--bos", opts->bos, "BOS token text (default: from the GGUF, else empty)");
  cmd->add_option("--eos", opts->eos, "EOS token text (default: from the GGUF, else empty)");
  cmd->callback([opts, cmd] {
    opts->bos_set = cmd->count("--bos") > 0;
    opts->eos_set = cmd->count("--eos") > 0;
    if (opts->model.empty() && opts->template_file.empty()) throw_error("template: give -m FILE or --template FILE");
    run(*opts);
  });
});

}  // namespace
}  // namespace vellum::cli
