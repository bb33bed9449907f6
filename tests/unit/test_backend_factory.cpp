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
