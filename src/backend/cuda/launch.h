#pragma once
// Every kernel launch of this backend goes through launch_kernel, so that eager steps (prefill,
// decode steps too large for a graph, a class's first step) get what captured decode graphs get
// from their programmatic edges (cuda_graphs.cpp): a kernel launched with programmatic stream
// serialization becomes resident once every block of the previous kernel has passed its
// pdl_wait() (the trigger right after it, pdl.cuh), runs what comes before its own wait, and waits
// there for the previous kernel to finish with its writes visible. The launch gap and each
// kernel's start-up (barriers, tensor maps, the first weight loads) then overlap the previous
// kernel's last wave.
//
// Not programmatic: launches being captured into a graph (the graph's edges are decided at
// capture's end), kernels registered with keep_full_dependency (grids sized to the resident blocks,
// pdl.cuh), and every launch when VELLUM_CUDA_EAGER_PDL=0, VELLUM_CUDA_PDL=0 or below sm_90.
// Host-only: compiled with the CUDA toolkit.

#include <cuda_runtime.h>

#include <utility>

namespace vellum::cuda {

// Whether a launch of `kernel` on `stream` now is made programmatic (cuda_graphs.cpp; the switch is
// read once, at the first launch: on for sm_90 unless VELLUM_CUDA_EAGER_PDL=0 or VELLUM_CUDA_PDL=0).
bool launch_programmatically(const void* kernel, cudaStream_t stream);

template <typename... Params, typename... Args>
cudaError_t launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                          Args&&... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  if (launch_programmatically(reinterpret_cast<const void*>(kernel), stream)) {
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
  }
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

}  // namespace vellum::cuda
