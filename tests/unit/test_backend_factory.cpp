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

}  // namespace
}  // namespace vellum::cuda
#endif
