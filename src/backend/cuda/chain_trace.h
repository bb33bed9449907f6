#pragma once
// Experiment builds only (cmake -DVELLUM_CHAIN_TRACE=ON; round 30): a stamp for every block of every
// kernel of this backend, taken in pdl_wait() (pdl.cuh) by the block's first thread: the global
// timer when the block became resident and when its dependency wait returned, its SM, index and
// grid. The machines have no nsys, and ncu serializes kernels, so this is how a decode graph's
// programmatic chain can be seen: which kernel waits on which, and for how long.
// A launch's stamps share its %gridid; a dependent grid's blocks may start before its primary's
// last blocks have, so stamps of two kernels interleave in slot order.

#include <cstdint>

namespace vellum::cuda {

struct ChainStamp {
  unsigned long long resident_ns = 0, released_ns = 0;  // %globaltimer before and after the wait
  unsigned long long grid_id = 0;                        // %gridid: one value a launch
  uint32_t sm = 0, block = 0, grid = 0, pad = 0;
};
struct ChainTrace {
  ChainStamp* stamps = nullptr;  // device; null: tracing off
  uint32_t* next = nullptr;      // device slot counter, zero when attached
  uint32_t cap = 0;
};
// Each CUDA translation unit has its own copy of the trace's address (no relocatable device code):
// pdl.cuh registers a setter for it at start-up, and chain_trace_attach calls every one.
using ChainTraceSetter = void (*)(const ChainTrace&);
bool chain_trace_register(ChainTraceSetter set);
void chain_trace_attach(const ChainTrace& trace);

}  // namespace vellum::cuda
