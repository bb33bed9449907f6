#pragma once
// Programmatic dependent launch (sm_90). Inside a captured decode graph, StepGraphs turns the edge
// between two kernels into a programmatic one (cuda_graphs.cpp): the next kernel's blocks start as
// soon as every block of the previous kernel has started, instead of after it has finished and its
// memory has been flushed. Many decode kernels (norms, RoPE, attention at short context, 4 096-row
// GEMVs) are one round trip long, so the launch gap between them is a large part of a step.
//
// The contract that makes this safe: EVERY kernel of this backend calls pdl_wait() before it reads
// or writes anything another kernel touches, in every thread, and nothing after a kernel's last
// instruction may be skipped. griddepcontrol.wait blocks until all prerequisite grids have
// completed with their memory visible; since each kernel waits on its predecessor before it can
// finish, completion stays transitive along the chain. Outside a programmatic launch (eager steps,
// non-Hopper) the instruction returns at once. tests/py/test_cuda_pdl_contract.py checks that every
// __global__ kernel here calls it.
//
// Kernels whose grid is sized to the blocks resident at once and whose blocks split the work
// statically (the persistent GEMVs) keep a full dependency on their predecessor: launched early,
// some of their blocks would only become resident once the previous kernel's blocks leave, and
// those blocks would then do a whole share of the work alone. Their launchers call
// keep_full_dependency (host, cuda_graphs.cpp) with the kernel's address.
//
// Before the wait a kernel may only compute from its parameters and load what no kernel of the
// step writes: weights (the non-persistent GEMVs load their first pass into registers there, so
// that those loads stream while the previous kernel finishes; the norms their gain), the step's
// inputs (positions, slots, block tables, contexts: uploaded before the step's first kernel, whose
// edge is a full one; RoPE computes its angles from them) and, in a step of one token row, K/V of
// positions older than that row's (the one-row decode attention, AttnParams::kv_before_wait; round 29's
// one-row kernel with RoPE, attn_rope_row.cu, too). (Prefetching weights into L2 instead, many KB a
// row, was measured and lost: docs/cuda.md, "Round 7: programmatic dependent launch".)

#if defined(VELLUM_CHAIN_TRACE)
#include <cuda_runtime.h>

#include "backend/cuda/chain_trace.h"
#endif

namespace vellum::cuda {

void keep_full_dependency(const void* kernel);

#if defined(VELLUM_CHAIN_TRACE)
// This translation unit's copy of the trace (chain_trace.h), set through chain_trace_attach.
static __constant__ ChainTrace g_chain_trace;
namespace {
void chain_trace_set_unit(const ChainTrace& t) { (void)cudaMemcpyToSymbol(g_chain_trace, &t, sizeof t); }
[[maybe_unused]] const bool g_chain_trace_unit = chain_trace_register(&chain_trace_set_unit);
}  // namespace
#endif

__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#if defined(VELLUM_CHAIN_TRACE)
  const bool stamp = threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0 && g_chain_trace.stamps != nullptr;
  unsigned long long resident = 0;
  uint32_t slot = ~0u;
  if (stamp) {  // the slot's atomic is in flight during the wait
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(resident));
    slot = atomicAdd(g_chain_trace.next, 1u);
  }
#endif
  asm volatile("griddepcontrol.wait;" ::: "memory");
  // Outside graphs, the next kernel launched programmatically (launch.h) may become resident once
  // every block of this one has passed here: one kernel ahead at most, whose own wait then holds it
  // until this one has finished. Graph edges start from the launch-completion port instead and do
  // not depend on this. (The trigger before the wait, as a graph edge, measured the same in a
  // prefill: docs/cuda.md, round 40.)
  asm volatile("griddepcontrol.launch_dependents;" :::);
#if defined(VELLUM_CHAIN_TRACE)
  if (stamp && slot < g_chain_trace.cap) {
    unsigned long long released;
    uint32_t sm;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(released));
    unsigned long long grid_id;
    asm("mov.u32 %0, %%smid;" : "=r"(sm));
    asm("mov.u64 %0, %%gridid;" : "=l"(grid_id));
    ChainStamp s;
    s.resident_ns = resident, s.released_ns = released, s.grid_id = grid_id, s.sm = sm;
    s.block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    s.grid = gridDim.x * gridDim.y * gridDim.z;
    g_chain_trace.stamps[slot] = s;
  }
#endif
#endif
}

}  // namespace vellum::cuda
