#pragma once
// Chooses and constructs a compute backend by name, so that front ends (CLI, server, benchmarks)
// never name a concrete backend class.

#include <memory>
#include <string>

#include "backend/backend.h"

namespace vellum::backend {

struct BackendOptions {
  std::string device = "auto";  // "cpu", "cuda" (or "cuda:N"), "auto": CUDA when a device is visible
  unsigned threads = 0;         // CPU threads (0: all cores)
  // Batch-invariant kernels: a sequence's logits do not depend on what else is in the step. The
  // CPU backend always is; the CUDA backend's mode costs speed from ~8 sequences on (docs/cuda.md).
  bool deterministic = false;
  // CUDA: BF16 copies of quantized weights, up to this many bytes, for the matmuls of many rows
  // (CudaBackend::set_dense_weight_cache); 0 off. Ignored by the CPU backend.
  uint64_t dense_weight_cache_bytes = 0;
};

// The backend `options` name; throws vellum::Error for an unknown device or one this build or
// machine cannot provide.
std::unique_ptr<Backend> make_backend(const BackendOptions& options);

// The device number of "cuda" / "auto" (0) or "cuda:N"; throws vellum::Error for anything else.
int cuda_device_index(const std::string& device);

// True when this build has a CUDA backend and the runtime sees at least one device.
bool cuda_available();

}  // namespace vellum::backend
