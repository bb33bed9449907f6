#include "backend/backend_factory.h"

#include "backend/cpu/cpu_backend.h"
#include "core/error.h"

#if VELLUM_HAVE_CUDA
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_devices.h"
#endif

namespace vellum::backend {

bool cuda_available() {
#if VELLUM_HAVE_CUDA
  std::string error;
  return !cuda::list_devices(&error).empty();
#else
  return false;
#endif
}

int cuda_device_index(const std::string& device) {
  if (device == "cuda" || device == "auto") return 0;
  const std::string n = device.rfind("cuda:", 0) == 0 ? device.substr(5) : "";
  if (n.empty() || n.size() > 4 || n.find_first_not_of("0123456789") != std::string::npos) {
    throw_error("--device '{}': expected cuda:N with N a device number", device);
  }
  return std::stoi(n);
}

std::unique_ptr<Backend> make_backend(const BackendOptions& options) {
  const std::string& d = options.device;
  if (d == "cpu" || (d == "auto" && !cuda_available())) return std::make_unique<CpuBackend>(options.threads);
  if (d == "auto" || d == "cuda" || d.rfind("cuda:", 0) == 0) {
#if VELLUM_HAVE_CUDA
    auto cuda = std::make_unique<CudaBackend>(cuda_device_index(d));
    cuda->set_deterministic(options.deterministic);
    cuda->set_dense_weight_cache(options.dense_weight_cache_bytes);
    return cuda;
#else
    throw_error("--device {}: this build has no CUDA backend (built without the CUDA toolkit)", d);
#endif
  }
  throw_error("--device '{}': unknown device (expected cpu, cuda, cuda:N or auto)", d);
}

}  // namespace vellum::backend
