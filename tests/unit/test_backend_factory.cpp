// Choosing a backend by device name (backend/backend_factory.h): the host-side part of the CUDA
// backend, checked in CI, which has nvcc but no GPU.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend/backend_factory.h"
#include "core/error.h"

namespace vellum::backend {
namespace {

TEST(BackendFactory, CudaDeviceIndexParsesCudaAndCudaN) {
  EXPECT_EQ(cuda_device_index("cuda"), 0);
  EXPECT_EQ(cuda_device_index("auto"), 0);
  EXPECT_EQ(cuda_device_index("cuda:0"), 0);
  EXPECT_EQ(cuda_device_index("cuda:3"), 3);
  EXPECT_EQ(cuda_device_index("cuda:12"), 12);
  for (const char* bad : {"cuda:", "cuda:x", "cuda:-1", "cuda:1.5", "cuda:99999", "gpu", "cpu", ""}) {
    EXPECT_THROW(cuda_device_index(bad), Error) << bad;
  }
}

TEST(BackendFactory, CpuAndUnknownDevices) {
  EXPECT_EQ(make_backend({"cpu", 1})->name(), "cpu");
  try {
    make_backend({"tpu", 1});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tpu"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_backend({"cuda:zero", 1}), Error);
}

// Without a visible GPU, "auto" falls back to the CPU and "cuda" is a clear error, not a crash.
// With one (the device machine), both give the CUDA backend.
TEST(BackendFactory, AutoAndCudaFollowTheMachine) {
  if (cuda_available()) {
    EXPECT_EQ(make_backend({"auto", 1})->name().rfind("cuda:0", 0), 0u);
    EXPECT_EQ(make_backend({"cuda", 1})->name().rfind("cuda:0", 0), 0u);
    EXPECT_THROW(make_backend({"cuda:999", 1}), Error);
  } else {
    EXPECT_EQ(make_backend({"auto", 1})->name(), "cpu");
    try {
      make_backend({"cuda", 1});
      FAIL() << "expected an error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace vellum::backend

#if VELLUM_HAVE_CUDA
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/dq_mma.h"
#include "backend/cuda/dq_tma.h"
#include "backend/cuda/fused_kernels.h"
#include "backend/cuda/gemv_kernels.h"
#include "backend/cuda/gemv_mma.h"

namespace vellum::cuda {
namespace {

// Device row sizes are host arithmetic (no GPU needed): GGUF sizes, except the re-laid-out types.
TEST(CudaLayout, DeviceRowBytes) {
  EXPECT_EQ(device_row_bytes(TensorType::BF16, 4096), 8192u);
  EXPECT_EQ(device_row_bytes(TensorType::F32, 172), 688u);
  // Q4_K: groups of 4 super-blocks (4 headers, then 512 quant bytes); a short last group is padded.
  EXPECT_EQ(device_row_bytes(TensorType::Q4_K, 4096), 16u * 144u);
  EXPECT_EQ(device_row_bytes(TensorType::Q4_K, 1280), 2u * 576u);
  // Q8_0: groups of 8 blocks = 16 bytes of scales + 256 quants; same bytes as GGUF for whole groups.
  EXPECT_EQ(device_row_bytes(TensorType::Q8_0, 4096), 4096u / 32 * 34);
  EXPECT_EQ(device_row_bytes(TensorType::Q8_0, 96), 16u + 96u);  // a 3-block tail group
  EXPECT_EQ(device_row_bytes(TensorType::Q8_0, 96) % 16, 0u);
  // Q6_K: groups of 4 super-blocks (4 x 210 bytes + 8 of padding); a short last group is padded.
  EXPECT_EQ(device_row_bytes(TensorType::Q6_K, 4096), 4u * 848u);
  EXPECT_EQ(device_row_bytes(TensorType::Q6_K, 512), 848u);
  EXPECT_TRUE(needs_repack(TensorType::Q8_0));
  EXPECT_TRUE(needs_repack(TensorType::Q6_K));
  EXPECT_TRUE(needs_repack(TensorType::Q4_K));
  EXPECT_FALSE(needs_repack(TensorType::Q5_K));
}

TEST(CudaLayout, SupportedTypes) {
  for (TensorType t : {TensorType::F32, TensorType::F16, TensorType::BF16, TensorType::Q4_0, TensorType::Q4_1,
                       TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0, TensorType::Q2_K, TensorType::Q3_K,
                       TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K}) {
    EXPECT_TRUE(kernel_supports(t)) << tensor_type_name(t);
  }
  EXPECT_FALSE(kernel_supports(TensorType::IQ2_XXS));
  EXPECT_FALSE(kernel_supports(TensorType::I32));
}

// dq_mma's K split keeps a launch within one wave of blocks (two a multiprocessor up to 64 tokens,
// one above): rounding up had put 128 tokens x 14 336 rows (112 tiles) into 224 blocks on 132
// multiprocessors, 1.7 waves, the second a tail as long as the first.
TEST(CudaLayout, DqMmaPlanStaysWithinOneWave) {
  struct Case {
    int64_t n, k, m;
  };
  for (const Case c : {Case{14336, 4096, 128}, Case{14336, 4096, 32}, Case{4096, 4096, 32}, Case{4096, 14336, 64},
                       Case{1024, 4096, 128}, Case{14336, 4096, 512}}) {
    const DqMmaPlan p = dq_mma_plan(c.n, c.k, c.m, 132);
    const int64_t tokens = int64_t(p.nt) * 8, per_sm = tokens <= 64 ? 2 : 1;
    const int64_t tiles = int64_t(p.tok_tiles) * p.row_tiles, blocks = tiles * p.splits;
    EXPECT_EQ(p.row_tiles * 128u >= uint64_t(c.n) && (p.row_tiles - 1) * 128u < uint64_t(c.n), true) << c.n;
    EXPECT_GE(int64_t(p.tok_tiles) * tokens, c.m);
    EXPECT_GE(p.splits, 1u);
    if (p.splits > 1) {
      EXPECT_LE(blocks, per_sm * 132) << c.n << "x" << c.k << " rows " << c.m << ": " << p.splits << " splits";
      if (int64_t(p.splits) < c.k / 64 / 8) {
        EXPECT_GT(blocks + tiles, per_sm * 132) << "one more split would still fit";
      }
      EXPECT_LE(int64_t(p.splits) * 8, c.k / 64) << "each split at least 8 stages";
      EXPECT_EQ(p.ws_floats, size_t(blocks) * 128 * size_t(tokens));
      EXPECT_EQ(p.counters, size_t(tiles));
    }
  }
  EXPECT_EQ(dq_mma_plan(14336, 4096, 128, 132).splits, 1u);  // 112 tiles: one block each
  EXPECT_EQ(dq_mma_plan(4096, 4096, 32, 132).splits, 8u);    // 32 tiles x 8 = 256 of 264 slots
  EXPECT_EQ(dq_mma_plan(4096, 4096, 32, 132, 3).splits, 3u); // forced
}

// Round 28's register-A bulk-copy kernel (dq_tma.h, kind 4): its token tile by rows and weight size
// (64 up to 64 rows, 128 up to 128 and for small weights up to 512, else 256), tiles that cover the
// matmul, a K split that stays within one wave with at least 8 stages a split, and the workspace
// for the split's partial tiles.
TEST(CudaLayout, DqTmaRegisterAPlan) {
  struct Case {
    int64_t n, k, m, tokens;
  };
  for (const Case c : {Case{14336, 4096, 40, 64}, Case{14336, 4096, 64, 64}, Case{14336, 4096, 65, 128},
                       Case{14336, 4096, 256, 256}, Case{14336, 4096, 512, 256}, Case{4096, 14336, 512, 256},
                       Case{4096, 4096, 512, 128}, Case{1024, 4096, 512, 128}, Case{4096, 4096, 513, 256},
                       Case{1024, 4096, 1024, 256}, Case{1000, 2048, 300, 128}, Case{77, 256, 200, 128}}) {
    const DqMmaPlan p = dq_tma_plan(c.n, c.k, c.m, 132, 0, 0, 4);
    const int64_t tokens = int64_t(p.nt) * 8, tiles = int64_t(p.tok_tiles) * p.row_tiles, blocks = tiles * p.splits;
    EXPECT_EQ(p.rs, 4) << c.n << "x" << c.k << " rows " << c.m;
    EXPECT_EQ(tokens, c.tokens) << c.n << "x" << c.k << " rows " << c.m;
    EXPECT_TRUE(p.row_tiles * 128u >= uint64_t(c.n) && (p.row_tiles - 1) * 128u < uint64_t(c.n)) << c.n;
    EXPECT_TRUE(int64_t(p.tok_tiles) * tokens >= c.m && int64_t(p.tok_tiles - 1) * tokens < c.m) << c.m;
    EXPECT_GE(p.splits, 1u);
    if (p.splits > 1) {
      EXPECT_LE(blocks, 132) << c.n << "x" << c.k << " rows " << c.m << ": " << p.splits << " splits";
      EXPECT_LE(int64_t(p.splits) * 8, c.k / 64) << "each split at least 8 stages";
      EXPECT_EQ(p.ws_floats, size_t(blocks) * 128 * size_t(tokens));
      EXPECT_EQ(p.counters, size_t(tiles));
    } else {
      EXPECT_EQ(p.ws_floats, 0u);
    }
  }
  EXPECT_EQ(dq_tma_plan(1024, 4096, 512, 132, 0, 0, 4).splits, 4u);       // 32 tiles x 4 = 128 of 132 slots
  EXPECT_EQ(dq_tma_plan(14336, 4096, 512, 132, 0, 0, 4).splits, 1u);      // 224 tiles: more than a wave
  EXPECT_EQ(dq_tma_plan(14336, 4096, 512, 132, 128, 0, 4).nt * 8, 128);   // forced token tile
  EXPECT_EQ(dq_tma_plan(14336, 4096, 512, 132, 192, 0, 4).nt * 8, 256);   // no 192-token register-A kernel
  EXPECT_EQ(dq_tma_plan(4096, 4096, 512, 132, 0, 3, 4).splits, 3u);       // forced split
  EXPECT_EQ(dq_tma_plan(14336, 4096, 512, 132, 0, 0, 3).rs, 3);           // round 26's kernel
  // Round 33: a forced 64-token tile stays 64 (it fell into round 26's 192/256 choice), Q8_0's small
  // weights take 256-token tiles above 256 rows, and the K split cuts at whole super-blocks.
  EXPECT_EQ(dq_tma_plan(6144, 4096, 300, 132, 64, 1, 4).nt * 8, 64);
  EXPECT_EQ(dq_tma_plan(4096, 4096, 512, 132, 0, 0, 4, TensorType::Q8_0).nt * 8, 256);
  EXPECT_EQ(dq_tma_plan(4096, 4096, 256, 132, 0, 0, 4, TensorType::Q8_0).nt * 8, 128);
  EXPECT_EQ(dq_tma_plan(4096, 4096, 512, 132, 0, 0, 4, TensorType::Q4_K).nt * 8, 128);
  EXPECT_EQ(dq_tma_plan(4096, 256, 512, 132, 0, 8, 4).splits, 1u);  // k 256: one super-block, one split
  EXPECT_EQ(dq_tma_plan(4096, 256, 512, 132, 0, 8, 3).splits, 4u);  // round 26's kernel splits by stages
}

// Round 33: a group's plan is one weight's with all the segments' row tiles (Q, K, V of llama3-8b:
// 48 tiles of 256 tokens at 512 rows, K unsplit).
TEST(CudaLayout, DqTmaGroupPlan) {
  const DqSeg qkv[3] = {{TensorType::Q4_K, nullptr, 4096, nullptr, 4096, nullptr},
                        {TensorType::Q4_K, nullptr, 1024, nullptr, 1024, nullptr},
                        {TensorType::Q6_K, nullptr, 1000, nullptr, 1000, nullptr}};  // 8 tiles, the last partial
  const DqMmaPlan p = dq_tma_group_plan(qkv, 3, 4096, 512, 132);
  EXPECT_EQ(p.row_tiles, 32u + 8u + 8u);
  EXPECT_EQ(p.nt * 8, 256);
  EXPECT_EQ(p.tok_tiles, 2u);
  EXPECT_EQ(p.splits, 1u);
  EXPECT_EQ(p.rs, 4);
  const DqMmaPlan small = dq_tma_group_plan(qkv, 3, 4096, 64, 132);  // 48 tiles of 64 tokens: split to fill the wave
  EXPECT_EQ(small.nt * 8, 64);
  EXPECT_EQ(small.splits, 2u);
  EXPECT_EQ(small.ws_floats, size_t(48) * 2 * 128 * 64);
}

// Round 33: gate/up cut into whole waves of 256-token tiles and a last wave of 128-token tiles.
TEST(CudaLayout, DqTmaWaveSplit) {
  auto* gw = reinterpret_cast<const uint8_t*>(uintptr_t(1) << 20);
  auto* uw = reinterpret_cast<const uint8_t*>(uintptr_t(1) << 30);
  auto* out = reinterpret_cast<uint8_t*>(uintptr_t(1) << 36);
  const size_t rb = device_row_bytes(TensorType::Q4_K, 4096);
  const int64_t n = 14336;
  const DqSeg gu[2] = {{TensorType::Q4_K, gw, n, out, n, nullptr}, {TensorType::Q4_K, uw, n, out + size_t(n) * 512 * 2, n, nullptr}};
  // 512 rows: 2 x 112 row tiles x 2 token tiles = 448 = 3.4 waves -> 198 row tiles (3 waves) + 26.
  const DqWaveSplit w = dq_tma_wave_split(gu, 2, 4096, 512, 132, true);
  ASSERT_EQ(w.main_count, 2);
  ASSERT_EQ(w.tail_count, 1);
  EXPECT_EQ(w.main[0].n, n);
  EXPECT_EQ(w.main[1].w, uw);
  EXPECT_EQ(w.main[1].n, 86 * 128);
  EXPECT_EQ(w.tail[0].w, uw + size_t(86 * 128) * rb);
  EXPECT_EQ(w.tail[0].n, n - 86 * 128);
  EXPECT_EQ(static_cast<uint8_t*>(w.tail[0].out), out + size_t(n) * 512 * 2 + size_t(86 * 128) * 2);  // bf16 columns
  EXPECT_EQ(w.tail[0].ldo, n);
  EXPECT_EQ(w.main_plan.row_tiles * w.main_plan.tok_tiles, 396u);
  EXPECT_EQ(w.main_plan.nt * 8, 256);
  EXPECT_EQ(w.main_plan.splits, 1u);
  EXPECT_EQ(w.tail_plan.row_tiles * w.tail_plan.tok_tiles, 104u);
  EXPECT_EQ(w.tail_plan.nt * 8, 128);
  EXPECT_EQ(w.tail_plan.splits, 1u);
  // f32 outputs move 4 bytes a column; a partial last tile (4 600 rows: 36 tiles each) at 300 rows.
  const DqSeg odd[2] = {{TensorType::Q6_K, gw, 4600, out, 4600, nullptr}, {TensorType::Q6_K, uw, 4600, out, 4600, nullptr}};
  const DqWaveSplit v = dq_tma_wave_split(odd, 2, 4096, 300, 132, false);
  ASSERT_EQ(v.main_count, 2);
  ASSERT_EQ(v.tail_count, 1);
  EXPECT_EQ(v.main[0].n, 4600);
  EXPECT_EQ(v.main[1].n, 30 * 128);
  EXPECT_EQ(v.tail[0].n, 4600 - 30 * 128);
  EXPECT_EQ(static_cast<uint8_t*>(v.tail[0].out), out + size_t(30 * 128) * 4);
  EXPECT_EQ(v.tail_plan.tok_tiles, 3u);
  // No cut: less than a wave (256 rows), a last wave too large for 128-token tiles (1 024 rows).
  EXPECT_EQ(dq_tma_wave_split(gu, 2, 4096, 256, 132, true).main_count, 0);
  EXPECT_EQ(dq_tma_wave_split(gu, 2, 4096, 1024, 132, true).main_count, 0);
  EXPECT_EQ(dq_tma_wave_split(gu, 2, 4095, 512, 132, true).main_count, 0);  // k not whole blocks
}

// Round 36: the fused SwiGLU's plan (the unfused plan's token tile and K split over 64-row pair
// tiles, its scratch) and its cut into whole waves and a last wave of 128-token tiles.
TEST(CudaLayout, DqTmaFusedSwiglu) {
  auto* gw = reinterpret_cast<const uint8_t*>(uintptr_t(1) << 20);
  auto* uw = reinterpret_cast<const uint8_t*>(uintptr_t(1) << 30);
  auto* out = reinterpret_cast<uint8_t*>(uintptr_t(1) << 36);
  const size_t rb = device_row_bytes(TensorType::Q4_K, 4096);
  const int64_t n = 14336;
  const DqMmaPlan like = dq_tma_plan(n, 4096, 512, 132, 0, 0, 4);
  ASSERT_EQ(like.nt * 8, 256);
  ASSERT_EQ(like.splits, 1u);
  // 512 rows: 224 pair tiles x 2 token tiles = 448 = 3.4 waves -> 198 pair tiles (3 waves) + 26 x 4.
  const DqSwigluCut c = dq_tma_swiglu_cut(TensorType::Q4_K, gw, uw, out, n, 4096, 512, 132, like);
  EXPECT_EQ(c.main_rows, 198 * 64);
  EXPECT_EQ(c.main_plan.row_tiles, 198u);
  EXPECT_EQ(c.main_plan.tok_tiles, 2u);
  EXPECT_EQ(c.main_plan.nt * 8, 256);
  EXPECT_EQ(c.tail_plan.row_tiles, 26u);
  EXPECT_EQ(c.tail_plan.tok_tiles, 4u);
  EXPECT_EQ(c.tail_plan.nt * 8, 128);
  EXPECT_EQ(c.tail_plan.splits, 1u);
  EXPECT_EQ(c.tail_gate, gw + size_t(198 * 64) * rb);
  EXPECT_EQ(c.tail_up, uw + size_t(198 * 64) * rb);
  EXPECT_EQ(static_cast<uint8_t*>(c.tail_out), out + size_t(198 * 64) * 2);
  // Round 37's split tail: the same whole waves, the 26 other pair tiles as 256-token tiles split
  // two ways in K (104 blocks), Q8_0 too; its scratch: a counter a tile.
  const DqSwigluCut st = dq_tma_swiglu_cut(TensorType::Q8_0, gw, uw, out, n, 4096, 512, 132, like, true);
  EXPECT_EQ(st.main_rows, 198 * 64);
  EXPECT_EQ(st.main_plan.splits, 1u);
  EXPECT_EQ(st.tail_plan.row_tiles, 26u);
  EXPECT_EQ(st.tail_plan.tok_tiles, 2u);
  EXPECT_EQ(st.tail_plan.nt * 8, 256);
  EXPECT_EQ(st.tail_plan.splits, 2u);
  EXPECT_EQ(st.tail_plan.counters, size_t(26 * 2));
  EXPECT_EQ(st.tail_gate, gw + size_t(198 * 64) * device_row_bytes(TensorType::Q8_0, 4096));
  // 4 600 rows at 512: 66 + 6 pair tiles, 24 split blocks; 1 024 rows: 224 x 4 = 896 = 6.8 waves ->
  // 198 + 26 x 4 x 2 = 208 blocks, more than a wave: no cut.
  EXPECT_EQ(dq_tma_swiglu_cut(TensorType::Q4_K, gw, uw, out, 4600, 4096, 512, 132, dq_tma_plan(4600, 4096, 512, 132, 0, 0, 4), true).main_rows,
            66 * 64);
  EXPECT_EQ(dq_tma_swiglu_cut(TensorType::Q4_K, gw, uw, out, n, 4096, 1024, 132, dq_tma_plan(n, 4096, 1024, 132, 0, 0, 4), true).main_rows, 0);
  // A partial last pair tile: 4 600 rows = 72 pair tiles; at 300 rows 144 blocks -> 66 + 6 x 3.
  const DqSwigluCut d = dq_tma_swiglu_cut(TensorType::Q6_K, gw, uw, out, 4600, 4096, 300, 132, dq_tma_plan(4600, 4096, 300, 132, 0, 0, 4));
  EXPECT_EQ(d.main_rows, 66 * 64);
  EXPECT_EQ(d.tail_plan.row_tiles, 6u);
  EXPECT_EQ(d.tail_plan.tok_tiles, 3u);
  // No cut: less than a wave (256 rows), a last wave too large (1 024 rows), a split or 128-token plan.
  EXPECT_EQ(dq_tma_swiglu_cut(TensorType::Q4_K, gw, uw, out, n, 4096, 256, 132, dq_tma_plan(n, 4096, 256, 132, 0, 0, 4)).main_rows, 0);
  EXPECT_EQ(dq_tma_swiglu_cut(TensorType::Q4_K, gw, uw, out, n, 4096, 1024, 132, dq_tma_plan(n, 4096, 1024, 132, 0, 0, 4)).main_rows, 0);
  EXPECT_EQ(dq_tma_swiglu_cut(TensorType::Q4_K, gw, uw, out, n, 4096, 512, 132, dq_tma_plan(n, 4096, 512, 132, 128, 0, 4)).main_rows, 0);
  EXPECT_EQ(dq_tma_swiglu_cut(TensorType::F16, gw, uw, out, n, 4096, 512, 132, like).main_rows, 0);
  // The plan keeps the unfused split; its scratch holds a partial 128-row tile per pair tile and split.
  const DqMmaPlan small_like = dq_tma_plan(1000, 1024, 40, 132, 0, 0, 4);
  ASSERT_GT(small_like.splits, 1u);
  const DqMmaPlan f = dq_tma_swiglu_plan(1000, 40, small_like);
  EXPECT_EQ(f.splits, small_like.splits);
  EXPECT_EQ(f.nt, small_like.nt);
  EXPECT_EQ(f.row_tiles, 16u);
  EXPECT_EQ(f.tok_tiles, 1u);
  EXPECT_EQ(f.ws_floats, size_t(16) * f.splits * 128 * 64);
  EXPECT_EQ(f.counters, size_t(16));
}

// Round 34: which RoPE layouts and pools the many-row RoPE kernel takes (host predicate; the
// backend falls back to rope_store_kv elsewhere), and launches refused before they reach a device.
TEST(CudaLayout, RopeKvRowsTakes) {
  RopeParams p{};
  p.magnitude = 1.0;
  p.half = 64;
  p.interleaved = 0;
  KvPoolView kv;
  kv.block_elems = 16 * 8 * 128 * 2, kv.k_off = 0, kv.v_off = 16 * 8 * 128, kv.block_size = 16, kv.kv_heads = 8, kv.head_dim = 128;
  kv.type = TensorType::F16;
  EXPECT_TRUE(rope_kv_rows_takes(p, 128, kv));  // halves, whole head
  kv.type = TensorType::BF16;
  EXPECT_TRUE(rope_kv_rows_takes(p, 128, kv));
  p.interleaved = 1;
  EXPECT_TRUE(rope_kv_rows_takes(p, 128, kv));  // Llama's pairs (2i, 2i + 1)
  p.half = 48;
  EXPECT_TRUE(rope_kv_rows_takes(p, 128, kv));  // partial rotary dims, interleaved
  p.half = 3;
  EXPECT_FALSE(rope_kv_rows_takes(p, 128, kv));  // an odd number of pairs: a float4 would straddle
  p.interleaved = 0, p.half = 6;
  EXPECT_FALSE(rope_kv_rows_takes(p, 128, kv));  // halves need 4 pairs a task
  p.half = 32;
  EXPECT_TRUE(rope_kv_rows_takes(p, 128, kv));
  EXPECT_FALSE(rope_kv_rows_takes(p, 64 + 2, kv));  // head_dim not the pool's
  p.half = 80;
  EXPECT_FALSE(rope_kv_rows_takes(p, 128, kv));  // more rotated dims than the head has
  p.half = 64;
  kv.type = TensorType::F32;
  EXPECT_FALSE(rope_kv_rows_takes(p, 128, kv));  // the attention that reads q16 takes 16-bit pools
  kv.type = TensorType::F16, kv.k_off = 2;
  EXPECT_FALSE(rope_kv_rows_takes(p, 128, kv));  // 8-byte stores
  kv.k_off = 0;
  float f = 0.0f;
  EXPECT_EQ(launch_rope_kv_rows(&f, 4096, &f, &f, nullptr, 1, 128, nullptr, p, kv, nullptr, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(launch_rope_kv_rows(&f, 4095, &f, &f, &f, 1, 128, nullptr, p, kv, nullptr, nullptr), cudaErrorInvalidValue);
  // A norm that writes neither its f32 rows nor a copy.
  EXPECT_EQ(launch_add_rms_norm(&f, nullptr, &f, 2, 4096, 1e-5f, nullptr, nullptr, nullptr, nullptr, false), cudaErrorInvalidValue);
}

// gemv_mma's fragment-ordered x (round 41): every int8 element and scale pair has its own place
// inside mma_x_bytes, and the 16-byte piece lane 4g + t loads for sub-blocks 2p, 2p + 1 holds
// exactly mma.sync's B fragments b0 = elements 4t..4t+3 and b1 = 16+4t..16+4t+3 of token g, in that
// order. (A first version sized the buffer for half the scale pairs.)
TEST(CudaLayout, GemvMmaFragmentOrderedX) {
  for (const int64_t k : {256, 1280, 4096}) {
    const int64_t supers = k / 256, frag_bytes = k * kMmaTile;
    std::vector<int> seen(size_t(frag_bytes), 0);
    for (int64_t j = 0; j < supers; ++j) {
      for (int token = 0; token < kMmaTile; ++token) {
        for (int e = 0; e < 256; ++e) {
          const int64_t b = mma_x_frag_byte(j, token, e);
          ASSERT_GE(b, 0);
          ASSERT_LT(b, frag_bytes);
          ++seen[size_t(b)];
          const int s = e / 32, i = e % 32, t = (i % 16) / 4;
          const int64_t piece = (j * 4 + s / 2) * 32 + 4 * token + t;  // the uint4 lane 4·token + t loads
          const int64_t in_piece = (s % 2) * 8 + (i < 16 ? 0 : 4) + (i % 16) % 4;
          EXPECT_EQ(b, piece * 16 + in_piece) << k << " " << j << " " << token << " " << e;
        }
      }
    }
    for (const int n : seen) ASSERT_EQ(n, 1) << "k " << k;
    const int64_t scale_pairs = (mma_x_min_offset(k) - frag_bytes) / 8;
    std::vector<int> pairs(size_t(scale_pairs), 0);
    for (int64_t j = 0; j < supers; ++j) {
      for (int token = 0; token < kMmaTile; ++token) {
        for (int s = 0; s < 8; ++s) {
          const int64_t q = mma_x_scale_index(j, token, s);
          ASSERT_LT(q, scale_pairs) << "k " << k;
          ++pairs[size_t(q)];
          EXPECT_EQ(q / 2, j * 32 + s * 4 + token / 2);  // the float4 lane t = token / 2 loads
          EXPECT_EQ(q % 2, token % 2);
        }
      }
    }
    for (const int n : pairs) ASSERT_EQ(n, 1) << "k " << k;
    // The minimums' tf32 pairs (round 42) fill the rest: lane 4·token + t's float4 holds hi of
    // sub-blocks t and t + 4, then lo of both (mma.sync m16n8k8 tf32: b0 row t, b1 row t + 4, column g).
    const int64_t min_floats = int64_t((mma_x_bytes(k, kMmaTile) - size_t(mma_x_min_offset(k))) / 4);
    std::vector<int> mins(size_t(min_floats), 0);
    for (int64_t j = 0; j < supers; ++j) {
      for (int token = 0; token < kMmaTile; ++token) {
        for (int s = 0; s < 8; ++s) {
          for (const bool lo : {false, true}) {
            const int64_t f = mma_x_min_index(j, token, s, lo);
            ASSERT_LT(f, min_floats) << "k " << k;
            ++mins[size_t(f)];
            EXPECT_EQ(f / 4, j * 32 + 4 * token + s % 4);
            EXPECT_EQ(f % 4, (lo ? 2 : 0) + s / 4);
          }
        }
      }
    }
    for (const int n : mins) ASSERT_EQ(n, 1) << "k " << k;
  }
}

// Round 44: the rows kernel stages a super-block's x side as three contiguous runs (gemv_mma.cu,
// XStageCopy): its B fragments in bytes [2 048·j, 2 048·(j + 1)), its scale pairs in the 512 bytes
// at k·kMmaTile + 512·j and the minimums' pairs in the 512 bytes at mma_x_min_offset(k) + 512·j,
// each at the same offset inside its run as the kernel reads it from global memory.
TEST(CudaLayout, GemvMmaXSidePerSuperBlock) {
  for (const int64_t k : {256, 1280, 4096}) {
    const int64_t frag_bytes = k * kMmaTile, fb = kMmaTile * 256;
    for (int64_t j = 0; j < k / 256; ++j) {
      for (int token = 0; token < kMmaTile; ++token) {
        for (int e = 0; e < 256; ++e) {
          const int64_t b = mma_x_frag_byte(j, token, e);
          ASSERT_GE(b, j * fb);
          ASSERT_LT(b, (j + 1) * fb);
        }
        for (int s = 0; s < 8; ++s) {
          const int64_t pair_byte = frag_bytes + mma_x_scale_index(j, token, s) * 8;
          ASSERT_GE(pair_byte, frag_bytes + 512 * j);
          ASSERT_LT(pair_byte, frag_bytes + 512 * (j + 1));
          for (const bool lo : {false, true}) {
            const int64_t min_byte = mma_x_min_offset(k) + mma_x_min_index(j, token, s, lo) * 4;
            ASSERT_GE(min_byte, mma_x_min_offset(k) + 512 * j);
            ASSERT_LT(min_byte, mma_x_min_offset(k) + 512 * (j + 1));
          }
        }
      }
    }
  }
}

// Round 51: x of 2 tiles (9..16 token rows) is the one-tile layout of a K twice as long. Every element, scale pair and minimums' pair of every token has its own place inside
// mma_x_bytes(k, rows), and a super-block's x side is still three contiguous runs (what
// XStageCopy copies): its tiles' B fragments in [2 048·nt·j, 2 048·nt·(j + 1)), their scale pairs
// and their minimums' pairs in 512·nt bytes each.
TEST(CudaLayout, GemvMmaTiledX) {
  EXPECT_EQ(mma_tiles(1), 1);
  EXPECT_EQ(mma_tiles(8), 1);
  EXPECT_EQ(mma_tiles(9), 2);
  EXPECT_EQ(mma_tiles(kMmaRowsMax), 2);
  for (const int rows : {9, 12, 16}) {
    const int nt = mma_tiles(rows);
    for (const int64_t k : {256, 1280}) {
      const int64_t kv = k * nt, frag_bytes = kv * kMmaTile, min_off = mma_x_min_offset(kv);
      ASSERT_EQ(mma_x_bytes(k, rows), size_t(nt) * mma_x_bytes(k, kMmaTile));
      std::vector<int> seen(mma_x_bytes(k, rows), 0);
      for (int64_t j = 0; j < k / 256; ++j) {
        for (int token = 0; token < kMmaTile * nt; ++token) {
          const int64_t vj = mma_x_vsb(j, token, nt);
          const int col = token % kMmaTile;
          for (int e = 0; e < 256; ++e) {
            const int64_t b = mma_x_frag_byte(vj, col, e);
            ASSERT_GE(b, 2048 * nt * j);
            ASSERT_LT(b, 2048 * nt * (j + 1));
            ++seen[size_t(b)];
          }
          for (int s = 0; s < 8; ++s) {
            const int64_t pair_byte = frag_bytes + mma_x_scale_index(vj, col, s) * 8;
            ASSERT_GE(pair_byte, frag_bytes + 512 * nt * j);
            ASSERT_LT(pair_byte, frag_bytes + 512 * nt * (j + 1));
            for (int i = 0; i < 8; ++i) ++seen[size_t(pair_byte + i)];
            for (const bool lo : {false, true}) {
              const int64_t min_byte = min_off + mma_x_min_index(vj, col, s, lo) * 4;
              ASSERT_GE(min_byte, min_off + 512 * nt * j);
              ASSERT_LT(min_byte, min_off + 512 * nt * (j + 1));
              for (int i = 0; i < 4; ++i) ++seen[size_t(min_byte + i)];
            }
          }
        }
      }
      for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << "rows " << rows << " k " << k << " byte " << i;
    }
  }
}

// Round 52: which weights a 2-16-row step launches together. gemv_mma merges weights only where
// each alone would take the merged launch's shape (a row's bits depend on it); the rows GEMV needs
// every segment but the last a multiple of 4 rows (a warp's rows in one segment) and no rows_mma.
TEST(CudaLayout, RowsFusedSupports) {
  const auto segs = [](std::initializer_list<int64_t> rows) {
    GemvSegs s;
    for (const int64_t n : rows) s.add(nullptr, n, nullptr, nullptr);
    return s;
  };
  const int sms = 132;  // an H100 / H200: "wide" from 4 x 132 blocks of 16 rows
  EXPECT_TRUE(gemv_mma_segs_supports(TensorType::Q4_K, segs({4096, 1024}), 4096, sms));       // llama3-8b Q, K
  EXPECT_TRUE(gemv_mma_segs_supports(TensorType::Q8_0, segs({4096, 1024, 1024}), 4096, sms));  // and V
  EXPECT_TRUE(gemv_mma_segs_supports(TensorType::Q4_K, segs({14336, 14336}), 4096, sms));     // both wide
  // 896 + 64 blocks: the merged launch is wide (4 warps a block), 1 024 rows alone are not (8).
  EXPECT_FALSE(gemv_mma_segs_supports(TensorType::Q4_K, segs({14336, 1024}), 4096, sms));
  EXPECT_TRUE(gemv_mma_segs_supports(TensorType::Q8_0, segs({14336, 1024}), 4096, sms));  // Q8_0: one shape
  EXPECT_TRUE(gemv_mma_segs_supports(TensorType::Q4_K, segs({14336, 1024}), 14336, sms));  // long rows: one shape
  EXPECT_FALSE(gemv_mma_segs_supports(TensorType::Q4_K, segs({4096, 1024}), 4000, sms));   // k % 256
  EXPECT_FALSE(gemv_mma_segs_supports(TensorType::F16, segs({4096, 1024}), 4096, sms));
  EXPECT_TRUE(gemv_i8_rows_segs_supports(TensorType::Q4_K, segs({4096, 1024, 1024}), 4096, 2));
  EXPECT_TRUE(gemv_i8_rows_segs_supports(TensorType::Q4_K, segs({4096, 1023}), 4096, 2));   // the last may be ragged
  EXPECT_FALSE(gemv_i8_rows_segs_supports(TensorType::Q4_K, segs({4094, 1024}), 4096, 2));  // a warp across two
  EXPECT_TRUE(gemv_i8_rows_segs_supports(TensorType::Q4_K, segs({4096, 1024}), 4096, 12));  // groups of 8 rows
  EXPECT_FALSE(gemv_i8_rows_fused_supports(TensorType::Q4_K, 4096, 16));  // rows_mma's from 16 rows
  EXPECT_TRUE(gemv_i8_rows_fused_supports(TensorType::Q6_K, 4096, 16));   // Q6_K's from 32
  EXPECT_FALSE(gemv_i8_rows_fused_supports(TensorType::Q4_K, 4096, 1));
}

// Round 43's row norm: a producer owns whole blocks of 32 rows, and a consumer needs a k the
// copy's groups of 32 divide (and, for Q8_0, the default kernel, not a persistent knob variant).
TEST(CudaLayout, RowNormShapes) {
  EXPECT_TRUE(gemv_norm_out_supports(TensorType::Q4_K, 4096, 14336));
  EXPECT_TRUE(gemv_norm_out_supports(TensorType::Q6_K, 4096, 14336));
  EXPECT_TRUE(gemv_norm_out_supports(TensorType::Q8_0, 896, 4864));
  EXPECT_FALSE(gemv_norm_out_supports(TensorType::Q4_K, 4080, 4096));  // not whole 32-row blocks
  EXPECT_FALSE(gemv_norm_out_supports(TensorType::Q4_K, 4096, 4000));  // not whole super-blocks
  EXPECT_FALSE(gemv_norm_out_supports(TensorType::F16, 4096, 4096));
  EXPECT_FALSE(gemv_norm_out_supports(TensorType::Q4_K, 0, 4096));
  EXPECT_TRUE(gemv_norm_in_supports(TensorType::Q4_K, 4096));
  EXPECT_TRUE(gemv_norm_in_supports(TensorType::Q8_0, 896));
  EXPECT_FALSE(gemv_norm_in_supports(TensorType::BF16, 4096));
  EXPECT_FALSE(gemv_norm_in_supports(TensorType::Q6_K, 896));  // 896 is not whole super-blocks
  // The z copy is laid out as every int8 copy: k bytes rounded to 16, then a scale pair per 32.
  EXPECT_EQ(q8_bytes(4096), 4096u + 128u * 8u);
  EXPECT_EQ(q8_bytes(896), 896u + 28u * 8u);
}

}  // namespace
}  // namespace vellum::cuda
#endif
