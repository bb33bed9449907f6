// Choosing a backend by device name (backend/backend_factory.h): the host-side part of the CUDA
// backend, checked in CI, which has nvcc but no GPU.

#include <gtest/gtest.h>

#include <string>

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
}

}  // namespace
}  // namespace vellum::cuda
#endif
