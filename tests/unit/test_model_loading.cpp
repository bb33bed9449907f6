// Model loading refuses what it cannot run, naming the problem: unknown architectures, missing or
// ill-typed hyper-parameters, missing tensors and wrong shapes.

#include <gtest/gtest.h>

#include <filesystem>

#include "backend/cpu/cpu_backend.h"
#include "core/error.h"
#include "gguf/gguf_writer.h"
#include "model/synthetic_model.h"
#include "model/transformer.h"
#include "temp_path.h"

namespace vellum::model {
namespace {

namespace fs = std::filesystem;

testing::TempPath temp(const std::string& name) { return testing::TempPath("vellum_model", "_" + name); }

std::string load_error(const std::string& path) {
  try {
    const auto f = gguf::GgufFile::open(path);
    backend::CpuBackend be(1);
    Transformer t(f, be);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

gguf::GgufWriter llama_header(uint32_t dim = 32, uint32_t layers = 1) {
  gguf::GgufWriter w;
  auto& md = w.metadata();
  md.set("general.architecture", gguf::Value::string("llama"));
  md.set("llama.embedding_length", gguf::Value::u32(dim));
  md.set("llama.block_count", gguf::Value::u32(layers));
  md.set("llama.attention.head_count", gguf::Value::u32(4));
  md.set("llama.attention.head_count_kv", gguf::Value::u32(2));
  md.set("llama.feed_forward_length", gguf::Value::u32(64));
  md.set("llama.vocab_size", gguf::Value::u32(10));
  return w;
}

TEST(ModelLoading, UnknownArchitecture) {
  gguf::GgufWriter w;
  w.metadata().set("general.architecture", gguf::Value::string("mamba9"));
  const auto path = temp("arch.gguf");
  w.write(path);
  EXPECT_EQ(load_error(path), "architecture 'mamba9' is not supported (supported: llama, qwen2, qwen3)");
}

TEST(ModelLoading, IllTypedHyperparameter) {
  auto w = llama_header();
  w.metadata().set("llama.block_count", gguf::Value::string("one"));
  const auto path = temp("type.gguf");
  w.write(path);
  EXPECT_EQ(load_error(path), "key llama.block_count: expected an integer, found string");
}

TEST(ModelLoading, MissingTensor) {
  auto w = llama_header();
  w.add_tensor("token_embd.weight", TensorType::F32, {32, 10}, std::vector<uint8_t>(32 * 10 * 4));
  const auto path = temp("missing.gguf");
  w.write(path);
  EXPECT_NE(load_error(path).find("missing tensor output_norm.weight (architecture llama)"), std::string::npos);
}

TEST(ModelLoading, WrongShape) {
  auto w = llama_header();
  w.add_tensor("token_embd.weight", TensorType::F32, {16, 10}, std::vector<uint8_t>(16 * 10 * 4));
  const auto path = temp("shape.gguf");
  w.write(path);
  EXPECT_NE(load_error(path).find("tensor token_embd.weight has shape [16, 10], expected [32, 10]"), std::string::npos)
      << load_error(path);
}

TEST(ModelLoading, SyntheticModelsOfEachArchitectureLoadAndRun) {
  for (const char* arch : {"llama", "qwen2", "qwen3"}) {
    SynthOptions o;
    o.shape = synthetic_preset("tiny");
    o.shape.arch = arch;
    o.shape.vocab = 300;
    o.type = "Q8_0";
    const auto out = temp(std::string(arch) + ".gguf");
    o.output_path = out.str();
    o.verbose = false;
    write_synthetic_model(o);
    const auto f = gguf::GgufFile::open(o.output_path);
    backend::CpuBackend be(2);
    Transformer t(f, be);
    EXPECT_EQ(t.hparams().arch_name, arch);
    EXPECT_EQ(t.hparams().qkv_bias, std::string(arch) == "qwen2");
    EXPECT_EQ(t.hparams().qk_norm, std::string(arch) == "qwen3");
    be.init_kv(t.kv_layout(16), 2);
    engine::Batch b;
    b.add_sequence({1, 2, 3, 4, 5}, 0, {1}, engine::Batch::Logits::All);
    const auto logits = t.forward(b);
    ASSERT_EQ(logits.size(), 5u * 300);
    for (float v : logits) ASSERT_TRUE(std::isfinite(v)) << arch;
  }
}

}  // namespace
}  // namespace vellum::model
