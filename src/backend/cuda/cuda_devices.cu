#include <cuda_runtime.h>

#include "backend/cuda/cuda_devices.h"

namespace vellum::cuda {

std::vector<DeviceInfo> list_devices(std::string* error) {
  std::vector<DeviceInfo> out;
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    if (error) *error = cudaGetErrorString(rc);
    return out;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    out.push_back({i, prop.name, prop.major, prop.minor, prop.totalGlobalMem, prop.multiProcessorCount});
  }
  return out;
}

}  // namespace vellum::cuda
