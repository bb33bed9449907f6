// Greedy rows reduced on the backend (Transformer::forward with argmax_only): the argmax of a row
// equals std::max_element over the same row's full logits, and the rows still copied back equal the
// rows of a plain forward, packed in order. Real stories260K weights on the CPU backend, whose
// argmax_rows is the Backend default (read, then scan on the host).

#include <gtest/gtest.h>

#include <algorithm>

#include "backend/cpu/cpu_backend.h"
#include "core/error.h"
#include "model/transformer.h"
#include "stories_fixture.h"

namespace vellum {
namespace {

TEST(ArgmaxRows, GreedyRowsMatchTheFullLogitsAndOtherRowsArePacked) {
  const gguf::GgufFile& file = testing::stories_model();
  backend::CpuBackend be(2);
  model::Transformer model(file, be);
  const uint32_t vocab = model.hparams().vocab, bs = 8;
  be.init_kv(model.kv_layout(bs), 16);
  // Three sequences in one step: 5 prompt tokens with logits on every row, 3 with the last row, 4 with every row.
  const auto make_batch = [&] {
    engine::Batch b;
    b.block_size = bs;
    b.add_sequence({1, 403, 407, 261, 378}, 0, {3, 7}, engine::Batch::Logits::All);
    b.add_sequence({1, 70, 300}, 0, {0}, engine::Batch::Logits::Last);
    b.add_sequence({1, 9, 42, 88}, 0, {12, 5}, engine::Batch::Logits::All);
    return b;
  };
  const engine::Batch batch = make_batch();
  const size_t m = batch.logit_rows.size();
  ASSERT_EQ(m, 10u);
  const std::vector<float> full = model.forward(batch);
  ASSERT_EQ(full.size(), m * vocab);
  const std::vector<uint8_t> flags = {1, 0, 1, 1, 0, 0, 1, 0, 1, 1};
  const model::Transformer::StepOutput out = model.forward(make_batch(), flags);
  ASSERT_EQ(out.argmax.size(), m);
  size_t packed = 0;
  for (size_t r = 0; r < m; ++r) {
    const float* row = full.data() + r * vocab;
    if (flags[r] != 0) {
      EXPECT_EQ(out.argmax[r], std::max_element(row, row + vocab) - row) << "row " << r;
    } else {
      EXPECT_EQ(out.argmax[r], -1) << "row " << r;
      ASSERT_LE((packed + 1) * vocab, out.logits.size());
      EXPECT_TRUE(std::equal(row, row + vocab, out.logits.begin() + static_cast<ptrdiff_t>(packed * vocab))) << "row " << r;
      ++packed;
    }
  }
  EXPECT_EQ(out.logits.size(), packed * vocab);
  // All greedy: nothing copied back whole.
  const model::Transformer::StepOutput all = model.forward(make_batch(), std::vector<uint8_t>(m, 1));
  EXPECT_TRUE(all.logits.empty());
  for (size_t r = 0; r < m; ++r) {
    const float* row = full.data() + r * vocab;
    EXPECT_EQ(all.argmax[r], std::max_element(row, row + vocab) - row);
  }
  EXPECT_THROW(model.forward(make_batch(), std::vector<uint8_t>(3, 1)), Error);
}

TEST(ArgmaxRows, DefaultTakesTheFirstMaximum) {
  backend::CpuBackend be(1);
  backend::Tensor t = be.scratch(3, 5);
  const float v[] = {1, 4, 4, 2, 0, -1, -1, -1, -1, -1, 0, 0, 0, 7, 7};
  std::copy(std::begin(v), std::end(v), t.data);
  int32_t out[3] = {};
  be.argmax_rows(t, out);
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], 0);
  EXPECT_EQ(out[2], 3);
  int32_t two[2];
  EXPECT_THROW(be.argmax_rows(t, two), Error);
}

}  // namespace
}  // namespace vellum
