// 17..64 token rows of Q4_K / Q6_K weights on bf16 mma.sync (dq_rows.h, round 54).
//
// Unit (j, h) of a lane: sub-block 4h + t (t = lane % 4) of super-block j of its four rows (g and
// g + 8 of each m16 tile; g = lane / 4). Word w of the sub-block's 16 quant bytes holds elements
// 4w..4w+3 (low nibbles) and 16 + 4w.. (high): MMA step (h, nib, w) takes elements 16·nib + 4w,
// +1 as the lane's "k = 2t, 2t + 1" and +2, +3 as "2t + 8, 2t + 9", so the lane's B fragment is x
// at those four elements of its own sub-block: 8 bytes of the staged super-block.
//
// The staged x: token rows kRowBytes apart (512 bytes + 16: a quad's 4 tokens of a half warp start
// 4 banks apart), sub-block s at 64·s, its 8-byte chunk c (elements 4c..4c+3) at 8·(c ^ ((s >> 1) & 1))
// so that lanes t and t + 2 (sub-blocks 64·2 bytes apart) hit other banks: a half warp's 8-byte
// loads are conflict-free.

#include "backend/cuda/dq_rows.h"

#include <cooperative_groups.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <type_traits>

#include "backend/cuda/cp_async.cuh"
#include "backend/cuda/dequant.cuh"
#include "backend/cuda/dq_weights.cuh"
#include "backend/cuda/mma16.cuh"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/swiglu8.cuh"

namespace vellum::cuda {
namespace {

using dq::bf2_dup;
using dq::bf2_fma;
using dq::biased_pairs;
using dq::kBf2Neg128;
using dq::kBf2Neg160;
using dq::kBf2NegZero;
using dq::kBf2One;

constexpr int kWarps = 8, kThreads = 32 * kWarps;
constexpr int kSuper = 256;
constexpr int kRowBytes = 528;
constexpr uint32_t kLo = 0x0F0F0F0Fu;

__device__ __forceinline__ uint4 lds128(const uint8_t* p) { return *reinterpret_cast<const uint4*>(p); }
__device__ __forceinline__ uint2 lds64(const uint8_t* p) { return *reinterpret_cast<const uint2*>(p); }
__device__ __forceinline__ uint32_t lds16(const uint8_t* p) { return *reinterpret_cast<const unsigned short*>(p); }
// Byte t of w.
__device__ __forceinline__ uint32_t byte_at(uint32_t w, int t) { return __byte_perm(w, 0, 0x4440u + uint32_t(t)); }

// Each type: kWarpBytes, a warp's 32 rows of one super-block in a stage; fill, lane i's copies of
// warp row i (cp.async, 16-byte pieces); Raw, sub-block s of warp row ri as read from the stage;
// Scales, what its bf16 pairs need (scales<H>: sub-block 4H + t); pairs<NIB>: elements 16·NIB + 4w
// .. +3 as bf16 pairs (lo: the first two, hi: the next two), the values of dq_weights.cuh's frag.
// A row's 16-byte quant pieces are stored at piece ^ (4 · (row & 1)): lanes g and g + 1 of a
// quarter warp read other banks.
__device__ __forceinline__ int piece_at(int ri, int s) { return s ^ ((ri & 1) << 2); }

struct RQ4K {  // headers (d, dmin, 12 scale bytes) [32][16], then quants [32][128]
  static constexpr int kWarpBytes = 32 * 16 + 32 * 128;
  struct Raw {
    uint4 q, h;
  };
  struct Scales {
    uint32_t d, m;
  };
  static size_t row_bytes(int64_t k) { return DecQ4_KR::repacked_row_bytes(k); }
  __device__ static void fill(unsigned dst, const uint8_t* row, int j, int lane) {
    const uint8_t* g = row + size_t(j / 4) * DecQ4_KR::kGroupBytes;
    cp_async16_s(dst + 16 * lane, g + 16 * (j % 4));
    const uint8_t* q = g + DecQ4_KR::kQuantOff + 128 * (j % 4);
#pragma unroll
    for (int u = 0; u < 8; ++u) cp_async16_s(dst + 512 + 128 * lane + 16 * piece_at(lane, u), q + 16 * u);
  }
  __device__ static Raw read(const uint8_t* w, int ri, int s, int) {
    return Raw{lds128(w + 512 + 128 * ri + 16 * piece_at(ri, s)), lds128(w + 16 * ri)};
  }
  template <int H>
  __device__ static Scales scales(const Raw& r, int t) {  // scale_min_k4 of sub-block 4H + t
    const uint32_t a = byte_at(r.h.y, t), b = byte_at(r.h.z, t);
    int sc, m;
    if constexpr (H == 0) {
      sc = int(a & 63), m = int(b & 63);
    } else {
      const uint32_t c = byte_at(r.h.w, t);
      sc = int((c & 0xF) | ((a >> 6) << 4)), m = int((c >> 4) | ((b >> 6) << 4));
    }
    return Scales{bf2_dup(f16_lo(r.h.x) * float(sc)), bf2_dup(-(f16_hi(r.h.x) * float(m)))};
  }
  template <int NIB>
  __device__ static void pairs(const Raw& r, int w, const Scales& s, uint32_t& lo, uint32_t& hi) {
    const uint32_t v = w == 0 ? r.q.x : w == 1 ? r.q.y : w == 2 ? r.q.z : r.q.w;
    uint32_t a, b;
    biased_pairs(NIB ? (v >> 4) & kLo : v & kLo, a, b);
    lo = bf2_fma(bf2_fma(a, kBf2One, kBf2Neg128), s.d, s.m);
    hi = bf2_fma(bf2_fma(b, kBf2One, kBf2Neg128), s.d, s.m);
  }
};

struct RQ6K {  // ql [32][128], qh [32][96] (64 used: rows 24 words apart, conflict-free), scales [32][16], d [32][8]
  static constexpr int kQh = 32 * 128, kSc = kQh + 32 * 96, kD = kSc + 32 * 16, kWarpBytes = kD + 32 * 8;
  struct Raw {
    uint4 ql;     // low 4 bits
    uint2 qh;     // high 2 bits
    uint32_t sc;  // the two int8 scales (elements 0..15, 16..31)
    uint32_t d;   // the super-block's f16 d
  };
  struct Scales {
    uint32_t d0, d1;
  };
  static size_t row_bytes(int64_t k) { return DecQ6_KR::repacked_row_bytes(k); }
  __device__ static void fill(unsigned dst, const uint8_t* row, int j, int lane) {
    const uint8_t* g = row + size_t(j / 4) * DecQ6_KR::kGroupBytes;
    const int c0 = 8 * (j % 4);
#pragma unroll
    for (int u = 0; u < 8; ++u) cp_async16_s(dst + 128 * lane + 16 * piece_at(lane, u), g + 16 * (c0 + u));
#pragma unroll
    for (int u = 0; u < 4; ++u) cp_async16_s(dst + kQh + 96 * lane + 16 * u, g + DecQ6_KR::kQhOff + 8 * c0 + 16 * u);
    cp_async16_s(dst + kSc + 16 * lane, g + DecQ6_KR::kScOff + 2 * c0);
    cp_async8_s(dst + kD + 8 * lane, g + DecQ6_KR::kDOff);
  }
  __device__ static Raw read(const uint8_t* w, int ri, int s, int j) {
    return Raw{lds128(w + 128 * ri + 16 * piece_at(ri, s)), lds64(w + kQh + 96 * ri + 8 * s), lds16(w + kSc + 16 * ri + 2 * s),
               lds16(w + kD + 8 * ri + 2 * (j % 4))};
  }
  template <int H>
  __device__ static Scales scales(const Raw& r, int) {
    const float d = f16_lo(r.d);
    return Scales{bf2_dup(d * float(int8_t(r.sc & 0xFF))), bf2_dup(d * float(int8_t(r.sc >> 8)))};
  }
  template <int NIB>
  __device__ static void pairs(const Raw& r, int w, const Scales& s, uint32_t& lo, uint32_t& hi) {
    const uint32_t v = w == 0 ? r.ql.x : w == 1 ? r.ql.y : w == 2 ? r.ql.z : r.ql.w;
    const uint32_t q = NIB ? ((v >> 4) & kLo) | DecQ6_KR::hi2(r.qh.y, w) : (v & kLo) | DecQ6_KR::hi2(r.qh.x, w);
    uint32_t a, b;
    biased_pairs(q, a, b);
    const uint32_t d = NIB ? s.d1 : s.d0;
    lo = bf2_fma(bf2_fma(a, kBf2One, kBf2Neg160), d, kBf2NegZero);  // (q - 32)·d·sc
    hi = bf2_fma(bf2_fma(b, kBf2One, kBf2Neg160), d, kBf2NegZero);
  }
};

struct RowsSegs {
  const uint8_t* w[kMaxDqSegs];
  void* out[kMaxDqSegs];
  const float* bias[kMaxDqSegs];
  int64_t n[kMaxDqSegs], ldo[kMaxDqSegs];
  size_t rb[kMaxDqSegs];  // bytes a row
  int add[kMaxDqSegs];
  int second[kMaxDqSegs];          // 1: the segment's weights are T1's
  unsigned first[kMaxDqSegs + 1];  // blocks before segment s; first[count]: the launch's
  int count;
};

// A stage: one super-block of x (NT·8 token rows) and of the four warps' weight rows. Three stages
// where two blocks an SM still fit (at most 113 KB each), else two.
template <int NT>
constexpr int x_bytes() {
  return NT * 8 * kRowBytes;
}
template <class T0, class T1, int NT>
constexpr int stage_bytes() {
  return x_bytes<NT>() + kWarps * (T0::kWarpBytes > T1::kWarpBytes ? T0::kWarpBytes : T1::kWarpBytes);
}
template <class T0, class T1, int NT>
constexpr int stages() {
  return 3 * stage_bytes<T0, T1, NT>() <= 113 * 1024 ? 3 : 2;
}
// Rows a block: 8 warps of 32 rows (a pair: of 16 gate and 16 up rows).
template <bool kPair>
constexpr int block_rows() {
  return kPair ? 16 * kWarps : 32 * kWarps;
}
template <class T0, class T1, int NT>
constexpr int smem_bytes() {
  return stages<T0, T1, NT>() * stage_bytes<T0, T1, NT>();
}

// One block's rows and K range (T: this segment's weight type; the stage layout is <T0, T1>'s).
// kPair: tile 0 gate rows, tile 1 the same up rows; else two tiles of 16 consecutive rows a warp. Warp row i (0..31) is tile i / 16's row i % 16; lane i
// copies it, and lane (g, t) reads rows g, g + 8, 16 + g, 24 + g. wait: the kernel's programmatic
// wait, called once the first stages' weights are requested.
template <class T, class T0, class T1, int NT, bool kPair, class OutT, class Wait>
__device__ __forceinline__ void rows_block(const RowsSegs& s, int sg, const __nv_bfloat16* __restrict__ x, int64_t k, int m,
                                           uint8_t* smem, Wait wait) {
  constexpr int S = stages<T0, T1, NT>(), kStage = stage_bytes<T0, T1, NT>(), kX = x_bytes<NT>(), kBlockRows = block_rows<kPair>();
  constexpr int kWarpBytes = T0::kWarpBytes > T1::kWarpBytes ? T0::kWarpBytes : T1::kWarpBytes;
  const int tid = int(threadIdx.x), lane = tid & 31, wr = tid >> 5, g = lane >> 2, t = lane & 3;
  const int64_t n = sg == 0 ? s.n[0] : sg == 1 ? s.n[1] : s.n[2];
  const size_t rb = sg == 0 ? s.rb[0] : sg == 1 ? s.rb[1] : s.rb[2];
  const uint8_t* wa = sg == 0 ? s.w[0] : sg == 1 ? s.w[1] : s.w[2];
  const uint8_t* wb = kPair ? s.w[1] : wa;
  const unsigned f = sg == 0 ? s.first[0] : sg == 1 ? s.first[1] : s.first[2];
  const int64_t r0 = int64_t(blockIdx.x - f) * kBlockRows + (kPair ? 16 : 32) * wr;  // the warp's first row
  const int64_t tb = kPair ? r0 : r0 + 16;                                           // tile 1's first row
  const uint8_t* myrow = (lane < 16 ? wa : wb) + size_t(std::min<int64_t>((lane < 16 ? r0 : tb) + (lane & 15), n - 1)) * rb;
  const int nsb = int(k / kSuper), splits = int(gridDim.y), sp = int(blockIdx.y);
  const int j0 = int(int64_t(nsb) * sp / splits), nj = int(int64_t(nsb) * (sp + 1) / splits) - j0;

  const unsigned ring = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const unsigned wofs = unsigned(kX + wr * kWarpBytes);
  const auto fill_w = [&](int jj) { T::fill(ring + unsigned((jj % S) * kStage) + wofs, myrow, j0 + jj, lane); };
  const auto fill_x = [&](int jj) {  // super-block j0 + jj of x into stage jj % S
    const unsigned st = ring + unsigned((jj % S) * kStage);
    const __nv_bfloat16* src = x + int64_t(j0 + jj) * kSuper;
#pragma unroll
    for (int i = 0; i < NT * 8 * 64 / kThreads; ++i) {
      const int v = tid + kThreads * i, tok = v >> 6, c8 = v & 63, sb = c8 >> 3, c = c8 & 7;
      if (tok < m) cp_async8_s(st + unsigned(tok * kRowBytes + 64 * sb + 8 * (c ^ ((sb >> 1) & 1))), src + int64_t(tok) * k + 4 * c8);
    }
  };
#pragma unroll
  for (int q = 0; q < S - 1; ++q) {  // weights are read-only: requested before the programmatic wait
    if (q < nj) fill_w(q);
  }
  wait();
#pragma unroll
  for (int q = 0; q < S - 1; ++q) {  // group q: stage q's x (group 0 also the early weights)
    if (q < nj) fill_x(q);
    cp_async_commit();
  }
  float acc[2][NT][4];
#pragma unroll
  for (int ti = 0; ti < 2; ++ti) {
#pragma unroll
    for (int nn = 0; nn < NT; ++nn) acc[ti][nn][0] = acc[ti][nn][1] = acc[ti][nn][2] = acc[ti][nn][3] = 0.0f;
  }
  const int swz = 8 * ((t >> 1) & 1);
  for (int jj = 0; jj < nj; ++jj) {
    cp_async_wait<S - 2>();
    __syncthreads();  // stage jj has landed for every thread; every warp is done with stage jj - 1
    if (jj + S - 1 < nj) {
      fill_w(jj + S - 1);
      fill_x(jj + S - 1);
    }
    cp_async_commit();
    const uint8_t* st = smem + (jj % S) * kStage;
    const uint8_t* xs = st + g * kRowBytes;
    const uint8_t* ws = st + wofs;
    const auto unit = [&](auto hc) {
      constexpr int H = decltype(hc)::value;
      typename T::Raw raw[4];
      typename T::Scales sc[4];
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        raw[r] = T::read(ws, (r & 1) * 8 + (r >> 1) * 16 + g, 4 * H + t, j0 + jj);
        sc[r] = T::template scales<H>(raw[r], t);
      }
      const uint8_t* xl = xs + 64 * (4 * H + t);
      const auto steps = [&](auto nc) {
        constexpr int NIB = decltype(nc)::value;
#pragma unroll
        for (int w = 0; w < 4; ++w) {
          uint32_t a[2][4];
#pragma unroll
          for (int ti = 0; ti < 2; ++ti) {
            T::template pairs<NIB>(raw[2 * ti], w, sc[2 * ti], a[ti][0], a[ti][2]);
            T::template pairs<NIB>(raw[2 * ti + 1], w, sc[2 * ti + 1], a[ti][1], a[ti][3]);
          }
          const int off = (8 * (4 * NIB + w)) ^ swz;
#pragma unroll
          for (int nn = 0; nn < NT; ++nn) {
            const uint2 b = *reinterpret_cast<const uint2*>(xl + nn * 8 * kRowBytes + off);
            mma(acc[0][nn], a[0], b.x, b.y, __nv_bfloat16{});
            mma(acc[1][nn], a[1], b.x, b.y, __nv_bfloat16{});
          }
        }
      };
      steps(std::integral_constant<int, 0>{});
      steps(std::integral_constant<int, 1>{});
    };
    unit(std::integral_constant<int, 0>{});
    unit(std::integral_constant<int, 1>{});
  }
  cp_async_wait<0>();

  OutT* out = static_cast<OutT*>(sg == 0 ? s.out[0] : sg == 1 ? s.out[1] : s.out[2]);
  const float* bias = sg == 0 ? s.bias[0] : sg == 1 ? s.bias[1] : s.bias[2];
  const int64_t ldo = sg == 0 ? s.ldo[0] : sg == 1 ? s.ldo[1] : s.ldo[2];
  const bool add = (sg == 0 ? s.add[0] : sg == 1 ? s.add[1] : s.add[2]) != 0;
  // Accumulator e of tile ti, n-tile nn: row g + 8·(e / 2) of the tile, token 8·nn + 2t + e % 2.
  const auto store = [&](int ti, int nn, int e, float v0, float v1) {
    const int64_t row = (ti == 0 ? r0 : tb) + g + 8 * (e >> 1);
    const int token = 8 * nn + 2 * t + (e & 1);
    if (row >= n || token >= m) return;
    OutT* o = out + int64_t(token) * ldo + row;
    if constexpr (kPair) {
      *o = __float2bfloat16_rn(swiglu1(__float2bfloat16_rn(v0), __float2bfloat16_rn(v1)));
    } else {
      const float y = bias != nullptr ? v0 + bias[row] : v0;
      if constexpr (std::is_same_v<OutT, float>) {
        *o = add ? *o + y : y;
      } else {
        *o = __float2bfloat16_rn(y);
      }
    }
  };
  if (splits == 1) {
#pragma unroll
    for (int nn = 0; nn < NT; ++nn) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        if constexpr (kPair) {
          store(0, nn, e, acc[0][nn][e], acc[1][nn][e]);
        } else {
          store(0, nn, e, acc[0][nn][e], 0.0f);
          store(1, nn, e, acc[1][nn][e], 0.0f);
        }
      }
    }
    return;
  }
  // The splits' sums through the cluster's shared memory, added in rank order: rank r stores the
  // units (warp, n-tile) ≡ r (mod splits).
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  __syncthreads();  // the ring is free
  float* red = reinterpret_cast<float*>(smem);
  const auto at = [&](int w2, int ti, int nn, int e) { return (((w2 * 2 + ti) * NT + nn) * 4 + e) * 32 + lane; };
#pragma unroll
  for (int ti = 0; ti < 2; ++ti) {
#pragma unroll
    for (int nn = 0; nn < NT; ++nn) {
#pragma unroll
      for (int e = 0; e < 4; ++e) red[at(wr, ti, nn, e)] = acc[ti][nn][e];
    }
  }
  cluster.sync();
#pragma unroll
  for (int nn = 0; nn < NT; ++nn) {
    if ((wr * NT + nn) % splits != sp) continue;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      float v[2];
#pragma unroll
      for (int ti = 0; ti < 2; ++ti) {
        v[ti] = cluster.map_shared_rank(red, 0)[at(wr, ti, nn, e)];
        for (int r = 1; r < splits; ++r) v[ti] += cluster.map_shared_rank(red, r)[at(wr, ti, nn, e)];
      }
      if constexpr (kPair) {
        store(0, nn, e, v[0], v[1]);
      } else {
        store(0, nn, e, v[0], 0.0f);
        store(1, nn, e, v[1], 0.0f);
      }
    }
  }
  cluster.sync();  // no block leaves while another may still read its shared memory
}

template <class T0, class T1, int NT, bool kPair, class OutT>
__global__ void __launch_bounds__(kThreads, NT <= 4 ? 2 : 1)
    dq_rows_kernel(const __grid_constant__ RowsSegs s, const __nv_bfloat16* __restrict__ x, int64_t k, int m) {
  extern __shared__ __align__(16) uint8_t smem[];
  const unsigned bx = blockIdx.x;
  const int sg = kPair || s.count < 2 || bx < s.first[1] ? 0 : s.count < 3 || bx < s.first[2] ? 1 : 2;
  const auto wait = [] { pdl_wait(); };
  if constexpr (std::is_same_v<T0, T1>) {
    rows_block<T0, T0, T1, NT, kPair, OutT>(s, sg, x, k, m, smem, wait);
  } else {
    if ((sg == 0 ? s.second[0] : sg == 1 ? s.second[1] : s.second[2]) != 0) {
      rows_block<T1, T0, T1, NT, kPair, OutT>(s, sg, x, k, m, smem, wait);
    } else {
      rows_block<T0, T0, T1, NT, kPair, OutT>(s, sg, x, k, m, smem, wait);
    }
  }
}

int g_rows_max = [] {
  const char* e = std::getenv("VELLUM_CUDA_DQ_ROWS_MAX");
  return e != nullptr ? std::clamp(std::atoi(e), 0, kDqRowsMax) : kDqRowsMax;
}();

std::atomic<int64_t> g_launches{0};

template <class T0, class T1, int NT, bool kPair, class OutT>
cudaError_t launch_shape(const RowsSegs& s, const void* x, int64_t k, int m, cudaStream_t stream) {
  constexpr int kSmem = smem_bytes<T0, T1, NT>();
  static_assert(kSmem <= 227 * 1024, "a block's shared memory on sm_90");
  static_assert(kWarps * 2 * NT * 4 * 32 * int(sizeof(float)) <= kSmem, "the split's sums fit in the ring");
  const auto kernel = dq_rows_kernel<T0, T1, NT, kPair, OutT>;
  static const cudaError_t raised = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  if (raised != cudaSuccess) return raised;
  const int splits = dq_rows_splits(k);
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(s.first[s.count], unsigned(splits));
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = kSmem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  if (splits > 1) {  // a row block's splits are one cluster
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 1;
    attr[0].val.clusterDim.y = unsigned(splits);
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
  }
  const cudaError_t rc = cudaLaunchKernelEx(&cfg, kernel, s, static_cast<const __nv_bfloat16*>(x), k, m);
  if (rc == cudaSuccess) ++g_launches;
  return rc;
}

template <class T0, class T1, bool kPair, class OutT>
cudaError_t launch_rows(const RowsSegs& s, const void* x, int64_t k, int m, cudaStream_t stream) {
  return m <= 32 ? launch_shape<T0, T1, 4, kPair, OutT>(s, x, k, m, stream) : launch_shape<T0, T1, 8, kPair, OutT>(s, x, k, m, stream);
}

size_t row_bytes_of(TensorType type, int64_t k) { return type == TensorType::Q4_K ? RQ4K::row_bytes(k) : RQ6K::row_bytes(k); }

}  // namespace

bool dq_rows_supports(TensorType type, int64_t k) {
  return (type == TensorType::Q4_K || type == TensorType::Q6_K) && k > 0 && k % kSuper == 0;
}

void set_dq_rows_max(int rows) { g_rows_max = std::clamp(rows, 0, kDqRowsMax); }
int dq_rows_max() { return g_rows_max; }

int64_t dq_rows_launches() { return g_launches.load(); }

int dq_rows_splits(int64_t k) { return int(std::clamp<int64_t>(k / (8 * kSuper), 1, 8)); }

cudaError_t launch_dq_rows(const DqSeg* segs, int count, int64_t k, const void* x, int64_t m, bool out_bf16, cudaStream_t stream) {
  if (count < 1 || count > kMaxDqSegs || m < 1 || m > kDqRowsMax || k <= 0 || k % kSuper != 0 || x == nullptr ||
      (reinterpret_cast<uintptr_t>(x) & 15) != 0) {
    return cudaErrorInvalidValue;
  }
  RowsSegs s{};
  s.count = count;
  bool q4 = false, q6 = false;
  for (int i = 0; i < count; ++i) {
    const DqSeg& d = segs[i];
    if (!dq_rows_supports(d.type, k) || d.w == nullptr || d.out == nullptr || d.n <= 0 || d.ldo < d.n || (d.add && out_bf16)) {
      return cudaErrorInvalidValue;
    }
    q4 = q4 || d.type == TensorType::Q4_K;
    q6 = q6 || d.type == TensorType::Q6_K;
    s.w[i] = static_cast<const uint8_t*>(d.w);
    s.out[i] = d.out;
    s.bias[i] = d.bias;
    s.n[i] = d.n;
    s.ldo[i] = d.ldo;
    s.rb[i] = row_bytes_of(d.type, k);
    s.add[i] = d.add ? 1 : 0;
    s.second[i] = q4 && d.type == TensorType::Q6_K ? 1 : 0;
    s.first[i + 1] = s.first[i] + unsigned((d.n + block_rows<false>() - 1) / block_rows<false>());
  }
  if (q4 && q6) {  // Q4_K_M's Q and K with a Q6_K V
    if (out_bf16) return cudaErrorInvalidValue;
    for (int i = 0; i < count; ++i) s.second[i] = segs[i].type == TensorType::Q6_K ? 1 : 0;
    return launch_rows<RQ4K, RQ6K, false, float>(s, x, k, int(m), stream);
  }
  if (q4) {
    return out_bf16 ? launch_rows<RQ4K, RQ4K, false, __nv_bfloat16>(s, x, k, int(m), stream)
                    : launch_rows<RQ4K, RQ4K, false, float>(s, x, k, int(m), stream);
  }
  return out_bf16 ? launch_rows<RQ6K, RQ6K, false, __nv_bfloat16>(s, x, k, int(m), stream)
                  : launch_rows<RQ6K, RQ6K, false, float>(s, x, k, int(m), stream);
}

cudaError_t launch_dq_rows_swiglu(TensorType type, const void* gate, const void* up, int64_t n, int64_t k, const void* x, int64_t m,
                                  void* out, int64_t ldo, cudaStream_t stream) {
  if (!dq_rows_supports(type, k) || gate == nullptr || up == nullptr || out == nullptr || n <= 0 || ldo < n || m < 1 ||
      m > kDqRowsMax || x == nullptr || (reinterpret_cast<uintptr_t>(x) & 15) != 0) {
    return cudaErrorInvalidValue;
  }
  RowsSegs s{};
  s.count = 1;
  s.w[0] = static_cast<const uint8_t*>(gate);
  s.w[1] = static_cast<const uint8_t*>(up);
  s.out[0] = out;
  s.n[0] = n;
  s.ldo[0] = ldo;
  s.rb[0] = row_bytes_of(type, k);
  s.first[1] = unsigned((n + block_rows<true>() - 1) / block_rows<true>());
  return type == TensorType::Q4_K ? launch_rows<RQ4K, RQ4K, true, __nv_bfloat16>(s, x, k, int(m), stream)
                                  : launch_rows<RQ6K, RQ6K, true, __nv_bfloat16>(s, x, k, int(m), stream);
}

}  // namespace vellum::cuda
