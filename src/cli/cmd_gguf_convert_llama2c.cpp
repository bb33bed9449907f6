// vellum gguf convert-llama2c MODEL.bin TOKENIZER.bin OUT.gguf [--outtype F32|F16|BF16|Q8_0…]

#include <cstdio>

#include "cli/command.h"
#include "core/error.h"
#include "gguf/llama2c_import.h"

namespace vellum::cli {
namespace {

const CommandRegistration registration("gguf", [](CLI::App& parent) {
  auto opts = std::make_shared<gguf::Llama2cConvertOptions>();
  auto type = std::make_shared<std::string>("F32");
  CLI::App* cmd = parent.add_subcommand("convert-llama2c", "Convert a llama2.c checkpoint and tokenizer to GGUF");
  cmd->add_option("model", opts->model_path, "llama2.c checkpoint (legacy export)")->required();
  cmd->add_option("tokenizer", opts->tokenizer_path, "llama2.c tokenizer.bin")->required();
  cmd->add_option("output", opts->output_path, "GGUF file to write")->required();
  cmd->add_option("--outtype", *type, "Type of the 2-D weights (F32, F16, BF16, Q8_0, …); norms stay F32");
  cmd->add_option("--name", opts->name, "general.name (default: the model file's name)");
  cmd->callback([opts, type] {
    const auto t = parse_tensor_type(*type);
    if (!t) throw_error("unknown --outtype '{}'", *type);
    opts->matrix_type = *t;
    const auto c = gguf::convert_llama2c(*opts);
    std::printf("wrote %s: llama, dim %d, %d layers, %d heads (%d kv), ffn %d, vocab %d, context %d, %s classifier\n",
                opts->output_path.c_str(), c.dim, c.n_layers, c.n_heads, c.n_kv_heads, c.hidden_dim, c.vocab_size,
                c.seq_len, c.shared_classifier ? "shared" : "separate");
  });
});

}  // namespace
}  // namespace vellum::cli
