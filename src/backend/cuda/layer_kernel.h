#pragma once
// The layer kernel (round 19): one persistent launch for everything a batch-1 decode step does
// between two attentions — the output projection, the residual add and feed-forward norm, gate/up
// with SwiGLU, the down projection, the residual add and the next layer's attention norm, and the
// next layer's Q/K/V — on Q4_K / Q6_K weights.
//
// Why: at batch 1 a layer was ~9 kernels, each GEMV paying ~3 us of ramp and tail above its bytes
// and every norm a one-block latency chain with DRAM idle (docs/cuda.md rounds 12 and 16). Here one
// block per SM streams its share of every weight, phase after phase, with grid barriers between
// the phases; weights do not depend on activations, so each warp issues the next phase's first
// copies before the barrier. Each row is computed with gemv_kq's dot products and order, the norms
// with the norm kernel's expressions: the outputs are the bits of the unfused sequence (checked on
// the GPU). Measured (round 19, H100, llama3-8b Q4_K_M batch 1): ~300 tok/s against the ops'
// ~395, so it is opt-in: with 16 warps an SM the rows are issue-bound, and the barriers and norms
// cost as much as the kernel edges they replace.

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "core/tensor_type.h"

namespace vellum::cuda {

inline constexpr int kLayerMaxSegs = 3;

// One weight of a phase: rows x k, Q4_K or Q6_K in its device layout.
struct LayerWeight {
  const void* w = nullptr;
  TensorType type = TensorType::Q4_K;
  int64_t rows = 0;
  float* out = nullptr;  // rows floats (SwiGLU: the gate's entry receives silu(gate)·up)
};
// The weights one phase multiplies by the same x (k columns each).
struct LayerPhase {
  LayerWeight seg[kLayerMaxSegs];
  int count = 0;
  bool swiglu = false;  // seg[0] gate, seg[1] up, of one type and shape
};

struct LayerTailArgs {
  const void* attn_q8 = nullptr;  // the attention output's int8 copy (q8_bytes(q_dim), gemv_kernels.h)
  int64_t q_dim = 0, dim = 0, ffn = 0;
  float* x = nullptr;  // residual (dim)
  float* o = nullptr;  // dim: wo's output, then down's
  float* g = nullptr;  // ffn: the SwiGLU output
  float* h = nullptr;  // dim: the next attention norm's output (as the unfused sequence leaves it)
  void* g_q8 = nullptr;  // workspace for g's int8 copy: q8_bytes(ffn) (gemv_kernels.h)
  const float* ffn_gain = nullptr;
  const float* next_gain = nullptr;
  float eps = 0.0f;
  LayerPhase wo, gate_up, down, qkv;  // wo: k = q_dim; gate_up, qkv: k = dim; down: k = ffn
};

// Whether launch_layer_tail takes these shapes and types on the current device (sm_90, the norm
// kernel's 512 threads, at most kMaxBlocks SMs, x's int8 copy and the rings in shared memory); the
// workspaces (attn_q8, g_q8) are not looked at. The caller runs the unfused ops otherwise.
bool layer_tail_supported(const LayerTailArgs& a);
// sync: layer_sync_words(ffn) zeroed words of device memory that only this stream's layer kernels
// use (a grid barrier and counts; each launch leaves them as it found them).
inline int64_t layer_sync_words(int64_t ffn) { return 4 + ffn / 32; }
cudaError_t launch_layer_tail(const LayerTailArgs& a, unsigned* sync, cudaStream_t stream);

// Measurement only (vellum_cuda_check --layer-trace): launches from now on stamp clock64() into
// trace[block * kLayerTraceEvents + event] (null: off). Events: 0 start (after the programmatic
// wait), per phase p 1 + 3p its x ready to build (after the grid barrier), 2 + 3p x built, 3 + 3p
// warp 0's rows done (and its first copies of the next phase issued), 13 end.
inline constexpr int kLayerTraceEvents = 14;
void set_layer_trace(unsigned long long* trace);

}  // namespace vellum::cuda
