#pragma once
// A position's entry in its row's block table and its slot in that KV block, stepped along the rows
// a thread copies with one division in all (round 25: a division and a remainder a row by the
// runtime block size took ~30% of the tensor-core prefill kernel).

namespace vellum::cuda {

struct BlockSlot {
  int block, slot;
  __device__ BlockSlot(int pos, int bs) : block(pos / bs), slot(pos - pos / bs * bs) {}
  __device__ void advance(int step, int bs) {
    slot += step;
    while (slot >= bs) slot -= bs, ++block;
  }
};

}  // namespace vellum::cuda
