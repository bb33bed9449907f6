// vellum devices: the compute backends this build has and the devices they see.

#include <cstdio>
#include <thread>

#include "cli/command.h"
#ifdef VELLUM_HAVE_CUDA
#include "backend/cuda/cuda_devices.h"
#endif

namespace vellum::cli {
namespace {

const CommandRegistration registration("", [](CLI::App& parent) {
  CLI::App* cmd = parent.add_subcommand("devices", "List the compute backends and devices available");
  cmd->callback([] {
    std::printf("cpu: %u hardware threads\n", std::thread::hardware_concurrency());
#ifdef VELLUM_HAVE_CUDA
    std::string error;
    const auto devices = cuda::list_devices(&error);
    if (devices.empty()) std::printf("cuda: built in, no device usable (%s)\n", error.empty() ? "none found" : error.c_str());
    for (const auto& d : devices) {
      std::printf("cuda:%d %s, compute %d.%d, %d SMs, %.1f GiB\n", d.index, d.name.c_str(), d.compute_major,
                  d.compute_minor, d.multiprocessors, static_cast<double>(d.total_memory) / (1 << 30));
    }
#else
    std::printf("cuda: not built (no CUDA toolkit at build time)\n");
#endif
  });
});

}  // namespace
}  // namespace vellum::cli
