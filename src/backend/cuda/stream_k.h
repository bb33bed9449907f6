#pragma once
// Stream-K (round 32): a persistent grid of one block a multiprocessor shares a GEMM's K stages
// evenly, so that a tile count that is not a multiple of the multiprocessors leaves no part-empty
// last wave (llama3-8b's 14 336-row weights at 512 tokens: 224 tiles of 128 x 256 on 132 SMs were
// 1.7 waves, 85% busy). Tiles [0, dp_tiles) are done whole, block b taking b, b + grid, ...; the
// stages of the tiles after them are cut into sk_blocks equal runs, one a block, so a shared tile
// gets a partial sum from each block whose run covers part of it. Its partials are added by the
// last block to arrive, in the order of their blocks (the sum does not depend on arrival order).
// Host and device (DqMmaPlan carries it; dq_tma.cu's kernel walks it).

#include <algorithm>
#include <cstdint>

#if defined(__CUDACC__)
#define VELLUM_SK_FN __host__ __device__ __forceinline__
#else
#define VELLUM_SK_FN inline
#endif

namespace vellum::cuda {

struct StreamK {
  unsigned grid = 0;       // persistent blocks; 0: not stream-K (one block a tile and K split)
  unsigned tok_tiles = 0;  // tile t is token tile t % tok_tiles of weight row tile t / tok_tiles
  unsigned dp_tiles = 0;   // tiles done whole
  unsigned sk_blocks = 0;  // blocks [0, sk_blocks) share the rest
  unsigned nk = 0;         // K stages a tile
  unsigned max_parts = 0;  // partial sums a shared tile has at most (its slots in the workspace)
  uint64_t sk_units = 0;   // stages of the shared tiles: (tiles - dp_tiles) · nk

  // Block b's run of shared stages: [begin(b), begin(b + 1)).
  VELLUM_SK_FN uint64_t begin(unsigned b) const { return sk_units * b / sk_blocks; }
  // The block whose run holds shared stage u (the largest b with begin(b) <= u).
  VELLUM_SK_FN unsigned owner(uint64_t u) const { return unsigned(((u + 1) * sk_blocks - 1) / sk_units); }
  // Partial sums of shared tile s (0-based after the whole ones), and which of them block b adds.
  VELLUM_SK_FN unsigned parts(uint64_t s) const { return owner(s * nk + nk - 1) - owner(s * nk) + 1; }
  VELLUM_SK_FN unsigned part(uint64_t s, unsigned b) const { return b - owner(s * nk); }
  // Segments (runs inside one tile) block b walks: its whole tiles, then its shared runs.
  VELLUM_SK_FN unsigned whole_tiles(unsigned b) const { return b < dp_tiles ? (dp_tiles - 1 - b) / grid + 1 : 0; }
  VELLUM_SK_FN unsigned shared_runs(unsigned b) const {
    if (b >= sk_blocks) return 0;
    const uint64_t u0 = begin(b), u1 = begin(b + 1);
    return u1 > u0 ? unsigned((u1 - 1) / nk - u0 / nk + 1) : 0;
  }
  // Segment i of block b (i < whole_tiles(b) + shared_runs(b)): its tile, stages [k0, k0 + len),
  // and partial sum `part` of the tile's `parts` (1: whole), `shared` its index among the shared tiles.
  struct Run {
    uint64_t tile, shared;
    unsigned k0, len, parts, part;
  };
  VELLUM_SK_FN Run run(unsigned b, unsigned i) const {
    Run r{};
    const unsigned whole = whole_tiles(b);
    if (i < whole) {
      r.tile = uint64_t(b) + uint64_t(i) * grid;
      r.k0 = 0, r.len = nk, r.parts = 1, r.part = 0;
      return r;
    }
    const uint64_t u0 = begin(b), u1 = begin(b + 1), s = u0 / nk + (i - whole);
    const uint64_t lo = s * nk > u0 ? s * nk : u0, hi = (s + 1) * nk < u1 ? (s + 1) * nk : u1;
    r.tile = dp_tiles + s, r.shared = s;
    r.k0 = unsigned(lo - s * nk), r.len = unsigned(hi - lo), r.parts = parts(s), r.part = part(s, b);
    return r;
  }
};

// The stream-K cut of `tiles` tiles of `nk` stages on `sms` multiprocessors, or grid 0 where the
// tiles fill whole waves. A remainder under half a wave is shared together with the last whole
// wave (else each block would get only a few stages of it and a partial tile to write). Blocks get
// at least `min_stages` shared stages (fewer blocks share when there are few).
inline StreamK plan_stream_k(uint64_t tiles, unsigned tok_tiles, unsigned nk, unsigned sms, unsigned min_stages) {
  StreamK s;
  if (tiles == 0 || nk == 0 || sms == 0 || tok_tiles == 0 || tiles % sms == 0) return s;
  uint64_t dp = tiles / sms * sms;
  if (dp >= sms && 2 * (tiles - dp) < sms) dp -= sms;
  s.grid = sms;
  s.tok_tiles = tok_tiles;
  s.dp_tiles = unsigned(dp);
  s.nk = nk;
  s.sk_units = (tiles - dp) * nk;
  s.sk_blocks = unsigned(std::clamp<uint64_t>(s.sk_units / std::max(min_stages, 1u), 1, sms));
  for (uint64_t t = 0; t < tiles - dp; ++t) s.max_parts = std::max(s.max_parts, s.parts(t));
  return s;
}

}  // namespace vellum::cuda
