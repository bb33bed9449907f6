#pragma once
// A position's entry in its row's block table and its slot in that KV block, stepped along the rows
// a thread copies with one division in all (round 25: a division and a remainder a row by the
// runtime block size took ~30% of the tensor-core prefill kernel).

#include <cstdint>

namespace vellum::cuda {

struct BlockSlot {
  int block, slot;
  __device__ BlockSlot(int pos, int bs) : block(pos / bs), slot(pos - pos / bs * bs) {}
  __device__ void advance(int step, int bs) {
    slot += step;
    while (slot >= bs) slot -= bs, ++block;
  }
};

// The K/V rows a thread copies of one tile, positions pos0 + step·k (k < R): their blocks through
// the row's block table (-1 at or past last, the context's end) and their slots.
template <int R>
__device__ __forceinline__ void table_rows(const int32_t* table, int pos0, int step, int bs, int last, int (&blk)[R], int (&slot)[R]) {
  BlockSlot at(pos0, bs);
#pragma unroll
  for (int k = 0; k < R; ++k, at.advance(step, bs)) {
    blk[k] = pos0 + k * step < last ? table[at.block] : -1;
    slot[k] = at.slot;
  }
}

}  // namespace vellum::cuda
