#pragma once
// The last block of a group: each block, after writing its share, counts itself in on the group's
// arrival counter; the block that completes the group gets true (and has reset the counter to 0,
// ready for the next launch), with every other block's writes visible to it.

#include <cstdint>

namespace vellum::cuda {

__device__ __forceinline__ bool arrive_last(int32_t* cnt, int n, int total) {
  __shared__ int last_flag;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    const int before = atomicAdd(cnt, n);
    last_flag = before + n == total;
    if (before + n == total) *cnt = 0;  // every block of the group has arrived
  }
  __syncthreads();
  const bool last = last_flag;
  if (last) __threadfence();
  return last;
}

}  // namespace vellum::cuda
