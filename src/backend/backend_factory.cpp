#include "backend/backend_factory.h"

#include "backend/cpu/cpu_backend.h"
#include "core/error.h"

#if VELLUM_HAVE_CUDA
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

std::unique_ptr<Backend> make_backend(const BackendOptions& options) {
  const std::string& d = options.device;
  if (d == "cpu" || (d == "auto" && !cuda_available())) return std::make_unique<CpuBackend>(options.threads);
  if (d == "auto" || d == "cuda" || d.rfind("cuda:", 0) == 0) {
    // The CUDA backend (issue #9) plugs in here.
    throw_error("--device {}: this build has no CUDA compute backend yet", d);
  }
  throw_error("--device '{}': unknown device (expected cpu, cuda, cuda:N or auto)", d);
}

}  // namespace vellum::backend
