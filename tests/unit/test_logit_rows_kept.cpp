// Logit rows reduced on the backend (Transformer::forward's keep): a greedy row's argmax equals
// std::max_element over the same row's full logits, a top-k row's candidates equal the first k of
// the whole row fully sorted, the sampler draws the same tokens from those candidates as from the
// whole row, and the rows still copied back equal the rows of a plain forward, packed in order. Real
// stories260K weights on the CPU backend, whose argmax_rows and top_k_rows scan or partially sort its
// rows in place (backend/logit_rows.h).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <span>

#include "backend/cpu/cpu_backend.h"
#include "backend/logit_rows.h"
#include "core/error.h"
#include "core/logit_order.h"
#include "engine/logits_processor.h"
#include "engine/logprobs.h"
#include "engine/sampler.h"
#include "model/transformer.h"
#include "stories_fixture.h"

namespace vellum {
namespace {

// Row ids of `row` (n logits) fully sorted in logit_before's order.
std::vector<int32_t> sorted_ids(const float* row, size_t n) {
  std::vector<int32_t> ids(n);
  std::iota(ids.begin(), ids.end(), 0);
  std::sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return logit_before(row[a], a, row[b], b); });
  return ids;
}

// stories260K on the CPU backend with a pool of 16 blocks of 8 tokens, and a batch builder.
struct StoriesOnCpu {
  static constexpr uint32_t kBlock = 8;
  backend::CpuBackend be{2};
  model::Transformer model{testing::stories_model(), be};
  uint32_t vocab = model.hparams().vocab;
  StoriesOnCpu() { be.init_kv(model.kv_layout(kBlock), 16); }
  // 5 prompt tokens with logits on every row (the first sequence of every batch here).
  static engine::Batch first_sequence() {
    engine::Batch b;
    b.block_size = kBlock;
    b.add_sequence({1, 403, 407, 261, 378}, 0, {3, 7}, engine::Batch::Logits::All);
    return b;
  }
  // first_sequence's whole logit rows (5 × vocab).
  std::vector<float> first_logits() { return model.forward(first_sequence()); }
};

TEST(LogitRowsKept, PartialRowsMatchTheFullLogitsAndOtherRowsArePacked) {
  StoriesOnCpu s;
  auto& model = s.model;
  const uint32_t vocab = s.vocab;
  // Three sequences in one step: 5 prompt tokens with logits on every row, 3 with the last row, 4 with every row.
  const auto make_batch = [&] {
    engine::Batch b = StoriesOnCpu::first_sequence();
    b.add_sequence({1, 70, 300}, 0, {0}, engine::Batch::Logits::Last);
    b.add_sequence({1, 9, 42, 88}, 0, {12, 5}, engine::Batch::Logits::All);
    return b;
  };
  const engine::Batch batch = make_batch();
  const size_t m = batch.logit_rows.size();
  ASSERT_EQ(m, 10u);
  const std::vector<float> full = model.forward(batch);
  ASSERT_EQ(full.size(), m * vocab);
  // 1: argmax; 0: whole; k >= 2: top k (the largest, 40, sets the candidates' stride).
  const std::vector<int32_t> keep = {1, 0, 5, 1, 0, 40, 1, 0, 2, 1};
  const model::Transformer::StepOutput out = model.forward(make_batch(), keep);
  ASSERT_EQ(out.argmax.size(), m);
  ASSERT_EQ(out.top_k, 40);
  ASSERT_EQ(out.top_values.size(), m * 40);
  ASSERT_EQ(out.top_ids.size(), m * 40);
  size_t packed = 0, top_rows = 0;
  for (size_t r = 0; r < m; ++r) {
    const float* row = full.data() + r * vocab;
    if (keep[r] == 1) {
      EXPECT_EQ(out.argmax[r], std::max_element(row, row + vocab) - row) << "row " << r;
    } else if (keep[r] >= 2) {
      EXPECT_EQ(out.argmax[r], -1) << "row " << r;
      const std::vector<int32_t> want = sorted_ids(row, vocab);
      for (int j = 0; j < keep[r]; ++j) {
        const size_t at = r * 40 + static_cast<size_t>(j);
        EXPECT_EQ(out.top_ids[at], want[static_cast<size_t>(j)]) << "row " << r << " candidate " << j;
        EXPECT_EQ(out.top_values[at], row[want[static_cast<size_t>(j)]]) << "row " << r << " candidate " << j;
      }
      // The sampler draws the same tokens from the candidates as from the whole row.
      engine::SamplingParams sp;
      sp.temperature = 2.5f, sp.top_k = keep[r], sp.top_p = 0.98f, sp.min_p = 0.001f, sp.seed = 7 + r;
      engine::Sampler whole(sp), cut(sp);
      const std::span<const float> values(out.top_values.data() + r * 40, static_cast<size_t>(keep[r]));
      const std::span<const int32_t> ids(out.top_ids.data() + r * 40, static_cast<size_t>(keep[r]));
      std::vector<int32_t> a, b;
      for (int d = 0; d < 64; ++d) {
        a.push_back(whole.sample(std::span<const float>(row, vocab)));
        b.push_back(cut.sample_top(values, ids));
      }
      EXPECT_EQ(a, b) << "row " << r;
      EXPECT_GT(std::set<int32_t>(a.begin(), a.end()).size(), 1u) << "row " << r << ": the draws should vary";
      ++top_rows;
    } else {
      EXPECT_EQ(out.argmax[r], -1) << "row " << r;
      ASSERT_LE((packed + 1) * vocab, out.logits.size());
      EXPECT_TRUE(std::equal(row, row + vocab, out.logits.begin() + static_cast<ptrdiff_t>(packed * vocab))) << "row " << r;
      ++packed;
    }
  }
  EXPECT_EQ(out.logits.size(), packed * vocab);
  EXPECT_EQ(top_rows, 3u);
  // All greedy: nothing copied back whole.
  const model::Transformer::StepOutput all = model.forward(make_batch(), std::vector<int32_t>(m, 1));
  EXPECT_TRUE(all.logits.empty());
  for (size_t r = 0; r < m; ++r) {
    const float* row = full.data() + r * vocab;
    EXPECT_EQ(all.argmax[r], std::max_element(row, row + vocab) - row);
  }
  EXPECT_TRUE(all.top_values.empty());
  EXPECT_THROW(model.forward(make_batch(), std::vector<int32_t>(3, 1)), Error);
  // keep outside kDraw .. min(kMaxTopK, vocab - 1), or rows to draw without draws: a clear error,
  // before the step runs.
  for (const int32_t bad : {-2, backend::Backend::kMaxTopK + 1, static_cast<int32_t>(vocab)}) {
    std::vector<int32_t> k(m, 0);
    k[4] = bad;
    EXPECT_THROW(model.forward(make_batch(), k), Error) << bad;
  }
  std::vector<int32_t> draw_one(m, 0);
  draw_one[2] = model::Transformer::kDraw;
  EXPECT_THROW(model.forward(make_batch(), draw_one), Error);
  EXPECT_THROW(model.forward(make_batch(), draw_one, std::vector<backend::RowDraw>(m - 1)), Error);
}

// Rows drawn on the backend (keep = kDraw) give the token the sampler draws from the whole row with
// nothing cut, from the same generator state: draw_rows takes the uniform the sampler would have
// taken, and rows not drawn stay -1.
TEST(LogitRowsKept, DrawnRowsGiveTheSamplersToken) {
  StoriesOnCpu s;
  auto& model = s.model;
  const uint32_t vocab = s.vocab;
  const std::vector<float> full = s.first_logits();
  const size_t m = 5;
  ASSERT_EQ(full.size(), m * vocab);
  std::set<int32_t> seen;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    engine::SamplingParams sp;
    sp.temperature = 0.5f + 0.1f * static_cast<float>(seed % 20), sp.top_k = 0;
    sp.top_p = seed % 2 == 0 ? 0.9f : 1.0f;  // whole rows, and cut by top-p, min-p or both
    sp.min_p = seed % 3 == 0 ? 0.05f : 0.0f;
    sp.seed = seed;
    engine::Sampler sampler(sp), twin(sp);
    ASSERT_TRUE(twin.draws_whole_row(vocab));
    std::vector<int32_t> keep = {1, model::Transformer::kDraw, 0, model::Transformer::kDraw, 1};
    std::vector<backend::RowDraw> draws(m);
    draws[1] = twin.row_draw();
    draws[3] = twin.row_draw();
    const model::Transformer::StepOutput out = model.forward(StoriesOnCpu::first_sequence(), keep, draws);
    ASSERT_EQ(out.drawn.size(), m);
    EXPECT_EQ(out.drawn[0], -1);
    EXPECT_EQ(out.drawn[2], -1);
    EXPECT_EQ(out.drawn[1], sampler.sample(std::span<const float>(full.data() + 1 * vocab, vocab))) << seed;
    EXPECT_EQ(out.drawn[3], sampler.sample(std::span<const float>(full.data() + 3 * vocab, vocab))) << seed;
    seen.insert(out.drawn[1]);
  }
  EXPECT_GT(seen.size(), 1u) << "the draws should vary";
}

// Logit edits applied on the backend before the rows are reduced: the argmax, top-k candidates and
// whole rows of an edited step equal the host's process_logits on the unedited rows, bit for bit;
// edits that do not fit the rows are refused before the step runs.
TEST(LogitRowsKept, EditedRowsEqualTheHostsProcessedRows) {
  StoriesOnCpu s;
  auto& model = s.model;
  const uint32_t vocab = s.vocab;
  const std::vector<float> full = s.first_logits();
  const size_t m = 5;
  engine::SamplingParams p;
  p.repetition_penalty = 1.4f, p.presence_penalty = 0.7f, p.frequency_penalty = -0.3f;
  p.logit_bias = {{17, 3.0f}, {200, -2.5f}};
  const std::vector<int32_t> prompt = {1, 17, 33, 200, 401}, output = {33, 33, 90, 17};
  const std::vector<int32_t> suppressed = {2};
  std::vector<backend::LogitEdit> edits;
  std::vector<uint32_t> rows = {0};
  for (size_t r = 0; r < m; ++r) {  // row 1 unedited; the others with edits of their own
    if (r != 1) {
      std::vector<int32_t> out = output;
      out.push_back(static_cast<int32_t>(40 + r));
      engine::append_logit_edits(p, prompt, out, suppressed, vocab, edits);
    }
    rows.push_back(static_cast<uint32_t>(edits.size()));
  }
  const std::vector<int32_t> keep = {1, 1, 40, 0, 2};
  const model::Transformer::StepOutput o = model.forward(StoriesOnCpu::first_sequence(), keep, {}, edits, rows);
  size_t packed = 0;
  for (size_t r = 0; r < m; ++r) {
    std::vector<float> want(full.begin() + static_cast<ptrdiff_t>(r * vocab), full.begin() + static_cast<ptrdiff_t>((r + 1) * vocab));
    if (r != 1) {
      std::vector<int32_t> out = output;
      out.push_back(static_cast<int32_t>(40 + r));
      want = engine::process_logits(want, p, prompt, out, suppressed);
    }
    if (keep[r] == 1) {
      EXPECT_EQ(o.argmax[r], std::max_element(want.begin(), want.end()) - want.begin()) << "row " << r;
    }
    if (keep[r] >= 2) {
      std::vector<float> values(static_cast<size_t>(keep[r]));
      std::vector<int32_t> ids(values.size()), order;
      backend::top_k_of_row(want.data(), vocab, keep[r], values.data(), ids.data(), order);
      for (int j = 0; j < keep[r]; ++j) {
        EXPECT_EQ(o.top_ids[r * static_cast<size_t>(o.top_k) + static_cast<size_t>(j)], ids[static_cast<size_t>(j)]) << r;
        EXPECT_EQ(o.top_values[r * static_cast<size_t>(o.top_k) + static_cast<size_t>(j)], values[static_cast<size_t>(j)]) << r;
      }
    }
    if (keep[r] == 0) {
      EXPECT_TRUE(std::equal(want.begin(), want.end(), o.logits.begin() + static_cast<ptrdiff_t>(packed * vocab))) << "row " << r;
      EXPECT_EQ(o.logits[packed * vocab + 2], -std::numeric_limits<float>::infinity());
      ++packed;
    }
  }
  EXPECT_NE(std::vector<float>(full.begin() + 3 * vocab, full.begin() + 4 * vocab),
            std::vector<float>(o.logits.begin(), o.logits.begin() + vocab));  // the edits changed the row
  std::vector<backend::LogitEdit> bad = edits;
  bad.back().token = static_cast<int32_t>(vocab);
  EXPECT_THROW(model.forward(StoriesOnCpu::first_sequence(), keep, {}, bad, rows), Error);
  EXPECT_THROW(model.forward(StoriesOnCpu::first_sequence(), keep, {}, edits, std::span<const uint32_t>(rows).first(m)), Error);
}

// Logprobs of reduced rows at the model's level: the normalizer, the chosen token's logit and the
// candidates give compute_logprobs' entries on the whole rows, bit for bit on the CPU; rows not
// asking get none; out-of-range counts are refused before the step runs.
TEST(LogitRowsKept, ReducedRowsGiveTheHostsLogprobs) {
  StoriesOnCpu s;
  auto& model = s.model;
  const uint32_t vocab = s.vocab;
  const std::vector<float> full = s.first_logits();
  const std::vector<int32_t> keep = {1, 40, model::Transformer::kDraw, 1, model::Transformer::kDraw};
  const std::vector<int32_t> lps = {5, 20, 3, -1, 0};
  std::vector<backend::RowDraw> draws(5);
  draws[2] = {0.4, 0.8f, 0.0f, 0.9f};
  draws[4] = {0.9, 1.2f};
  const model::Transformer::StepOutput o = model.forward(StoriesOnCpu::first_sequence(), keep, draws, {}, {}, lps);
  ASSERT_EQ(o.top_k, 40);
  for (size_t r = 0; r < keep.size(); ++r) {
    const std::span<const float> row(full.data() + r * vocab, vocab);
    if (lps[r] < 0) {
      EXPECT_TRUE(std::isnan(o.log_z[r])) << "row " << r;
      continue;
    }
    const size_t at = r * static_cast<size_t>(o.top_k);
    const int32_t token = keep[r] == 1 ? o.argmax[r] : keep[r] == 40 ? o.top_ids[at + 7] : o.drawn[r];
    const float value = keep[r] == 40 ? o.top_values[at + 7] : o.token_logit[r];
    EXPECT_EQ(value, row[static_cast<size_t>(token)]) << "row " << r;
    const engine::TokenLogprob want = engine::compute_logprobs(row, token, static_cast<uint32_t>(lps[r]));
    const engine::TokenLogprob got = engine::logprobs_from_candidates(
        o.log_z[r], token, value, {o.top_values.data() + at, 40}, {o.top_ids.data() + at, 40}, static_cast<uint32_t>(lps[r]));
    EXPECT_EQ(got.logprob, want.logprob) << "row " << r;
    EXPECT_EQ(got.top, want.top) << "row " << r;
    EXPECT_EQ(got.top.size(), static_cast<size_t>(lps[r])) << "row " << r;
  }
  EXPECT_THROW(model.forward(StoriesOnCpu::first_sequence(), keep, draws, {}, {}, std::vector<int32_t>{5, backend::Backend::kMaxTopK + 1, 3, -1, 0}), Error);
  EXPECT_THROW(model.forward(StoriesOnCpu::first_sequence(), keep, draws, {}, {}, std::vector<int32_t>{5, 20, 3, -2, 0}), Error);
  EXPECT_THROW(model.forward(StoriesOnCpu::first_sequence(), keep, draws, {}, {}, std::vector<int32_t>{5, 20}), Error);
}

// draw_of_row draws each column with its softmax probability: over a grid of u the share of draws a
// column gets is its probability (to within the grid's step), NaN columns are never drawn, and a
// row without a finite best logit gives that best column.
TEST(LogitRowsKept, DrawOfRowFollowsTheSoftmax) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> row = {0.5f, nan, 2.0f, -1.0f, 2.0f, -inf, 1.25f};
  const float temperature = 0.7f;
  double z = 0;
  std::vector<double> p(row.size(), 0.0);
  for (size_t i = 0; i < row.size(); ++i) {
    if (!std::isnan(row[i])) z += p[i] = std::exp((row[i] - 2.0) / temperature);
  }
  const int steps = 100000;
  std::vector<int> count(row.size(), 0);
  backend::DrawScratch s;
  const auto draw = [&](const std::vector<float>& r, float t, double u) {
    return backend::draw_of_row(r.data(), static_cast<int64_t>(r.size()), backend::RowDraw{u, t}, s);
  };
  for (int i = 0; i < steps; ++i) ++count[static_cast<size_t>(draw(row, temperature, (i + 0.5) / steps))];
  for (size_t i = 0; i < row.size(); ++i) EXPECT_NEAR(double(count[i]) / steps, p[i] / z, 2.0 / steps) << "column " << i;
  EXPECT_EQ(count[1], 0);
  EXPECT_EQ(count[5], 0);
  EXPECT_EQ(draw(row, temperature, 0.0), 0);  // the first column that weighs anything
  EXPECT_EQ(draw({1.0f, inf, 3.0f, inf}, 1.0f, 0.3), 1);
  EXPECT_EQ(draw({nan, nan, nan}, 1.0f, 0.9), 0);
  EXPECT_EQ(draw({-inf, nan, -inf}, 1.0f, 0.9), 0);
}

// min-p and top-p as defined, from a reference that sorts the row and sums probabilities in double:
// min-p keeps the columns of at least min_p × the best's probability, top-p then the largest logits
// until their share of the whole row reaches top_p (ties at the cut all kept), and the draw gives
// each kept column its share of the kept mass.
TEST(LogitRowsKept, DrawOfRowCutsByMinPAndTopP) {
  std::mt19937 gen(7);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> row(300);
  for (float& v : row) v = std::round(normal(gen) * 4.0f) / 4.0f;  // quarter steps: many ties
  const float temperature = 0.8f;
  backend::DrawScratch s;
  for (const auto& [min_p, top_p] : {std::pair{0.0f, 0.5f}, std::pair{0.0f, 0.9f}, std::pair{0.02f, 1.0f},
                                      std::pair{0.1f, 0.7f}, std::pair{0.5f, 0.99f}, std::pair{0.0f, 0.001f}}) {
    std::vector<double> p(row.size());
    double z = 0;
    const float best = *std::max_element(row.begin(), row.end());
    for (size_t i = 0; i < row.size(); ++i) z += p[i] = std::exp((row[i] - static_cast<double>(best)) / temperature);
    std::vector<bool> kept(row.size());
    for (size_t i = 0; i < row.size(); ++i) kept[i] = p[i] >= min_p;  // p[i] is relative to the best's 1
    std::vector<int> order(row.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return row[a] > row[b]; });
    float floor = -1e30f;
    double acc = 0;
    for (int i : order) {
      if (!kept[i]) continue;
      acc += p[i] / z;
      if (acc >= top_p) {
        floor = row[i];
        break;
      }
    }
    double total = 0;
    for (size_t i = 0; i < row.size(); ++i) {
      kept[i] = kept[i] && row[i] >= floor;
      total += kept[i] ? p[i] : 0.0;
    }
    const int steps = 20000;
    std::vector<int> count(row.size(), 0);
    for (int i = 0; i < steps; ++i) {
      ++count[static_cast<size_t>(backend::draw_of_row(row.data(), 300, {(i + 0.5) / steps, temperature, min_p, top_p}, s))];
    }
    for (size_t i = 0; i < row.size(); ++i) {
      const double want = kept[i] ? p[i] / total : 0.0;
      EXPECT_NEAR(double(count[i]) / steps, want, 2.0 / steps) << "column " << i << " min_p " << min_p << " top_p " << top_p;
      if (!kept[i]) {
        EXPECT_EQ(count[i], 0) << "column " << i << " min_p " << min_p << " top_p " << top_p;
      }
    }
  }
}

// The masses and the two roundings every backend shares: the best column weighs 2^shift, a row's
// masses stay below 2^63 at any width, and the draw point stays below the total.
TEST(LogitRowsKept, DrawMassesAreExactIntegers) {
  EXPECT_EQ(backend::mass_shift(300), 44);
  EXPECT_EQ(backend::mass_shift(151936), 44);  // 18 bits of columns
  EXPECT_EQ(backend::mass_shift(int64_t{1} << 20), 42);
  for (const int64_t cols : {int64_t{1}, int64_t{1000}, int64_t{262144}, int64_t{1} << 24}) {
    const int shift = backend::mass_shift(cols);
    const unsigned __int128 most = static_cast<unsigned __int128>(cols) * backend::mass_of(1.0, shift);
    EXPECT_LT(most, static_cast<unsigned __int128>(1) << 63) << cols;
  }
  EXPECT_EQ(backend::mass_of(1.0, 44), uint64_t{1} << 44);
  EXPECT_EQ(backend::mass_of(0.0, 44), 0u);
  EXPECT_EQ(backend::mass_of(std::ldexp(1.0, -46), 44), 0u);   // a quarter unit: rounds to nothing
  EXPECT_EQ(backend::mass_of(std::ldexp(3.0, -46), 44), 1u);   // three quarters: one unit
  EXPECT_EQ(backend::mass_of(std::ldexp(5.0, -45), 44), 2u);   // 2.5 units: to even
  EXPECT_EQ(backend::top_p_target(0.5f, 7), 4u);
  EXPECT_EQ(backend::top_p_target(1.0f, 7), 7u);
  EXPECT_EQ(backend::draw_point(0.0, 10), 0u);
  EXPECT_EQ(backend::draw_point(0.35, 10), 3u);
  const double most_u = std::nextafter(1.0, 0.0);
  EXPECT_EQ(backend::draw_point(most_u, uint64_t{1} << 62), (uint64_t{1} << 62) - 512);  // exact: (1 - 2^-53) · 2^62
  for (const uint64_t total : {uint64_t{1}, uint64_t{3}, (uint64_t{1} << 53) + 1, (uint64_t{1} << 62) - 1, (uint64_t{1} << 63) - 1}) {
    EXPECT_LT(backend::draw_point(most_u, total), total) << total;  // the double product may round up to the total
  }
}

// The CPU backend's draw_rows is draw_of_row a row, and bad draws are refused with a clear error.
TEST(LogitRowsKept, CpuDrawRowsChecksItsArguments) {
  backend::CpuBackend be(2);
  backend::Tensor t = be.scratch(3, 5);
  const float v[15] = {0, 1, 2, 3, 4, 4, 3, 2, 1, 0, 1, 1, 1, 1, 1};
  std::copy(v, v + 15, t.data);
  std::vector<int32_t> out(3);
  const std::vector<backend::RowDraw> draws = {{0.25, 1.0f}, {0.999, 0.3f, 0.1f, 0.8f}, {0.5, 2.0f}};
  be.draw_rows(t, draws, out);
  backend::DrawScratch s;
  for (int r = 0; r < 3; ++r) EXPECT_EQ(out[r], backend::draw_of_row(v + 5 * r, 5, draws[r], s)) << r;
  EXPECT_EQ(out[2], 2);  // equal weights: u = 0.5 lands in the third of five
  for (const backend::RowDraw bad : {backend::RowDraw{1.0, 1.0f}, backend::RowDraw{-0.1, 1.0f}, backend::RowDraw{0.5, 0.0f},
                                     backend::RowDraw{0.5, std::numeric_limits<float>::infinity()},
                                     backend::RowDraw{std::nan(""), 1.0f}, backend::RowDraw{0.5, 1.0f, -0.1f},
                                     backend::RowDraw{0.5, 1.0f, 1.5f}, backend::RowDraw{0.5, 1.0f, 0.0f, 0.0f},
                                     backend::RowDraw{0.5, 1.0f, 0.0f, 1.01f}, backend::RowDraw{0.5, 1.0f, std::nanf("")}}) {
    std::vector<backend::RowDraw> d = draws;
    d[1] = bad;
    EXPECT_THROW(be.draw_rows(t, d, out), Error);
  }
  EXPECT_THROW(be.draw_rows(t, std::span<const backend::RowDraw>(draws).first(2), out), Error);
  std::vector<int32_t> short_out(2);
  EXPECT_THROW(be.draw_rows(t, draws, short_out), Error);
}

TEST(LogitRowsKept, CpuArgmaxTakesTheFirstMaximum) {
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

// The CPU backend's vectorised first maximum equals std::max_element on random rows with ties, NaN
// (first or later), -inf and both zeros planted, at lengths around its 8 lanes.
TEST(LogitRowsKept, FirstMaxEqualsMaxElement) {
  std::mt19937 gen(17);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (int trial = 0; trial < 2000; ++trial) {
    const int64_t cols = 1 + trial % 37 + (trial % 5 == 0 ? 1000 : 0);
    std::vector<float> row(static_cast<size_t>(cols));
    for (float& x : row) x = normal(gen);
    std::uniform_int_distribution<int64_t> at(0, cols - 1);
    switch (trial % 6) {
      case 1: row[static_cast<size_t>(at(gen))] = nan; break;
      case 2: row[0] = nan; break;
      case 3: std::fill(row.begin(), row.end(), trial % 2 ? 0.0f : -0.0f), row[static_cast<size_t>(at(gen))] = -0.0f; break;
      case 4: std::fill(row.begin(), row.end(), -inf); break;
      case 5: row[static_cast<size_t>(at(gen))] = *std::max_element(row.begin(), row.end()); break;  // a tie
      default: break;
    }
    EXPECT_EQ(backend::first_max(row.data(), cols), std::max_element(row.begin(), row.end()) - row.begin())
        << "trial " << trial << ", " << cols << " columns";
  }
}

// Ties go to the smaller id, NaN after every number (-inf included), as the sampler sorts.
TEST(LogitRowsKept, CpuTopKOrdersTiesAndNaN) {
  backend::CpuBackend be(1);
  backend::Tensor t = be.scratch(2, 6);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float v[] = {3, nan, 5, 3, 5, 1, nan, -inf, 2, nan, -inf, 2};
  std::copy(std::begin(v), std::end(v), t.data);
  std::vector<float> values(8);
  std::vector<int32_t> ids(8);
  be.top_k_rows(t, 4, values, ids);
  EXPECT_EQ(ids, (std::vector<int32_t>{2, 4, 0, 3, 2, 5, 1, 4}));  // column ids within each row
  EXPECT_EQ(values[0], 5.0f);
  EXPECT_EQ(values[6], -inf);
  std::vector<float> short_values(7);
  EXPECT_THROW(be.top_k_rows(t, 4, short_values, ids), Error);
  EXPECT_THROW(be.top_k_rows(t, 7, values, ids), Error);  // more than a row holds
  EXPECT_THROW(be.top_k_rows(t, 0, values, ids), Error);
}

}  // namespace
}  // namespace vellum
