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

namespace vellum::cuda {

void keep_full_dependency(const void* kernel);

__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

}  // namespace vellum::cuda
