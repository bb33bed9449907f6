// 17-32 token rows of Q8_0 / Q4_K / Q6_K weights on int8 tensor cores, x shared by a block's warps
// (gemv_mma_wide.h, round 53).
//
// A block: RG warps of 16 weight rows each (RG·16 rows), one K split (blockIdx.y) of `splits`
// consecutive runs of super-blocks. Each super-block is one stage of a ring of S: the x side of its
// 4 tiles (12 KB for the K-quants with minimums, 10 KB otherwise; the layout gemv_mma.cu stages
// per warp) copied by all the block's threads, and each warp's 16 weight rows copied by that warp
// (cp.async). One block barrier a stage: every thread's copies of stage q have landed, and every
// warp is done with stage q - 1, whose slot then takes stage q + S - 1. Two blocks an SM where the
// stages allow it (stages()).

#include "backend/cuda/gemv_mma_wide.h"

#include <cooperative_groups.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "backend/cuda/cp_async.cuh"
#include "backend/cuda/dequant.cuh"
#include "backend/cuda/gemv_mma.h"
#include "backend/cuda/gemv_mma_step.cuh"
#include "backend/cuda/pdl.cuh"

namespace vellum::cuda {
namespace {
using namespace mma_rows;

constexpr int kNT = 4;  // tiles of 8 token columns
constexpr int kFragBytes = kNT * kMmaTile * kSuper;  // a stage's B fragments, then its scale pairs (kNT · 512), minimums' pairs

template <class T>
constexpr int x_bytes() {
  return kNT * x_stage_bytes<T>();
}
template <class T, int RG>
constexpr int stage_bytes() {
  return x_bytes<T>() + RG * 16 * T::kStride;
}
// As many stages as leave two blocks an SM (at most 113 KB each), 2 to 4.
template <class T, int RG>
constexpr int stages() {
  const int s = 113 * 1024 / stage_bytes<T, RG>();
  return s < 2 ? 2 : s > 4 ? 4 : s;
}
template <class T, int RG, bool kPair>
constexpr int smem_bytes() {
  const int ring = stages<T, RG>() * stage_bytes<T, RG>();
  const int red = (kPair ? 2 : 1) * RG * kNT * 4 * 32 * int(sizeof(float));  // the split's sums, after the ring
  return ring > red ? ring : red;
}

template <class T, int RG, bool kPair>
__global__ void __launch_bounds__(RG * 32, 2) gemv_mma_wide_kernel(const MmaOut o, size_t rb, int nsb, const uint8_t* __restrict__ xf,
                                                                int rows) {
  constexpr int S = stages<T, RG>(), kStage = stage_bytes<T, RG>(), kX = x_bytes<T>(), kMats = kPair ? 2 : 1;
  constexpr int kThreads = RG * 32;
  extern __shared__ __align__(16) uint8_t smem[];
  const int tid = int(threadIdx.x), lane = tid & 31, wr = tid / 32, g = lane / 4, t = lane % 4;
  const unsigned bx = blockIdx.x;
  const int seg = kPair || bx < o.first[1] ? 0 : bx < o.first[2] ? 1 : 2;
  const uint8_t* w = seg == 0 ? o.w[0] : seg == 1 ? o.w[1] : o.w[2];
  const int64_t n = seg == 0 ? o.n[0] : seg == 1 ? o.n[1] : o.n[2];
  const int64_t n0 = int64_t(bx - (seg == 0 ? o.first[0] : seg == 1 ? o.first[1] : o.first[2])) * (RG * 16);
  const int64_t nw = n0 + 16 * wr;  // the warp's first row
  const int splits = int(gridDim.y), split = int(blockIdx.y);
  const int per = (nsb + splits - 1) / splits, j0 = split * per;
  const int mine = max(0, min(nsb, j0 + per) - j0);
  const int total = kMats * mine;  // stages: the gate's, then the up's (kPair)

  // This lane's weight pieces: i = lane + 32u is piece i % kPieces of the warp's row i / kPieces
  // (past the last piece, that piece again; rows past n, the last row: re-read, dropped).
  constexpr int kWU = (16 * T::kPieces + 31) / 32, kLastPiece = 16 * T::kPieces - 1;
  uint32_t roff[kWU];
  uint32_t dst[kWU];
  int pc[kWU];
#pragma unroll
  for (int u = 0; u < kWU; ++u) {
    const int i = min(lane + 32 * u, kLastPiece), r = i / T::kPieces, c = i % T::kPieces;
    roff[u] = uint32_t((min(nw + r, n - 1) - n0) * int64_t(rb));
    pc[u] = c;
    dst[u] = uint32_t(kX + (wr * 16 + r) * T::kStride + 16 * c);
  }
  const uint8_t* wbase = w + n0 * int64_t(rb);
  const uint8_t* ubase = kPair ? o.w[1] + n0 * int64_t(rb) : nullptr;
  // Stage qq of the block's sequence is super-block j0 + qq (kPair: the up rows' from qq = mine).
  const auto fill_w = [&](unsigned st, int qq) {
    const bool up = kPair && qq >= mine;
    const uint8_t* b = up ? ubase : wbase;
    const int64_t j = j0 + (up ? qq - mine : qq);
#pragma unroll
    for (int u = 0; u < kWU; ++u) cp_async16_s(st + dst[u], b + roff[u] + T::piece(j, pc[u]));
  };
  // x is written by the previous kernel: copied after the programmatic wait, through L1 (.ca), since
  // the SM's other block reads the same super-blocks. Its three parts are contiguous in xf for the
  // 4 tiles of a super-block (mma_x_vsb).
  const int64_t kv = int64_t(nsb) * kSuper * kNT;
  constexpr int kFragP = kFragBytes / 16, kScaleP = kNT * 512 / 16, kXP = kX / 16;
  const auto fill_x = [&](unsigned st, int qq) {
    const int64_t vj = (j0 + (kPair && qq >= mine ? qq - mine : qq)) * int64_t(kNT);
#pragma unroll
    for (int v = 0; v < (kXP + kThreads - 1) / kThreads; ++v) {
      const int p = tid + kThreads * v;
      if (p >= kXP) break;
      const uint8_t* src = p < kFragP            ? xf + vj * (kMmaTile * kSuper) + 16 * p
                           : p < kFragP + kScaleP ? xf + kMmaTile * kv + vj * 512 + 16 * (p - kFragP)
                                                  : xf + mma_x_min_offset(kv) + vj * 512 + 16 * (p - kFragP - kScaleP);
      cp_async16_ca_s(st + 16 * p, src);
    }
  };
  const unsigned ring = static_cast<unsigned>(__cvta_generic_to_shared(smem));
#pragma unroll
  for (int q = 0; q < S - 1; ++q) {  // weights are read-only: requested before the programmatic wait
    if (q < total) fill_w(ring + q * kStage, q);
  }
  pdl_wait();
#pragma unroll
  for (int q = 0; q < S - 1; ++q) {  // group q: stage q's x (group 0 also the early weights)
    if (q < total) fill_x(ring + q * kStage, q);
    cp_async_commit();
  }
  float acc[kMats][kNT][4] = {};
#pragma unroll
  for (int m = 0; m < kMats; ++m) {
    for (int q = 0; q < mine; ++q) {
      const int qq = m * mine + q;
      cp_async_wait<S - 2>();
      __syncthreads();  // stage qq has landed for every thread, and every warp is done with stage qq - 1
      const int nq = qq + S - 1;
      if (nq < total) {
        const unsigned st = ring + (nq % S) * kStage;
        fill_w(st, nq);
        fill_x(st, nq);
      }
      cp_async_commit();
      const uint8_t* st = smem + (qq % S) * kStage;
      const XSide xs{reinterpret_cast<const uint4*>(st) + lane, reinterpret_cast<const float4*>(st + kFragBytes) + t,
                     reinterpret_cast<const float4*>(st + kFragBytes + kNT * 512) + lane};
      T::template step<kNT>(st + kX + wr * 16 * T::kStride, g, j0 + q, t, xs, acc[m]);
    }
  }
  cp_async_wait<0>();

  float* out = seg == 0 ? o.out[0] : seg == 1 ? o.out[1] : o.out[2];
  const float* bias = seg == 0 ? o.bias[0] : seg == 1 ? o.bias[1] : o.bias[2];
  const int64_t ldo = seg == 0 ? o.ldo[0] : seg == 1 ? o.ldo[1] : o.ldo[2];
  const auto store = [&](int tt, int e, const float (&v)[kMats]) {
    const int64_t row = nw + g + 8 * (e / 2);
    const int token = kMmaTile * tt + 2 * t + e % 2;
    if (row >= n || token >= rows) return;
    if constexpr (kPair) {
      out[token * ldo + row] = mul(v[0] / (1.0f + expf(-v[0])), v[kMats - 1]);  // as swiglu_kernel
    } else {
      out[token * ldo + row] = bias != nullptr ? v[0] + bias[row] : v[0];
    }
  };
  if (splits == 1) {
#pragma unroll
    for (int tt = 0; tt < kNT; ++tt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float v[kMats];
#pragma unroll
        for (int m = 0; m < kMats; ++m) v[m] = acc[m][tt][e];
        store(tt, e, v);
      }
    }
    return;
  }
  // The split's sums through the cluster's shared memory: rank r adds up warp wr's sums of every rank
  // in rank order, for the warps wr ≡ r (mod splits).
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  __syncthreads();  // the ring is free
  float* red = reinterpret_cast<float*>(smem);
  const auto at = [&](int m, int w2, int tt, int e) { return (((m * RG + w2) * kNT + tt) * 4 + e) * 32 + lane; };
#pragma unroll
  for (int m = 0; m < kMats; ++m) {
#pragma unroll
    for (int tt = 0; tt < kNT; ++tt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) red[at(m, wr, tt, e)] = acc[m][tt][e];
    }
  }
  cluster.sync();
  if (wr % splits == split) {
#pragma unroll
    for (int tt = 0; tt < kNT; ++tt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float v[kMats];
#pragma unroll
        for (int m = 0; m < kMats; ++m) {
          v[m] = cluster.map_shared_rank(red, 0)[at(m, wr, tt, e)];
          for (int r = 1; r < splits; ++r) v[m] += cluster.map_shared_rank(red, r)[at(m, wr, tt, e)];
        }
        store(tt, e, v);
      }
    }
  }
  cluster.sync();  // no block leaves while another may still read its shared memory
}

// VELLUM_CUDA_MMA_WIDE=RG,SB (set_gemv_mma_wide_shape).
struct WideShape {
  int warps = 0, sb = 0;
};
WideShape g_wide = [] {
  WideShape s;
  if (const char* e = std::getenv("VELLUM_CUDA_MMA_WIDE"); e != nullptr) {
    s.warps = std::atoi(e);
    if (const char* c = std::strchr(e, ','); c != nullptr) s.sb = std::atoi(c + 1);
  }
  return s;
}();

template <class T, int RG, bool kPair>
cudaError_t launch_shape(const GemvSegs& s, const int64_t* ldo, int64_t k, const void* xf, int rows, int splits,
                         cudaStream_t stream) {
  constexpr int kSmem = smem_bytes<T, RG, kPair>();
  static_assert(kSmem <= 227 * 1024, "a block's shared memory on sm_90");
  const auto kernel = gemv_mma_wide_kernel<T, RG, kPair>;
  static const cudaError_t raised = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  if (raised != cudaSuccess) return raised;
  MmaOut o = mma_out(s, ldo, RG * 16);
  if (kPair) o.first[1] = o.first[2] = o.first[kMaxGemvSegs] = unsigned((s.rows[0] + RG * 16 - 1) / (RG * 16));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(o.first[kMaxGemvSegs], unsigned(splits));
  cfg.blockDim = dim3(RG * 32);
  cfg.dynamicSmemBytes = kSmem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  if (splits > 1) {  // a row's splits are one cluster
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 1;
    attr[0].val.clusterDim.y = unsigned(splits);
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
  }
  return cudaLaunchKernelEx(&cfg, kernel, o, T::row_bytes(k), int(k / kSuper), static_cast<const uint8_t*>(xf), rows);
}

template <class T, bool kPair>
cudaError_t launch_type(const GemvSegs& s, const int64_t* ldo, int64_t k, const void* xf, int rows, int sms, cudaStream_t stream) {
  const int splits = gemv_mma_wide_splits(k);
  int64_t blocks8 = 0;  // blocks of 8 warps (a pair's: one weight's)
  for (int g = 0; g < (kPair ? 1 : s.count); ++g) blocks8 += (s.rows[g] + 127) / 128;
  const int warps = g_wide.warps == 4 || g_wide.warps == 8 ? g_wide.warps : blocks8 * splits >= sms ? 8 : 4;
  return warps == 8 ? launch_shape<T, 8, kPair>(s, ldo, k, xf, rows, splits, stream)
                    : launch_shape<T, 4, kPair>(s, ldo, k, xf, rows, splits, stream);
}

}  // namespace

int gemv_mma_wide_splits(int64_t k) {
  const int sb = g_wide.sb != 0 ? g_wide.sb : 8;
  if (sb < 0) return 1;
  return int(std::clamp<int64_t>(k / kSuper / sb, 1, 8));
}

void set_gemv_mma_wide_shape(int warps, int sb_per_split) { g_wide = WideShape{warps, sb_per_split}; }

cudaError_t launch_gemv_mma_wide(TensorType type, const GemvSegs& s, const int64_t* ldo, bool pair, int64_t k, const void* xf,
                                 int rows, int sms, cudaStream_t stream) {
  if (!gemv_mma_supports(type, k) || rows < 1 || rows > kMmaRowsMax || mma_tiles(rows) != kNT || s.count < 1 ||
      (pair && (s.count != 2 || s.rows[0] != s.rows[1]))) {
    return cudaErrorInvalidValue;
  }
  if (type == TensorType::Q4_K) {
    return pair ? launch_type<MmaQ4K, true>(s, ldo, k, xf, rows, sms, stream) : launch_type<MmaQ4K, false>(s, ldo, k, xf, rows, sms, stream);
  }
  if (type == TensorType::Q6_K) {
    return pair ? launch_type<MmaQ6K, true>(s, ldo, k, xf, rows, sms, stream) : launch_type<MmaQ6K, false>(s, ldo, k, xf, rows, sms, stream);
  }
  return pair ? launch_type<MmaQ8_0, true>(s, ldo, k, xf, rows, sms, stream) : launch_type<MmaQ8_0, false>(s, ldo, k, xf, rows, sms, stream);
}

}  // namespace vellum::cuda
