#pragma once
// What CUDA devices this process can see. Compiled only when the CUDA toolkit is present
// (VELLUM_HAVE_CUDA); the rest of vellum builds and runs without it.

#include <string>
#include <vector>

namespace vellum::cuda {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int compute_major = 0, compute_minor = 0;
  size_t total_memory = 0;
  int multiprocessors = 0;
};

// Devices visible to the CUDA runtime; empty (with `error` set) when there is no driver or device.
std::vector<DeviceInfo> list_devices(std::string* error);

}  // namespace vellum::cuda
