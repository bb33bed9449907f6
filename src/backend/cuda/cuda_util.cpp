#include "backend/cuda/cuda_util.h"

#include <atomic>

#include "core/error.h"

namespace vellum::cuda {

void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) throw_error("CUDA backend: {} failed: {} ({})", what, cudaGetErrorString(rc), cudaGetErrorName(rc));
}

void check(cublasStatus_t rc, const char* what) {
  if (rc != CUBLAS_STATUS_SUCCESS) throw_error("CUDA backend: {} failed: {}", what, cublasGetStatusString(rc));
}

void* device_alloc(size_t bytes, const std::string& what) {
  void* p = nullptr;
  const cudaError_t rc = cudaMalloc(&p, bytes == 0 ? 1 : bytes);
  if (rc == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // clear the sticky-free allocation error
    size_t free_b = 0, total_b = 0;
    (void)cudaMemGetInfo(&free_b, &total_b);
    constexpr double kMiB = 1024.0 * 1024.0;
    throw_error("CUDA backend: {} needs {:.1f} MiB but only {:.1f} MiB of {:.1f} MiB are free on the device "
                "(the model, its KV cache or its activations do not fit)",
                what, bytes / kMiB, free_b / kMiB, total_b / kMiB);
  }
  check(rc, "cudaMalloc");
  return p;
}

namespace {
std::atomic<uint64_t> g_free_epoch{1};
}  // namespace

void device_free(void* p) {
  if (p == nullptr) return;
  g_free_epoch.fetch_add(1);
  (void)cudaFree(p);
}

uint64_t free_epoch() { return g_free_epoch.load(); }

int device_sms() {
  static const int sms = [] {
    int dev = 0, v = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) return 1;
    return v;
  }();
  return sms;
}

int max_active_clusters(const void* kernel, const cudaLaunchConfig_t& cfg) {
  int n = -1;
  if (cudaOccupancyMaxActiveClusters(&n, kernel, &cfg) != cudaSuccess) {
    (void)cudaGetLastError();  // the query's own error only
    return -1;
  }
  return n;
}

DeviceBuffer::~DeviceBuffer() { device_free(ptr_); }

void* DeviceBuffer::ensure(size_t bytes, const char* what) {
  if (bytes <= size_ && ptr_ != nullptr) return ptr_;
  if (ptr_ != nullptr) {
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    g_free_epoch.fetch_add(1);
    check(cudaFree(ptr_), "cudaFree");
    ptr_ = nullptr;
    size_ = 0;
  }
  const size_t grown = bytes + bytes / 4;  // some headroom against regrowing every step
  ptr_ = device_alloc(grown, what);
  size_ = grown;
  return ptr_;
}

PinnedStaging::~PinnedStaging() {
  if (done_ != nullptr) {
    (void)cudaEventSynchronize(done_);
    (void)cudaEventDestroy(done_);
  }
  if (host_ != nullptr) (void)cudaFreeHost(host_);
}

void* PinnedStaging::acquire(size_t bytes) {
  if (done_ == nullptr) check(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming), "cudaEventCreate");
  check(cudaEventSynchronize(done_), "cudaEventSynchronize");
  if (bytes > size_) {
    if (host_ != nullptr) check(cudaFreeHost(host_), "cudaFreeHost");
    host_ = nullptr;
    size_ = 0;
    const size_t grown = bytes + bytes / 4;
    check(cudaMallocHost(&host_, grown), "cudaMallocHost (pinned staging)");
    size_ = grown;
  }
  return host_;
}

void PinnedStaging::upload(void* device, size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  check(cudaMemcpyAsync(device, host_, bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync (upload)");
  check(cudaEventRecord(done_, stream), "cudaEventRecord");
}

}  // namespace vellum::cuda
