// Generates a continuation of a prompt with the public vellum API only (include/vellum/*.h):
//   vellum-generate -m model.gguf -p "Once upon a time" [-n 64] [--temp 0] [--seed 1] [-t 2]
// Prints the prompt and the generated text to stdout, usage to stderr.

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "vellum/vellum.h"

namespace {

void usage() {
  std::fprintf(stderr,
               "usage: vellum-generate -m MODEL.gguf -p PROMPT [-n TOKENS] [--temp T] [--seed S] [-t THREADS]\n");
}

}  // namespace

int main(int argc, char** argv) {
  vellum::ModelOptions model_options;
  vellum::GenerateOptions options;
  options.max_tokens = 64;
  options.temperature = 0;
  std::string prompt;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (i + 1 >= argc) {
        usage();
        return 2;
      }
      const std::string value = argv[++i];
      if (arg == "-m") model_options.model = value;
      else if (arg == "-p") prompt = value;
      else if (arg == "-n") options.max_tokens = static_cast<uint32_t>(std::stoul(value));
      else if (arg == "--temp") options.temperature = std::stof(value);
      else if (arg == "--seed") options.seed = std::stoull(value);
      else if (arg == "-t") model_options.threads = static_cast<unsigned>(std::stoul(value));
      else {
        usage();
        return 2;
      }
    }
    if (model_options.model.empty()) {
      usage();
      return 2;
    }
    model_options.max_num_seqs = 1;
    const auto model = vellum::Model::open(model_options);
    std::fprintf(stderr, "%s\n", model->summary().c_str());
    vellum::Stream stream = model->generate(prompt, options);
    std::printf("%s", prompt.c_str());
    while (auto event = stream.next()) {
      std::printf("%s", event->text.c_str());
      std::fflush(stdout);
      if (event->finish == vellum::FinishReason::Error) {
        std::fprintf(stderr, "error: %s\n", event->error.c_str());
        return 1;
      }
      if (event->finish != vellum::FinishReason::None) {
        std::fprintf(stderr, "finish: %s; prompt %u tokens, completion %u tokens\n", vellum::to_string(event->finish),
                     event->prompt_tokens, event->completion_tokens);
      }
    }
    std::printf("\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
