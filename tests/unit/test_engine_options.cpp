// The shared engine flags: one parser for run, serve, bench and proof's --a/--b strings.

#include <gtest/gtest.h>

#include "app/engine_options.h"
#include "core/error.h"

namespace vellum::app {
namespace {

TEST(EngineOptions, FlagStringOverridesOnlyWhatItNames) {
  EngineOptions base;
  base.model = "m.gguf";
  base.threads = 3;
  const EngineOptions o = parse_engine_flags("--block-size 32 --no-prefix-cache --max-num-batched-tokens 64", base);
  EXPECT_EQ(o.block_size, 32u);
  EXPECT_FALSE(o.prefix_caching);
  EXPECT_EQ(o.max_num_batched_tokens, 64u);
  EXPECT_EQ(o.model, "m.gguf");
  EXPECT_EQ(o.threads, 3u);
  EXPECT_EQ(o.max_num_seqs, base.max_num_seqs);
  EXPECT_EQ(parse_engine_flags("", base).block_size, base.block_size);
  EXPECT_EQ(parse_engine_flags("-b 16 --max-num-seqs 1", base).max_num_seqs, 1u);
}

TEST(EngineOptions, DeterministicIsOffUnlessAsked) {
  EXPECT_FALSE(parse_engine_flags("", {}).deterministic);
  const EngineOptions o = parse_engine_flags("--deterministic --device cpu", {});
  EXPECT_TRUE(o.deterministic);
  EXPECT_NE(describe(o).find("deterministic"), std::string::npos) << describe(o);
  EXPECT_EQ(describe(parse_engine_flags("", {})).find("deterministic"), std::string::npos);
}

TEST(EngineOptions, BadFlagsAreErrorsNamingTheFlag) {
  EXPECT_THROW(parse_engine_flags("--no-such-flag", {}), Error);
  EXPECT_THROW(parse_engine_flags("--block-size banana", {}), Error);
  try {
    parse_engine_flags("--block-size 0", {});
    FAIL() << "a zero block size was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--block-size"), std::string::npos) << e.what();
  }
  try {
    parse_engine_flags("--device tpu", {});
    FAIL() << "an unknown device was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tpu"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vellum::app
