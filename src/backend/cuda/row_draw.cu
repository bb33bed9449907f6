#include "backend/cuda/row_draw.h"
#include "backend/cuda/arrive_last.cuh"
#include "backend/cuda/launch.h"
#include "backend/cuda/logit_key.cuh"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/warp_reduce.cuh"

#include <climits>
#include <cstdint>

namespace vellum::cuda {
namespace {

using u64 = unsigned long long;

constexpr int kThreads = 256, kWarps = kThreads / 32;
constexpr int kChunk = kDrawPart / kThreads;  // columns a thread takes in a part
static_assert(kChunk * kThreads == kDrawPart, "a part is the block's chunks");
constexpr int kBins = 256, kPasses = 4;  // top-p's cut: 8 bits of the value key a pass
static_assert(kBins == kThreads, "a thread a histogram bin");

int parts_of(int64_t cols) { return static_cast<int>((cols + kDrawPart - 1) / kDrawPart); }

// A row's progress, in the workspace.
struct RowState {
  u64 above;      // kept mass with value keys above the current bin range (top-p)
  u64 target;     // top_p_target of the row's mass
  u64 kept;       // the draw's total: the mass that survives both cuts
  uint32_t floor;  // top-p's cut V as a value key: its bits fixed so far (0: nothing cut)
  int32_t cut;     // top-p cuts this row (passes 3-4)
  int32_t arrived;  // blocks of the pass done (arrive_last)
  int32_t unused;
};

struct Workspace {
  uint64_t* keys;  // rows × parts: the parts' best keys
  u64* mass;       // rows × parts: the parts' whole masses
  u64* kept;       // rows × parts: the parts' kept masses
  u64* hist;       // rows × kPasses × kBins
  RowState* state;  // rows
};
Workspace views(void* ws, int64_t rows, int parts) {
  Workspace w;
  w.keys = static_cast<uint64_t*>(ws);
  w.mass = reinterpret_cast<u64*>(w.keys + rows * parts);
  w.kept = w.mass + rows * parts;
  w.hist = w.kept + rows * parts;
  w.state = reinterpret_cast<RowState*>(w.hist + rows * kPasses * kBins);
  return w;
}

// A column's weight, with draw_of_row's expression (float operands promoted to double), and its
// mass (logit_rows.h's mass_shift and mass_of).
__device__ __forceinline__ double weight(float v, float max_logit, float temperature) {
  return isnan(v) ? 0.0 : exp((static_cast<double>(v) - static_cast<double>(max_logit)) / static_cast<double>(temperature));
}
__device__ __forceinline__ double mass_scale(int64_t cols) {
  const int bits = 64 - __clzll(static_cast<long long>(cols));
  return static_cast<double>(1ull << min(44, 63 - bits));
}
__device__ __forceinline__ u64 mass_of(double w, double scale) { return w > 0.0 ? __double2ull_rn(w * scale) : 0ull; }
// The high half of key_of: the logit's order alone (-0 as +0, NaN lowest).
__device__ __forceinline__ uint32_t value_key(float v) { return static_cast<uint32_t>(key_of(v, 0) >> 32); }

__device__ __forceinline__ u64 warp_sum_u64(u64 v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(kFull, v, o);
  return v;
}
// The block's sum, in thread 0 (s: kWarps entries).
__device__ __forceinline__ u64 block_sum(u64 v, u64* s) {
  v = warp_sum_u64(v);
  if (threadIdx.x % 32 == 0) s[threadIdx.x / 32] = v;
  __syncthreads();
  u64 t = 0;
  if (threadIdx.x == 0) {
    for (int w = 0; w < kWarps; ++w) t += s[w];
  }
  __syncthreads();  // s is reused
  return t;
}
// The block's inclusive prefix sum in thread order (s: kWarps entries).
__device__ __forceinline__ u64 block_scan(u64 v, u64* s) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
  for (int o = 1; o < 32; o *= 2) {
    const u64 y = __shfl_up_sync(kFull, v, o);
    if (lane >= o) v += y;
  }
  if (lane == 31) s[warp] = v;
  __syncthreads();
  for (int w = 0; w < warp; ++w) v += s[w];
  __syncthreads();  // s is reused
  return v;
}

// A column's mass if it survives both cuts (min-p; logit at or above top-p's floor key), else 0.
__device__ __forceinline__ u64 kept_mass(float v, uint32_t floor, float max_logit, const DrawArg& a, double scale) {
  if (value_key(v) < floor) return 0;
  const double w = weight(v, max_logit, a.temperature);
  return w >= a.min_p ? mass_of(w, scale) : 0;
}

// f(column, logit) for the columns of the block's part: thread t takes t, t + 256, ... (coalesced).
template <class F>
__device__ __forceinline__ void for_part_columns(const float* row, int64_t cols, F f) {
  const int64_t c0 = static_cast<int64_t>(blockIdx.x) * kDrawPart + threadIdx.x;
#pragma unroll 4
  for (int j = 0; j < kChunk; ++j) {
    const int64_t c = c0 + static_cast<int64_t>(j) * kThreads;
    if (c >= cols) break;
    f(c, row[c]);
  }
}

// The row's best key from its parts' best keys (every thread reads them: a handful of broadcasts).
__device__ __forceinline__ uint64_t row_best_key(const uint64_t* part_keys, int parts) {
  uint64_t k = 0;
  for (int p = 0; p < parts; ++p) k = part_keys[p] > k ? part_keys[p] : k;
  return k;
}

// Top-p's narrowing after pass `pass`'s histogram is complete (the row's last block, every thread):
// the bin, from the top, where the kept mass reaches the target; its bits join the floor, and the
// mass above it joins `above`. After the last pass the floor is V and the kept mass known. No bin
// (not reached: cannot happen once the row's kept mass reached the target) leaves the row uncut.
__device__ void narrow(RowState& st, const u64* hist, int pass, u64* s) {
  __shared__ int s_bin;
  __shared__ u64 s_above, s_equal;
  const int bin = kBins - 1 - static_cast<int>(threadIdx.x);  // thread 0 the top bin
  const u64 h = __ldcg(hist + bin);
  const u64 incl = block_scan(h, s);  // the mass of bins >= bin
  if (threadIdx.x == 0) s_bin = -1;
  __syncthreads();
  if (st.above + incl - h < st.target && st.above + incl >= st.target) {
    s_bin = bin;
    s_above = st.above + incl - h;
    s_equal = h;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    if (s_bin < 0) {
      st.cut = 0;
      st.floor = 0;
    } else {
      st.floor |= static_cast<uint32_t>(s_bin) << (24 - 8 * pass);
      st.above = s_above;
      if (pass == kPasses - 1) st.kept = s_above + s_equal;
    }
  }
}

// Block (part, row): the part's best key. Block 0 of a row also resets the row's arrival counter
// and, for top-p, its histograms.
__global__ void __launch_bounds__(kThreads) draw_part_max_kernel(const float* __restrict__ x, int64_t cols, int parts,
                                                                 bool top_p, Workspace ws) {
  pdl_wait();
  __shared__ uint64_t s[kWarps];
  const int r = static_cast<int>(blockIdx.y);
  const float* row = x + static_cast<int64_t>(r) * cols;
  if (blockIdx.x == 0) {
    if (threadIdx.x == 0) ws.state[r].arrived = 0;
    if (top_p) {
      for (int i = threadIdx.x; i < kPasses * kBins; i += kThreads) ws.hist[static_cast<int64_t>(r) * kPasses * kBins + i] = 0;
    }
  }
  uint64_t best = 0;
  for_part_columns(row, cols, [&](int64_t c, float v) {
    const uint64_t k = key_of(v, static_cast<int>(c));
    best = k > best ? k : best;
  });
  best = warp_max_u64(best);
  if (threadIdx.x % 32 == 0) s[threadIdx.x / 32] = best;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kWarps; ++w) best = s[w] > best ? s[w] : best;
    ws.keys[static_cast<int64_t>(r) * parts + blockIdx.x] = best;
  }
}

// Block (part, row): the part's whole and min-p-kept masses, and (top-p) pass 0's histogram. The
// row's last block sets its target and its first bin, or its kept mass when top-p cuts nothing.
__global__ void __launch_bounds__(kThreads) draw_part_mass_kernel(const float* __restrict__ x, int64_t cols, int parts,
                                                                  const DrawArg* __restrict__ args, Workspace ws) {
  pdl_wait();
  __shared__ u64 s[kWarps], s_hist[kBins];
  const int r = static_cast<int>(blockIdx.y);
  const float* row = x + static_cast<int64_t>(r) * cols;
  const float max_logit = row[id_of(row_best_key(ws.keys + static_cast<int64_t>(r) * parts, parts))];
  const DrawArg a = args[r];
  const bool hist = a.top_p < 1.0f && isfinite(max_logit);
  s_hist[threadIdx.x] = 0;
  __syncthreads();
  u64 whole = 0, kept = 0;
  if (isfinite(max_logit)) {
    const double scale = mass_scale(cols);
    for_part_columns(row, cols, [&](int64_t, float v) {
      const double w = weight(v, max_logit, a.temperature);
      const u64 m = mass_of(w, scale);
      whole += m;
      if (w >= a.min_p && m != 0) {
        kept += m;
        if (hist) atomicAdd(&s_hist[value_key(v) >> 24], m);
      }
    });
  }
  whole = block_sum(whole, s);
  kept = block_sum(kept, s);
  u64* h0 = ws.hist + static_cast<int64_t>(r) * kPasses * kBins;
  if (hist && s_hist[threadIdx.x] != 0) atomicAdd(h0 + threadIdx.x, s_hist[threadIdx.x]);
  if (threadIdx.x == 0) {
    ws.mass[static_cast<int64_t>(r) * parts + blockIdx.x] = whole;
    ws.kept[static_cast<int64_t>(r) * parts + blockIdx.x] = kept;
  }
  if (!arrive_last(&ws.state[r].arrived, 1, parts)) return;
  RowState& st = ws.state[r];
  if (threadIdx.x == 0) {
    u64 row_mass = 0, row_kept = 0;
    for (int p = 0; p < parts; ++p) {
      row_mass += __ldcg(ws.mass + static_cast<int64_t>(r) * parts + p);
      row_kept += __ldcg(ws.kept + static_cast<int64_t>(r) * parts + p);
    }
    // logit_rows.h's top_p_target
    st.target = static_cast<u64>(ceil(__dmul_rn(static_cast<double>(a.top_p), __ull2double_rn(row_mass))));
    st.cut = hist && row_kept >= st.target;
    st.kept = row_kept;
    st.above = 0;
    st.floor = 0;
  }
  __syncthreads();
  if (st.cut) narrow(st, h0, 0, s);  // block-uniform: written by thread 0 before the barrier
}

// Block (part, row), rows that top-p cuts: pass `pass` (1..3) of the narrowing, the histogram of the
// next 8 key bits over the kept columns whose higher bits are the floor's so far.
__global__ void __launch_bounds__(kThreads) draw_radix_kernel(const float* __restrict__ x, int64_t cols, int parts,
                                                              const DrawArg* __restrict__ args, int pass, Workspace ws) {
  pdl_wait();
  __shared__ u64 s[kWarps], s_hist[kBins];
  const int r = static_cast<int>(blockIdx.y);
  RowState& st = ws.state[r];
  if (!st.cut) return;  // block-uniform
  const float* row = x + static_cast<int64_t>(r) * cols;
  const float max_logit = row[id_of(row_best_key(ws.keys + static_cast<int64_t>(r) * parts, parts))];
  const DrawArg a = args[r];
  const int high = 32 - 8 * pass;  // the floor's bits fixed so far are those at and above `high`
  const uint32_t prefix = st.floor >> high;
  s_hist[threadIdx.x] = 0;
  __syncthreads();
  const double scale = mass_scale(cols);
  for_part_columns(row, cols, [&](int64_t, float v) {
    const uint32_t k = value_key(v);
    if (k >> high != prefix) return;
    const double w = weight(v, max_logit, a.temperature);
    const u64 m = mass_of(w, scale);
    if (w >= a.min_p && m != 0) atomicAdd(&s_hist[(k >> (high - 8)) & 255u], m);
  });
  __syncthreads();
  u64* h = ws.hist + (static_cast<int64_t>(r) * kPasses + pass) * kBins;
  if (s_hist[threadIdx.x] != 0) atomicAdd(h + threadIdx.x, s_hist[threadIdx.x]);
  if (!arrive_last(&st.arrived, 1, parts)) return;
  narrow(st, h, pass, s);
}

// Block (part, row), rows that top-p cuts: the part's kept mass (min-p, and logits >= V).
__global__ void __launch_bounds__(kThreads) draw_part_kept_kernel(const float* __restrict__ x, int64_t cols, int parts,
                                                                  const DrawArg* __restrict__ args, Workspace ws) {
  pdl_wait();
  __shared__ u64 s[kWarps];
  const int r = static_cast<int>(blockIdx.y);
  const RowState& st = ws.state[r];
  if (!st.cut) return;  // block-uniform; the part's kept mass is the min-p one already
  const float* row = x + static_cast<int64_t>(r) * cols;
  const float max_logit = row[id_of(row_best_key(ws.keys + static_cast<int64_t>(r) * parts, parts))];
  const DrawArg a = args[r];
  const uint32_t floor = st.floor;
  const double scale = mass_scale(cols);
  u64 kept = 0;
  for_part_columns(row, cols, [&](int64_t, float v) { kept += kept_mass(v, floor, max_logit, a, scale); });
  kept = block_sum(kept, s);
  if (threadIdx.x == 0) ws.kept[static_cast<int64_t>(r) * parts + blockIdx.x] = kept;
}

// Block (0, row): r = draw_point(u, kept mass); the part where the running kept masses pass r, then
// the first kept column of it whose running mass passes r (a thread a chunk of 16 consecutive
// columns, the chunks' masses scanned in order; the one chunk that crosses r walks its columns).
// A row without a finite best logit gives its best column.
__global__ void __launch_bounds__(kThreads) draw_pick_kernel(const float* __restrict__ x, int64_t cols, int parts,
                                                             const DrawArg* __restrict__ args, Workspace ws,
                                                             int32_t* __restrict__ out) {
  pdl_wait();
  __shared__ u64 s[kWarps];
  __shared__ int s_part, s_token;
  __shared__ u64 s_base, s_point;
  const int r = static_cast<int>(blockIdx.y);
  const float* row = x + static_cast<int64_t>(r) * cols;
  const int best = id_of(row_best_key(ws.keys + static_cast<int64_t>(r) * parts, parts));
  const float max_logit = row[best];
  const DrawArg a = args[r];
  const RowState& st = ws.state[r];
  if (threadIdx.x == 0) {
    const u64 total = st.kept;
    s_part = -1;
    s_token = best;
    if (isfinite(max_logit) && total > 0) {
      // logit_rows.h's draw_point
      u64 point = static_cast<u64>(floor(__dmul_rn(a.u, __ull2double_rn(total))));
      point = point < total ? point : total - 1;
      u64 acc = 0;
      for (int p = 0; p < parts; ++p) {
        const u64 next = acc + ws.kept[static_cast<int64_t>(r) * parts + p];
        if (point < next) {
          s_part = p;
          break;
        }
        acc = next;
      }
      s_base = acc;
      s_point = point;
    }
  }
  __syncthreads();
  const int part = s_part;
  if (part >= 0) {  // block-uniform
    const uint32_t floor = st.cut ? st.floor : 0u;
    const double scale = mass_scale(cols);
    const int64_t c0 = static_cast<int64_t>(part) * kDrawPart + threadIdx.x * kChunk;
    u64 mine = 0;
#pragma unroll
    for (int j = 0; j < kChunk; ++j) {
      if (c0 + j >= cols) break;
      mine += kept_mass(row[c0 + j], floor, max_logit, a, scale);
    }
    const u64 point = s_point;
    u64 acc = s_base + block_scan(mine, s) - mine;  // the kept mass before this chunk
    if (acc <= point && point < acc + mine) {  // exactly one chunk
      for (int j = 0; j < kChunk; ++j) {
        const int64_t c = c0 + j;
        if (c >= cols) break;
        acc += kept_mass(row[c], floor, max_logit, a, scale);
        if (point < acc) {
          s_token = static_cast<int>(c);
          break;
        }
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) out[r] = s_token;
}

}  // namespace

size_t draw_rows_workspace_bytes(int64_t rows, int64_t cols) {
  return static_cast<size_t>(rows) *
         (static_cast<size_t>(parts_of(cols)) * 3 * sizeof(uint64_t) + kPasses * kBins * sizeof(u64) + sizeof(RowState));
}

cudaError_t launch_draw_rows(const float* x, int64_t rows, int64_t cols, const DrawArg* args, bool top_p, int32_t* out,
                             void* ws, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  if (rows > 65535 || cols >= INT_MAX) return cudaErrorInvalidValue;
  const int parts = parts_of(cols);
  const Workspace w = views(ws, rows, parts);
  const dim3 grid(static_cast<unsigned>(parts), static_cast<unsigned>(rows));
  launch_kernel(draw_part_max_kernel, grid, kThreads, 0, stream, x, cols, parts, top_p, w);
  launch_kernel(draw_part_mass_kernel, grid, kThreads, 0, stream, x, cols, parts, args, w);
  if (top_p) {
    for (int pass = 1; pass < kPasses; ++pass) launch_kernel(draw_radix_kernel, grid, kThreads, 0, stream, x, cols, parts, args, pass, w);
    launch_kernel(draw_part_kept_kernel, grid, kThreads, 0, stream, x, cols, parts, args, w);
  }
  launch_kernel(draw_pick_kernel, dim3(1, static_cast<unsigned>(rows)), kThreads, 0, stream, x, cols, parts, args, w, out);
  return cudaGetLastError();
}

}  // namespace vellum::cuda
