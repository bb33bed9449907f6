// Quantized weights × bf16 activations on bf16 tensor cores, weights dequantized in registers
// (dq_mma.h).
//
// A block: 4 warps, each 16·MT weight rows (MT m16 tiles), all 8·NT tokens of the block (NT n8
// tiles). K is walked in 128-element ranges: 4 sub-blocks of 32, one per lane quad position q.
// Each range's weight bytes (64 contiguous quant bytes a Q4_K row, plus scales) and the tokens'
// bf16 values go to shared memory by cp.async, up to 4 stages deep, so that ~3 ranges of every
// row are in flight; a lane (g = lane / 4, q) then reads the 16 bytes of sub-block q of its rows g
// and g + 8 of each tile. (v1 loaded them from global memory into registers one range ahead: 64
// bytes a row at a time and one range in flight ran at 15-25% of copy bandwidth.)
//
// K order inside a range: mma step j (0..7) gives lane q the four elements 4j..4j+3 of its
// sub-block, where the fragment layout wants logical columns 2q, 2q+1 (register a0/a1) and 2q+8,
// 2q+9 (a2/a3). The x fragment follows the same map, so a lane's x for step j is the 8 bytes at
// element 32q + 4j of the range: both fragments are contiguous loads, no ldmatrix, no shuffles.
// (The dot product does not care in which order the tensor core meets the k's, only that A and B
// agree.)
//
// Dequantization: Q4_K and Q6_K build 128 + q as bf16 by byte permutes (0x43 high byte), subtract
// the bias exactly and scale with one bf16x2 FMA (the sub-block scales rounded to bf16: ~2^-9
// relative, below x's own bf16 rounding); Q8_0 goes through f32 and matches the dequantized BF16
// weights of the cuBLAS path bit for bit.

#include "backend/cuda/dq_mma.h"

#include <cuda_bf16.h>

#include <algorithm>
#include <cstdlib>

#include "backend/cuda/cp_async.cuh"
#include "backend/cuda/dequant.cuh"
#include "backend/cuda/mma_tile_store.cuh"
#include "backend/cuda/pdl.cuh"

namespace vellum::cuda {
namespace {

constexpr int kRange = 128;               // K elements per pipeline step
constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kXStride = 2 * kRange + 64;  // bytes per staged token row: ≡ 64 (mod 128), see stage_x

__device__ __forceinline__ uint32_t word_of(const uint4& v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }
__device__ __forceinline__ uint32_t byte_at(uint32_t w, int i) { return (w >> (8 * i)) & 0xFFu; }

__device__ __forceinline__ uint32_t bf2_fma(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("fma.rn.bf16x2 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
__device__ __forceinline__ uint32_t bf2_dup(float v) {  // v rounded to bf16, in both halves
  const uint32_t h = __bfloat16_as_ushort(__float2bfloat16_rn(v));
  return h | (h << 16);
}
__device__ __forceinline__ uint32_t bf2_pack(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}
constexpr uint32_t kBf2One = 0x3F803F80u;       // (1, 1)
constexpr uint32_t kBf2NegZero = 0x80008000u;   // (-0, -0): a·b + (-0) = a·b exactly
constexpr uint32_t kBf2Neg128 = 0xC300C300u;    // (-128, -128)
constexpr uint32_t kBf2Neg160 = 0xC320C320u;    // (-160, -160)

// Bytes 0..3 of v as four small unsigned integers (< 128) into two bf16x2 values 128 + b:
// lo = (b0, b1), hi = (b2, b3).
__device__ __forceinline__ void biased_pairs(uint32_t v, uint32_t& lo, uint32_t& hi) {
  lo = __byte_perm(v, 0x43434343u, 0x5140);
  hi = __byte_perm(v, 0x43434343u, 0x7362);
}

// ---- weight types ------------------------------------------------------------------------------
// A range of a row is staged as kQuant contiguous quant bytes (read by lane q at kQuantLane·q) and
// kExtras small pieces (scales, headers; 16 or 8 bytes each) in a second array. stage offsets are
// relative to the row start. load(quants, extras, r, q) reads lane q's share from shared memory;
// scales() turns it into per-sub-block factors; step(j) gives elements 4j..4j+3 of the lane's
// sub-block as bf16x2 (4j, 4j+1) and (4j+2, 4j+3).
struct DqQ4_K {  // DecQ4_KR: groups of 4 super-blocks = 4 headers (64 bytes), then 32 sub-blocks × 16
  static constexpr int kQuant = 64, kQuantStride = 64, kExtras = 1, kExtraStride = 16;
  static size_t row_bytes(int64_t k) { return DecQ4_KR::repacked_row_bytes(k); }
  __device__ static int64_t quant_off(int r) { return int64_t(r / 8) * DecQ4_KR::kGroupBytes + DecQ4_KR::kQuantOff + 64 * (r % 8); }
  __device__ static int64_t extra_off(int r, int) { return int64_t(r / 8) * DecQ4_KR::kGroupBytes + 16 * ((r / 2) % 4); }
  __device__ static constexpr int extra_bytes(int) { return 16; }
  struct Raw {
    uint4 q, h;  // quants (byte b: element b low nibble, b + 16 high), the super-block's header
  };
  struct Scales {
    uint32_t d, m;  // d·sc and -dmin·m, bf16 pairs
  };
  __device__ static Raw load(const uint8_t* qs, const uint8_t* ex, int, int q) {
    return {*reinterpret_cast<const uint4*>(qs + 16 * q), *reinterpret_cast<const uint4*>(ex)};
  }
  __device__ static Scales scales(const Raw& raw, int r, int q) {
    // scale_min_k4 of sub-block 4·(r % 2) + q, from the 12 scale bytes in h.y, h.z, h.w.
    const uint32_t by = byte_at(raw.h.y, q), bz = byte_at(raw.h.z, q), bw = byte_at(raw.h.w, q);
    const bool first = r % 2 == 0;
    const uint32_t sc = first ? by & 63u : (bw & 0xFu) | ((by >> 6) << 4);
    const uint32_t mn = first ? bz & 63u : (bw >> 4) | ((bz >> 6) << 4);
    const float d = __half2float(__ushort_as_half(uint16_t(raw.h.x & 0xFFFFu)));
    const float dmin = __half2float(__ushort_as_half(uint16_t(raw.h.x >> 16)));
    return {bf2_dup(d * float(sc)), bf2_dup(-(dmin * float(mn)))};
  }
  __device__ static void step(const Raw& raw, const Scales& s, int j, uint32_t& lo, uint32_t& hi) {
    const uint32_t w = word_of(raw.q, j % 4);
    const uint32_t nib = j < 4 ? w & 0x0F0F0F0Fu : (w >> 4) & 0x0F0F0F0Fu;
    biased_pairs(nib, lo, hi);
    lo = bf2_fma(bf2_fma(lo, kBf2One, kBf2Neg128), s.d, s.m);
    hi = bf2_fma(bf2_fma(hi, kBf2One, kBf2Neg128), s.d, s.m);
  }
};

struct DqQ6_K {  // DecQ6_KR: groups of 4 super-blocks: ql 32 × 16, qh 32 × 8, scales 64, d 4 × 2
  // Extras: qh of the range (2 × 16 bytes), its 8 scale bytes, the group's 4 d (16-byte slot).
  static constexpr int kQuant = 64, kQuantStride = 64, kExtras = 4, kExtraStride = 64;
  static size_t row_bytes(int64_t k) { return DecQ6_KR::repacked_row_bytes(k); }
  __device__ static int64_t quant_off(int r) { return int64_t(r / 8) * DecQ6_KR::kGroupBytes + 64 * (r % 8); }
  __device__ static int64_t extra_off(int r, int e) {
    const int64_t g = int64_t(r / 8) * DecQ6_KR::kGroupBytes;
    return e < 2 ? g + DecQ6_KR::kQhOff + 32 * (r % 8) + 16 * e : e == 2 ? g + DecQ6_KR::kScOff + 8 * (r % 8) : g + DecQ6_KR::kDOff;
  }
  __device__ static constexpr int extra_bytes(int e) { return e == 2 ? 8 : 16; }
  struct Raw {
    uint4 ql;
    uint2 qh;
    uint32_t sc, d;  // the sub-block's two int8 scales (16 bits), its super-block's f16 d
  };
  struct Scales {
    uint32_t s0, s1;  // d·sc for elements 0..15 and 16..31, bf16 pairs
  };
  __device__ static Raw load(const uint8_t* qs, const uint8_t* ex, int r, int q) {
    return {*reinterpret_cast<const uint4*>(qs + 16 * q), *reinterpret_cast<const uint2*>(ex + 8 * q),
            *reinterpret_cast<const uint16_t*>(ex + 32 + 2 * q), *reinterpret_cast<const uint16_t*>(ex + 48 + 2 * ((r % 8) / 2))};
  }
  __device__ static Scales scales(const Raw& raw, int, int) {
    const float d = __half2float(__ushort_as_half(uint16_t(raw.d)));
    return {bf2_dup(d * float(int8_t(raw.sc & 0xFFu))), bf2_dup(d * float(int8_t(raw.sc >> 8)))};
  }
  __device__ static void step(const Raw& raw, const Scales& s, int j, uint32_t& lo, uint32_t& hi) {
    const uint32_t w = word_of(raw.ql, j % 4);
    const uint32_t nib = j < 4 ? w & 0x0F0F0F0Fu : (w >> 4) & 0x0F0F0F0Fu;
    const uint32_t v = nib | DecQ6_KR::hi2(j < 4 ? raw.qh.x : raw.qh.y, j % 4);  // 0..63
    biased_pairs(v, lo, hi);
    const uint32_t sc = j < 4 ? s.s0 : s.s1;
    lo = bf2_fma(bf2_fma(lo, kBf2One, kBf2Neg160), sc, kBf2NegZero);  // (v - 32)·d·sc
    hi = bf2_fma(bf2_fma(hi, kBf2One, kBf2Neg160), sc, kBf2NegZero);
  }
};

struct DqQ8_0 {  // DecQ8_0R: groups of 8 blocks = 8 f16 scales (16 bytes), then 8 × 32 int8
  // A range is 4 blocks: 128 quant bytes (row stride 144: two rows' 16-byte reads on other banks)
  // and their 4 scales (8 bytes).
  static constexpr int kQuant = 128, kQuantStride = 144, kExtras = 1, kExtraStride = 16;
  static size_t row_bytes(int64_t k) { return DecQ8_0R::repacked_row_bytes(k); }
  __device__ static int64_t quant_off(int r) { return int64_t(r / 2) * DecQ8_0R::kGroupBytes + 16 + 128 * (r % 2); }
  __device__ static int64_t extra_off(int r, int) { return int64_t(r / 2) * DecQ8_0R::kGroupBytes + 8 * (r % 2); }
  __device__ static constexpr int extra_bytes(int) { return 8; }
  struct Raw {
    uint4 q0, q1;
    uint32_t d;
  };
  struct Scales {
    float d;
  };
  __device__ static Raw load(const uint8_t* qs, const uint8_t* ex, int, int q) {
    const uint4* p = reinterpret_cast<const uint4*>(qs + 32 * q);
    return {p[0], p[1], *reinterpret_cast<const uint16_t*>(ex + 2 * q)};
  }
  __device__ static Scales scales(const Raw& raw, int, int) { return {__half2float(__ushort_as_half(uint16_t(raw.d)))}; }
  // float(q)·d in f32 (exact: 8 × 11 significant bits), rounded once to bf16, as DecQ8_0R + the
  // dequantization kernel do.
  __device__ static void step(const Raw& raw, const Scales& s, int j, uint32_t& lo, uint32_t& hi) {
    const uint32_t u = word_of(j < 4 ? raw.q0 : raw.q1, j % 4) ^ 0x80808080u;  // int8 + 128
    float y[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) y[i] = (__uint_as_float(__byte_perm(u, 0x4B000000u, 0x7440 + i)) - 8388736.0f) * s.d;
    lo = bf2_pack(y[0], y[1]);
    hi = bf2_pack(y[2], y[3]);
  }
};

__device__ __forceinline__ void mma_bf16(float* c, const uint32_t* a, uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Shared memory of one pipeline stage: the block's rows' quant bytes, their extras, the tokens' x.
template <class T, int MT, int NT>
struct DqStage {
  static constexpr int kRows = kWarps * MT * 16, kToks = NT * 8;
  static constexpr int kQuantOff = 0, kExtraOff = kRows * T::kQuantStride, kXOff = kExtraOff + kRows * T::kExtraStride;
  static constexpr int kBytes = kXOff + kToks * kXStride;
};

// grid: (token tiles, row tiles, K splits); token tiles vary fastest, so the blocks that read one
// weight tile run together and share it through L2.
template <class T, int MT, int NT, int STAGES>
__global__ void __launch_bounds__(kThreads, 4)  // 4 blocks (16 warps) a multiprocessor: latency, not issue, was the limit
    dq_mma_kernel(const uint8_t* __restrict__ w, size_t row_bytes, int64_t n, int ranges, const uint8_t* __restrict__ x,
                  int64_t k, int64_t m, float* __restrict__ ws, int32_t* __restrict__ counters, float* __restrict__ out,
                  int64_t ldo, const float* __restrict__ bias) {
  using St = DqStage<T, MT, NT>;
  constexpr int kRows = St::kRows, kToks = St::kToks;
  constexpr int kQuantPieces = T::kQuant / 16;
  extern __shared__ __align__(16) uint8_t smem[];
  __shared__ int last_block;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid / 32, g = lane / 4, q = lane % 4;
  const int64_t m0 = int64_t(blockIdx.x) * kToks, n0 = int64_t(blockIdx.y) * kRows;
  const int splits = int(gridDim.z), split = int(blockIdx.z);
  const int rb = int(int64_t(ranges) * split / splits), re = int(int64_t(ranges) * (split + 1) / splits);

  // What this thread copies each range, fixed for the whole K walk: quant pieces (row, piece) tid,
  // tid + 128, ... (four consecutive threads cover a row's 64 contiguous bytes), extra pieces
  // likewise, and the tokens' 16-byte pieces; only a per-range offset is added in the loop. Rows
  // past n / m re-read the last one.
  constexpr int kQuantItems = kRows * kQuantPieces / kThreads, kExtraItems = (kRows * T::kExtras + kThreads - 1) / kThreads;
  constexpr int kXItems = kToks * 16 / kThreads > 0 ? kToks * 16 / kThreads : 1;
  static_assert(kRows * kQuantPieces % kThreads == 0 && kToks * 16 % kThreads == 0 || kToks * 16 < kThreads);
  const uint8_t* qsrc[kQuantItems];
  int qdst[kQuantItems];
#pragma unroll
  for (int it = 0; it < kQuantItems; ++it) {
    const int i = tid + it * kThreads, row = i / kQuantPieces, c = i % kQuantPieces;
    qsrc[it] = w + min(n0 + row, n - 1) * int64_t(row_bytes) + 16 * c;
    qdst[it] = St::kQuantOff + row * T::kQuantStride + 16 * c;
  }
  const uint8_t* esrc[kExtraItems];
  int edst[kExtraItems];
  int ekind[kExtraItems];
#pragma unroll
  for (int it = 0; it < kExtraItems; ++it) {
    const int i = min(tid + it * kThreads, kRows * T::kExtras - 1), row = i / T::kExtras;
    ekind[it] = i % T::kExtras;
    esrc[it] = w + min(n0 + row, n - 1) * int64_t(row_bytes);
    edst[it] = St::kExtraOff + row * T::kExtraStride + 16 * ekind[it];
  }
  // Token t's piece c (elements 8c..8c+7 of the range) goes to slot 4·(c % 4) + c / 4: at step pair
  // p the lanes q = 0..3 read pieces 4q + p, 64 contiguous bytes a token, and with a token stride
  // ≡ 64 (mod 128) two tokens' reads fall on different banks.
  const uint8_t* xsrc[kXItems];
  int xdst[kXItems];
#pragma unroll
  for (int it = 0; it < kXItems; ++it) {
    const int i = min(tid + it * kThreads, kToks * 16 - 1), t = i / 16, c = i % 16;
    xsrc[it] = x + (min(m0 + t, m - 1) * k + 8 * c) * 2;
    xdst[it] = St::kXOff + t * kXStride + 16 * (4 * (c % 4) + c / 4);
  }
  const auto stage_w = [&](int st, int r) {
    uint8_t* base = smem + st * St::kBytes;
    const int64_t qo = T::quant_off(r);
#pragma unroll
    for (int it = 0; it < kQuantItems; ++it) cp_async16(base + qdst[it], qsrc[it] + qo);
#pragma unroll
    for (int it = 0; it < kExtraItems; ++it) {
      if (tid + it * kThreads >= kRows * T::kExtras) break;
      const uint8_t* src = esrc[it] + T::extra_off(r, ekind[it]);
      if (T::extra_bytes(ekind[it]) == 16) {
        cp_async16(base + edst[it], src);
      } else {
        cp_async8(base + edst[it], src);
      }
    }
  };
  const auto stage_x = [&](int st, int r) {
    uint8_t* base = smem + st * St::kBytes;
#pragma unroll
    for (int it = 0; it < kXItems; ++it) {
      if (tid + it * kThreads >= kToks * 16) break;
      cp_async16(base + xdst[it], xsrc[it] + int64_t(r) * kRange * 2);
    }
  };
  // Weights are never written by a kernel: the first stages' weight copies start before the wait
  // (into this block's shared memory only); they join the first stage's group.
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s)
    if (rb + s < re) stage_w(s, rb + s);
  pdl_wait();
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (rb + s < re) stage_x(s, rb + s);
    cp_async_commit();
  }

  float acc[MT][NT][4] = {};

  for (int r = rb; r < re; ++r) {
    const int it = r - rb;
    cp_async_wait<STAGES - 2>();
    __syncthreads();  // range r has landed for every thread; range r - 1's stage is free
    if (r + STAGES - 1 < re) {
      stage_w((it + STAGES - 1) % STAGES, r + STAGES - 1);
      stage_x((it + STAGES - 1) % STAGES, r + STAGES - 1);
    }
    cp_async_commit();
    const uint8_t* st = smem + (it % STAGES) * St::kBytes;
    typename T::Raw raw[MT][2];
    typename T::Scales sc[MT][2];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = warp * MT * 16 + i * 16 + g + 8 * h;
        raw[i][h] = T::load(st + St::kQuantOff + row * T::kQuantStride, st + St::kExtraOff + row * T::kExtraStride, r, q);
        sc[i][h] = T::scales(raw[i][h], r, q);
      }
    const uint8_t* xst = st + St::kXOff;
#pragma unroll
    for (int p = 0; p < 4; ++p) {
      uint4 xv[NT];
#pragma unroll
      for (int j = 0; j < NT; ++j) xv[j] = *reinterpret_cast<const uint4*>(xst + (j * 8 + g) * kXStride + 16 * (4 * p + q));
#pragma unroll
      for (int jj = 0; jj < 2; ++jj) {
#pragma unroll
        for (int i = 0; i < MT; ++i) {
          uint32_t a[4];
          T::step(raw[i][0], sc[i][0], 2 * p + jj, a[0], a[2]);
          T::step(raw[i][1], sc[i][1], 2 * p + jj, a[1], a[3]);
#pragma unroll
          for (int j = 0; j < NT; ++j) mma_bf16(acc[i][j], a, jj ? xv[j].z : xv[j].x, jj ? xv[j].w : xv[j].y);
        }
      }
    }
  }
  cp_async_wait<0>();

  // K split: every block stores its partial tile; the last to arrive adds them in split order.
  if (splits > 1) {
    const int64_t tile = int64_t(blockIdx.y) * gridDim.x + blockIdx.x;
    constexpr int kTile = kRows * kToks;
    float* part = ws + (tile * splits + split) * kTile;
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) part[((i * NT + j) * 4 + e) * kThreads + tid] = acc[i][j][e];
    __threadfence();
    __syncthreads();
    if (tid == 0) last_block = atomicAdd(&counters[tile], 1) == splits - 1;
    __syncthreads();
    if (!last_block) return;
    __threadfence();
    const float* base = ws + tile * splits * kTile;
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int idx = ((i * NT + j) * 4 + e) * kThreads + tid;
          float v = 0.0f;
          for (int s = 0; s < splits; ++s) v += __ldcg(base + s * kTile + idx);
          acc[i][j][e] = v;
        }
    if (tid == 0) counters[tile] = 0;  // ready for the next launch (graphs replay this one)
  }
  store_row_token_tiles(acc, n0 + warp * MT * 16, m0, g, q, n, m, out, ldo, bias);
}

constexpr int kMt = 2;  // m16 tiles a warp: 128 weight rows a block

template <class T, int NT, int S>
cudaError_t launch_nt(const void* w, int64_t n, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan, float* ws,
                      int32_t* counters, float* out, int64_t ldo, const float* bias, cudaStream_t stream) {
  constexpr int kStageBytes = DqStage<T, kMt, NT>::kBytes;
  const auto kernel = dq_mma_kernel<T, kMt, NT, S>;
  static bool raised = false;  // above the default 48 KiB, once per instantiation
  if (!raised) {
    const cudaError_t rc = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, S * kStageBytes);
    if (rc != cudaSuccess) return rc;
    raised = true;
  }
  const dim3 grid(plan.tok_tiles, plan.row_tiles, plan.splits);
  kernel<<<grid, kThreads, S * kStageBytes, stream>>>(static_cast<const uint8_t*>(w), T::row_bytes(k), n, int(k / kRange),
                                                     static_cast<const uint8_t*>(x), k, m, ws, counters, out, ldo, bias);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_type(const void* w, int64_t n, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan, float* ws,
                        int32_t* counters, float* out, int64_t ldo, const float* bias, cudaStream_t stream) {
  // Stages (experiment, round 10): 2 fits 4-5 blocks a multiprocessor, 4 fits 2.
  const bool deep = plan.stages >= 3;
  switch (plan.nt) {
    case 1: return (deep ? launch_nt<T, 1, 3> : launch_nt<T, 1, 2>)(w, n, k, x, m, plan, ws, counters, out, ldo, bias, stream);
    case 2: return (deep ? launch_nt<T, 2, 3> : launch_nt<T, 2, 2>)(w, n, k, x, m, plan, ws, counters, out, ldo, bias, stream);
    case 4: return (deep ? launch_nt<T, 4, 3> : launch_nt<T, 4, 2>)(w, n, k, x, m, plan, ws, counters, out, ldo, bias, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

bool dq_mma_supports(TensorType type, int64_t k) {
  const bool typed = type == TensorType::Q8_0 || type == TensorType::Q4_K || type == TensorType::Q6_K;
  return typed && k > 0 && k % 256 == 0 && k / kRange <= (int64_t(1) << 30);
}

DqMmaPlan dq_mma_plan(int64_t n, int64_t k, int64_t m, int sms, int splits) {
  DqMmaPlan p;
  p.nt = m <= 8 ? 1 : m <= 16 ? 2 : 4;
  static const int stages = [] {
    const char* e = std::getenv("VELLUM_CUDA_DQ_MMA_STAGES");
    return e != nullptr ? std::atoi(e) : 2;
  }();
  p.stages = stages;
  const int64_t rows = kWarps * kMt * 16, toks = 8 * p.nt;
  p.tok_tiles = unsigned((m + toks - 1) / toks);
  p.row_tiles = unsigned((n + rows - 1) / rows);
  const int64_t tiles = int64_t(p.tok_tiles) * p.row_tiles, ranges = k / kRange;
  // ~3 blocks a multiprocessor, each at least 4 ranges (512 k) long.
  const int64_t want = (3 * int64_t(std::max(sms, 1)) + tiles - 1) / tiles;
  const int64_t s = splits > 0 ? splits : want;
  p.splits = unsigned(std::clamp<int64_t>(s, 1, std::max<int64_t>(1, splits > 0 ? ranges : ranges / 4)));
  if (p.splits > 1) {
    p.ws_floats = size_t(tiles) * p.splits * rows * toks;
    p.counters = size_t(tiles);
  }
  return p;
}

cudaError_t launch_dq_mma(TensorType type, const void* w, int64_t n, int64_t k, const void* x, int64_t m, const DqMmaPlan& plan,
                          float* ws, int32_t* counters, float* out, int64_t ldo, const float* bias, cudaStream_t stream) {
  if (!dq_mma_supports(type, k) || m <= 0 || n <= 0 || plan.row_tiles > 65535u || plan.splits > 65535u ||
      (plan.splits > 1 && (ws == nullptr || counters == nullptr))) {
    return cudaErrorInvalidValue;
  }
  switch (type) {
    case TensorType::Q8_0: return launch_type<DqQ8_0>(w, n, k, x, m, plan, ws, counters, out, ldo, bias, stream);
    case TensorType::Q4_K: return launch_type<DqQ4_K>(w, n, k, x, m, plan, ws, counters, out, ldo, bias, stream);
    default: return launch_type<DqQ6_K>(w, n, k, x, m, plan, ws, counters, out, ldo, bias, stream);
  }
}

}  // namespace vellum::cuda
