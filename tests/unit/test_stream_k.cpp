// stream_k.h: the stream-K cut the dequantizing GEMM's persistent grid walks (dq_tma.cu). Host
// arithmetic, block by block as the kernel walks it: every stage of every tile is done exactly
// once, a shared tile's partial sums are numbered 0..parts-1 in block order (the order its last
// block adds them in), and every block gets the same work to within one stage.

#include "backend/cuda/stream_k.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

namespace vellum::cuda {
namespace {

struct Shape {
  uint64_t tiles;
  unsigned tok_tiles, nk, sms;
};

// Walks every block's segments and checks the cut; returns it.
StreamK walk(const Shape& c, unsigned min_stages) {
  const StreamK s = plan_stream_k(c.tiles, c.tok_tiles, c.nk, c.sms, min_stages);
  if (s.grid == 0) return s;
  std::vector<std::vector<int>> done(c.tiles, std::vector<int>(c.nk, 0));
  std::map<uint64_t, std::vector<std::pair<unsigned, unsigned>>> parts_seen;  // shared tile -> (block, part)
  std::vector<uint64_t> work(s.grid, 0);
  for (unsigned b = 0; b < s.grid; ++b) {
    const unsigned n = s.whole_tiles(b) + s.shared_runs(b);
    for (unsigned i = 0; i < n; ++i) {
      const StreamK::Run r = s.run(b, i);
      EXPECT_LT(r.tile, c.tiles);
      EXPECT_GT(r.len, 0u);
      EXPECT_LE(r.k0 + r.len, c.nk);
      for (unsigned k = r.k0; k < r.k0 + r.len && r.tile < c.tiles; ++k) ++done[r.tile][k];
      work[b] += r.len;
      if (r.parts > 1 || r.tile >= s.dp_tiles) {
        EXPECT_GE(r.tile, s.dp_tiles);
        EXPECT_EQ(r.shared, r.tile - s.dp_tiles);
        EXPECT_LE(r.parts, s.max_parts);
        EXPECT_LT(r.part, r.parts);
        parts_seen[r.shared].push_back({b, r.part});
      } else {
        EXPECT_EQ(r.k0, 0u);
        EXPECT_EQ(r.len, c.nk);
      }
    }
  }
  for (uint64_t t = 0; t < c.tiles; ++t) {
    for (unsigned k = 0; k < c.nk; ++k) EXPECT_EQ(done[t][k], 1) << "tile " << t << " stage " << k;
  }
  for (const auto& [shared, seen] : parts_seen) {
    const unsigned parts = s.parts(shared);
    EXPECT_EQ(seen.size(), parts) << "shared tile " << shared;
    for (size_t q = 0; q < seen.size(); ++q) EXPECT_EQ(seen[q].second, q) << "parts follow block order";
  }
  if (s.sk_blocks == s.grid) {
    const auto [lo, hi] = std::minmax_element(work.begin(), work.end());
    EXPECT_LE(*hi - *lo, 1u) << "blocks' stages";
  }
  return s;
}

TEST(StreamK, WholeWavesStayPlain) {
  EXPECT_EQ(plan_stream_k(264, 2, 64, 132, 8).grid, 0u);
  EXPECT_EQ(plan_stream_k(132, 1, 64, 132, 8).grid, 0u);
  EXPECT_EQ(plan_stream_k(0, 1, 64, 132, 8).grid, 0u);
}

TEST(StreamK, Llama3PrefillShapes) {
  // 14 336 rows x 512 tokens (256-token tiles): one whole wave, 92 tiles shared.
  StreamK s = walk({224, 2, 64, 132}, 8);
  EXPECT_EQ(s.grid, 132u);
  EXPECT_EQ(s.dp_tiles, 132u);
  EXPECT_EQ(s.sk_units, 92u * 64);
  EXPECT_EQ(s.max_parts, 3u);
  // 6 144 rows x 512: fewer tiles than SMs, all shared.
  s = walk({96, 2, 64, 132}, 8);
  EXPECT_EQ(s.dp_tiles, 0u);
  EXPECT_EQ(s.sk_blocks, 132u);
  // 14 336 x 1 024: 3 whole waves and 52 tiles; under half a wave, so the last whole wave is shared too.
  s = walk({448, 4, 64, 132}, 8);
  EXPECT_EQ(s.dp_tiles, 264u);
  EXPECT_EQ(s.sk_units, 184u * 64);
}

TEST(StreamK, FewStagesShareFewerBlocks) {
  // 24 tiles of 32 stages, at least 8 a block: 96 blocks share, 4 parts a tile.
  const StreamK s = walk({24, 3, 32, 132}, 8);
  EXPECT_EQ(s.sk_blocks, 96u);
  EXPECT_EQ(s.max_parts, 4u);
}

TEST(StreamK, ManyShapes) {
  for (unsigned sms : {7u, 66u, 114u, 132u}) {
    for (uint64_t tiles : {1ull, 5ull, 131ull, 133ull, 200ull, 397ull}) {
      for (unsigned nk : {1u, 4u, 63u, 224u}) walk({tiles, 3, nk, sms}, 8);
    }
  }
}

}  // namespace
}  // namespace vellum::cuda
