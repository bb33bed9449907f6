#pragma once
// Error checking and device memory for the CUDA backend: every CUDA and cuBLAS call goes through
// check(), which turns a failure into vellum::Error naming the call; allocations that do not fit
// say how much was asked and how much is free.

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace vellum::cuda {

void check(cudaError_t rc, const char* what);
void check(cublasStatus_t rc, const char* what);

// cudaMalloc, or vellum::Error "<what> needs X MiB but only Y MiB of Z MiB are free".
void* device_alloc(size_t bytes, const std::string& what);
// cudaFree that counts: free_epoch() changes with every device allocation this backend frees, so a
// graph recorded before can tell that a pointer in it may be stale (StepGraphs::launch_early).
void device_free(void* p);
uint64_t free_epoch();

// Multiprocessors of the current device, read once (1 if it cannot be read).
int device_sms();

// Thread block clusters of a cluster launch of `kernel` with `cfg` (its cluster size an attribute)
// that the device holds at once (cudaOccupancyMaxActiveClusters); -1 if the query fails, whose error
// is then cleared so that it does not surface at the next launch's check.
int max_active_clusters(const void* kernel, const cudaLaunchConfig_t& cfg);

// An owned device allocation that grows (contents not kept) on demand.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* ensure(size_t bytes, const char* what);  // synchronizes the device when it must reallocate
  void* get() const { return ptr_; }
  size_t size() const { return size_; }

 private:
  void* ptr_ = nullptr;
  size_t size_ = 0;
};

// Pinned host memory for uploads; the event guards reuse until the last copy from it has run.
class PinnedStaging {
 public:
  PinnedStaging() = default;
  ~PinnedStaging();
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;
  // Waits for the previous upload from this buffer, then returns at least `bytes` of host memory.
  void* acquire(size_t bytes);
  // Copies `bytes` from the buffer to `device` on `stream` and marks the buffer busy until done.
  void upload(void* device, size_t bytes, cudaStream_t stream);

 private:
  void* host_ = nullptr;
  size_t size_ = 0;
  cudaEvent_t done_ = nullptr;
};

}  // namespace vellum::cuda
