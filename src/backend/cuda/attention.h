// Paged attention kernels (plain C++17 interface shared with the host code).
//
// Two paths, both reading K/V through the block tables in the kernel:
// - split path (decode and short chunks): each query row r attends to positions [0, row_ctx[r]) of
//   its sequence (tables + row_table[r]). Contexts are split into fixed spans of kAttnSplit
//   positions; each span's partial (max, weight sum, weighted V sum) is computed the same way
//   whichever thread block takes it (16-bit pools: a block walks a run of spans of one KV head and
//   ≤4-head query group, K/V staged through shared memory by cp.async, scores and weighted sums on
//   tensor cores; round 7; since round 14 each warp streams its own tiles and the partials are per
//   256-position chunk), then the spans are merged in a fixed order: by the row's last block
//   when it has ≤ kAttnFuseSpans spans (round 7's kernel; round 5's in one-row launches, round
//   12), else by a second kernel. The split depends on positions only, never on the batch.
// - tensor-core path (prefill / verify chunks of 16-bit pools): FlashAttention-2 style, 64 query
//   rows of one sequence chunk × one query head per warp group of four, mma.sync m16n8k16 with f32
//   accumulation, Q and P rounded to the pool's 16-bit type, online softmax in f32. With 128 dims
//   in the default mode the same arithmetic runs on wgmma instead (attn_wgmma.h, round 27).
#pragma once

#include <cstdint>

#include "backend/cuda/cuda_kernels.h"

namespace vellum::cuda {

inline constexpr int kAttnSplit = 64;
inline constexpr int kMaxAttnGroup = 16;  // query heads per KV head
inline constexpr int kMaxAttnHeadDim = 256;
inline constexpr int kAttnTileRows = 64;  // query rows per tensor-core tile
// Rows with at most this many spans are merged by the decode kernel's last block of each (row, KV
// head group); longer rows by the combine kernel (one merging block per row would be a serial tail).
inline constexpr int kAttnFuseSpans = 32;
// Round 53: decode launches of more than AttnParams::small_rows and at most this many rows whose rows
// have at most kAttnFuseSpans spans (a decode graph's class of 1 025-2 048 positions and below) take
// round 7's kernel, not round 5's or round 14's (H200, llama3-8b Q4_K_M in decode graphs after 1 024
// positions, 4 / 6 / 8 / 12 sequences: +2.4 / +1.5 / +5.9 / +4.6%; after 2 048, the next class, which
// keeps the blocks rule, round 7's forced measured +9.3 / +3.5 / +1.0 / +0.1% against it, and 0.6-3%
// slower from 16 sequences: docs/cuda.md, round 53).
inline constexpr int64_t kAttnRound7Rows = 12;
// Round 54: and launches of at most this many rows whose rows have at most 2 · kAttnFuseSpans spans
// (the class of 2 049-4 096 positions), merged by the combine kernel. Round 7's forced against the
// blocks rule (round 14's kernel there), llama3-8b Q4_K_M in decode graphs, two alternating rounds:
// after 2 048 positions 4 / 6 / 8 / 12 sequences +7-8 / +2 / -1-0 / +1%; after 4 000: 0 / -4 / -5 / -4%.
inline constexpr int64_t kAttnRound7LongRows = 4;
// The deterministic mode's spans (round 24), by default: positions [z · S, (z + 1) · S) of every row,
// S = kDetSpanTiles tiles of 64 whatever its batch, are one tensor-core block's work; the spans are
// merged per row in order.
inline constexpr int kDetSpanTiles = 8;  // 512 positions: round 24 call 5 measured 4, 8 and 16

struct AttnParams {
  const float* q = nullptr;
  int64_t ldq = 0;
  float* out = nullptr;
  int64_t ldo = 0;
  // Round 34, the warpgroup prefill kernel only (attn_wg_takes; the caller sets them only when that
  // kernel takes every row of the launch): q16, q already rotated and rounded to the pool's type
  // (launch_rope_kv_rows, ld ldq), read instead of q; out16, out's bf16 copy (ld ldo) for the
  // output projection, written beside out.
  const void* q16 = nullptr;
  void* out16 = nullptr;
  KvPoolView kv;
  const int32_t* row_ctx = nullptr;
  const int32_t* row_table = nullptr;
  const int32_t* tables = nullptr;
  // Rows of the split path: split_rows[i] (nullptr: every row of the step, in order).
  const int32_t* split_rows = nullptr;
  int heads = 0;
  float scale = 1.0f;
  int max_splits = 0;
  float* part_acc = nullptr;  // [rows][heads][max_splits][head_dim]
  float* part_ml = nullptr;   // [rows][heads][max_splits][2]
  // Arrival counters of the fused merge, [rows][kv_heads][groups of 4 query heads]: zero before a
  // launch, and the kernel leaves them zero (16-bit pools with 64/128 dims; may be null otherwise).
  int32_t* counters = nullptr;
  // Launches of at most this many split rows on an F16 pool whose rows have at most 2k positions
  // take round 5's f32 decode kernel instead of round 7's or 14's (0: never): there it measured
  // 1-3% faster end to end with programmatic launch (H200, docs/cuda.md round 7). The deterministic
  // mode sets 0 so a row's kernel never depends on the batch.
  int64_t small_rows = 0;
  // The deterministic mode (round 14): every decode launch takes round 7's kernel, whatever its
  // rows, so a row's bits never depend on the batch (the default picks by launch size, below).
  int deterministic = 0;
  // A one-row launch's int8 copy of out for the next batch-1 int8 GEMV (round 8; nullptr: none):
  // q8_bytes(heads x head_dim) bytes laid out as launch_quantize_q8 writes them, scales at q8_xs_off.
  // Written by whichever kernel merges the row (the decode kernel's last block or the combine
  // kernel; head_dim a multiple of 32: 32 dims of a head are one quantization block), else by a
  // quantize kernel after them.
  int8_t* out_q8 = nullptr;
  int64_t q8_xs_off = 0;
  // Round 53: a decode launch of 2..kMmaRowsMax rows (one launch, no split_rows): out's int8 rows for
  // the output projection's int8 rows kernels, written where each row is merged (head_dim a multiple
  // of 32), as fused_kernels.h's NormRowsQ8 lays them out: rows q8_rows_stride bytes apart
  // (launch_quantize_q8_rows), or gemv_mma's x of q8_rows_nt tiles when the stride is 0
  // (launch_quantize_mma_x). nullptr: none.
  void* q8_rows = nullptr;
  size_t q8_rows_stride = 0;
  int q8_rows_nt = 0;
  // Set by the caller for a step of one token row (round 12; launch_attention ignores it in other
  // launches): the decode kernel may load the row's older K/V before its programmatic wait
  // (pdl.cuh), since only position ctx - 1 is written during the step.
  int kv_before_wait = 0;
  // The deterministic mode's tensor-core attention (round 24; 0: off): span slots per (row, head) in
  // part_acc ([rows][heads][spans][head_dim]) and part_ml ([rows][heads][spans][2]); attn_tc_kernel
  // writes each span's softmax state there and launch_attention_span_merge merges them into out.
  int spans = 0;
  // With spans: the query heads of a KV head share a block's mma rows (a tile's rows × group slots),
  // 64 slots a block; tc_sub blocks a tile = ceil(the launch's most tile rows × group / 64).
  int tc_sub = 1;
  int span_tiles = 0;  // with spans: tiles of 64 positions a span
};

// Whether every K/V row of the view starts at a multiple of 8 elements (the 16-byte loads of the
// 16-bit decode kernels).
bool rows_aligned8(const KvPoolView& kv);

// Counters launch_attention needs for `rows` split rows (attn_counters(...) int32 each).
int64_t attn_counters(int heads, int kv_heads, int64_t rows);

// Measurement knobs (process-wide; VELLUM_CUDA_ATTN_DECODE and VELLUM_CUDA_ATTN_SPB set them at the
// first launch): decode variant of 16-bit pools with 64/128 dims: 0 = the default (1 for small
// launches, AttnParams::small_rows; 2 up to kAttnRound7Rows rows of ≤ kAttnFuseSpans spans and up to
// kAttnRound7LongRows rows of ≤ 2 · kAttnFuseSpans; 4 for
// launches of at least two blocks per SM; 2 otherwise and in the deterministic mode), 1 = round 5
// (one span per block, registers, CUDA cores), 2 = round 7 (staged spans, tensor cores; Q and P rounded to the pool's type), 3 = variant
// 2 with 3 stages, 4 = round 14 (a cp.async ring of 2 tiles and an online softmax per warp, one
// partial per 256-position chunk; tensor cores, Q and P rounded as in 2), 5 = variant 4 with 3
// stages a warp;
// spans (variants 4/5: chunks) per block N: the grid gets ceil(max_splits / N) runs per (row,
// group) (0 = chosen per launch from the waves).
void set_attn_decode_variant(int variant);
int attn_decode_variant();
void set_attn_spans_per_block(int spans);
// Round 17: one-row launches (batch-1 decode) that can hold at least `min_positions` take the long
// kernel (a run of 16-position tiles a block, ≤ 32 runs merged by the row's last block) when the
// decode variant is 0: variant 0 = never, 1-6 = its shapes (VELLUM_CUDA_ATTN_LONG and
// VELLUM_CUDA_ATTN_LONG_MIN set them at the first launch; attention.cu lists the variants).
void set_attn_long(int variant, int min_positions);
int attn_long_variant();
int attn_long_min();
// Launches of the long kernel with its runs merged in a cluster (variant 6 where every KV head group's
// cluster of the launch's runs fits the device at once; otherwise it launches variant 4, the same bits).
int64_t attn_long_cluster_launches();
// Clusters of variant 6's launch for p (its max_splits, heads, KV heads and pool) with `runs` runs a
// cluster that the device holds at once (cudaOccupancyMaxActiveClusters; -1: not a 16-bit pool of 64
// or 128 dims, or the query failed).
int attn_long_max_clusters(const AttnParams& p, int runs);

// Split path over split rows [row0, row0 + rows) (indices into split_rows, or step rows).
cudaError_t launch_attention(const AttnParams& p, int64_t row0, int64_t rows, cudaStream_t stream);

// Up to 64 consecutive query rows of one sequence: row row0 + i sees positions [0, ctx0 + i) of the
// block table at tables + table. Four int32 so that a step uploads them as plain ints.
struct AttnTile {
  int32_t row0, rows, ctx0, table;
};
// Whether the tensor-core path takes this layer's pool view (F16 or BF16; 64 or 128 dims; rows at
// 16-byte offsets).
bool attn_tc_supported(const KvPoolView& kv);
// Every tile (device array of n_tiles) against every query head; p.split_rows / part_* unused.
cudaError_t launch_attention_tc(const AttnParams& p, const AttnTile* tiles, int n_tiles, cudaStream_t stream);
// With p.spans > 0, after launch_attention_tc: rows 0..rows-1 of the step, each its spans in order.
cudaError_t launch_attention_span_merge(const AttnParams& p, int64_t rows, cudaStream_t stream);

}  // namespace vellum::cuda
