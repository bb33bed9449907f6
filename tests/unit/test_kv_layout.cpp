#include "kv/kv_config.h"
#include "kv/kv_layout.h"
#include "kv/kv_manager.h"

#include "core/error.h"

#include <gtest/gtest.h>

using namespace vellum;
using namespace vellum::kv;

TEST(KvLayout, BytesPerBlockUniform) {
  // Llama-3-8B-like: 32 layers, 8 KV heads, head dim 128, f16, 16-token blocks.
  const KvLayout l = KvLayout::uniform(32, 8, 128, TensorType::F16, 16);
  EXPECT_EQ(l.bytes_per_token(), 32ull * 2 * 8 * 128 * 2);
  EXPECT_EQ(l.bytes_per_block(), 32ull * 2 * 16 * 8 * 128 * 2);  // 2 MiB
  EXPECT_EQ(l.bytes_per_block(), 2ull << 20);
  EXPECT_EQ(l.k_offset(0), 0u);
  EXPECT_EQ(l.v_offset(0), 16ull * 8 * 128 * 2);
  EXPECT_EQ(l.k_offset(1), 2ull * 16 * 8 * 128 * 2);
}

TEST(KvLayout, PerLayerShapesMayDiffer) {
  KvLayout l;
  l.block_size = 4;
  l.layers = {KvLayerShape{2, 8, 8, TensorType::F32}, KvLayerShape{1, 16, 4, TensorType::F16}};
  EXPECT_EQ(l.bytes_per_token(), (2u * 8 * 4 * 2) + (16u * 2 + 4 * 2));
  EXPECT_EQ(l.k_offset(1), 4ull * 2 * 8 * 4 * 2);
  EXPECT_EQ(l.v_offset(1), l.k_offset(1) + 4ull * 16 * 2);
  EXPECT_EQ(l.bytes_per_block(), l.v_offset(1) + 4ull * 4 * 2);
  EXPECT_NO_THROW(l.validate());
}

TEST(KvLayout, QuantizedRowsMustBeWholeBlocks) {
  KvLayout l = KvLayout::uniform(1, 1, 40, TensorType::Q8_0);  // 40 is not a multiple of 32
  EXPECT_THROW(l.validate(), Error);
  KvLayout ok = KvLayout::uniform(1, 2, 64, TensorType::Q8_0);
  EXPECT_EQ(ok.bytes_per_token(), 2u * (128 / 32 * 34));
}

TEST(KvLayout, BlocksForTokensAndBudget) {
  EXPECT_EQ(blocks_for_tokens(0, 16), 0u);
  EXPECT_EQ(blocks_for_tokens(1, 16), 1u);
  EXPECT_EQ(blocks_for_tokens(16, 16), 1u);
  EXPECT_EQ(blocks_for_tokens(17, 16), 2u);
  const KvLayout l = KvLayout::uniform(32, 8, 128, TensorType::F16, 16);
  EXPECT_EQ(blocks_for_budget(1ull << 30, l), 512u);
  EXPECT_EQ(blocks_for_budget((1ull << 30) - 1, l), 511u);
  EXPECT_THROW(blocks_for_tokens(5, 0), Error);
}

TEST(KvConfig, FromMemoryAndTokens) {
  const KvLayout l = KvLayout::uniform(32, 8, 128, TensorType::F16, 16);
  const KvConfig c = KvConfig::from_memory(l, 1ull << 30, 8192);
  EXPECT_EQ(c.num_blocks, 512u);
  EXPECT_EQ(c.block_size, 16u);
  EXPECT_EQ(c.max_seq_len, 8192u);
  const KvConfig t = KvConfig::from_tokens(l, 1000, 1000);
  EXPECT_EQ(t.num_blocks, 63u);
  KvManager m(t);
  EXPECT_EQ(m.num_blocks(), 63u);
}

TEST(KvConfig, TooSmallForOneSequenceIsAClearError) {
  const KvLayout l = KvLayout::uniform(32, 8, 128, TensorType::F16, 16);
  try {
    KvConfig::from_memory(l, 64ull << 20, 8192);  // 32 blocks = 512 tokens
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("64.00 MiB"), std::string::npos) << msg;
    EXPECT_NE(msg.find("32 blocks"), std::string::npos) << msg;
    EXPECT_NE(msg.find("maximum length 8192"), std::string::npos) << msg;
    EXPECT_NE(msg.find("512 blocks"), std::string::npos) << msg;
  }
  EXPECT_THROW(KvConfig::from_memory(l, 1000, 16), Error);  // not even one block
  EXPECT_THROW(KvConfig::from_tokens(l, 100, 200), Error);
  KvConfig c;
  c.block_size = 16;
  c.num_blocks = 4;
  c.max_seq_len = 65;
  EXPECT_THROW(KvManager{c}, Error);
  c.max_seq_len = 64;
  EXPECT_NO_THROW(KvManager{c});
  c.num_blocks = 0;
  EXPECT_THROW(KvManager{c}, Error);
  c.num_blocks = 4;
  c.block_size = 0;
  EXPECT_THROW(KvManager{c}, Error);
}

TEST(KvConfig, FormatBytes) {
  EXPECT_EQ(format_bytes(17), "17 B");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(3ull << 30), "3.00 GiB");
}
