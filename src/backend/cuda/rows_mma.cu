// The deterministic mode's many-row int8 matmul on tensor cores (rows_mma.h, round 22).
//
// A warp owns 16 weight rows × NT·8 token rows. For lane position j (the GEMV lane that takes
// sub-block j of each 1 024-element group, or Q8_0 chunk j of each 32 chunks) it walks the passes
// p in order: the weights' integers of rows g and g + 8 (word t of the sub-block, lane = 4g + t) and
// x's of its token column go through `mma.sync` (s8, exact), and each C element (row, token) adds the
// GEMV's float term for that sub-block to its lane sum. A finished lane sum joins warp_sum's tree
// (butterfly_tree.h: positions in bit-reversed order, five pending sums).
//
// The block copies position j's pieces of every pass (its weight rows' and token rows') into shared
// memory with cp.async while it computes the previous position: two stages, one block barrier
// after each copy lands and one after it is read. Kernel alone on an H100 (llama3-8b shapes, 512
// rows): Q4_K 59–66 TOP/s (1.8–1.9x the rows GEMV), Q8_0 75–80 TOP/s (2.5–2.7x), Q6_K 46–49 (1.2x). It is bound by issue, not memory:
// every (weight row, token row, sub-block) costs the GEMV's ~6 float operations beside 32 MACs, and
// the five pending sums of 16 outputs a thread hold it at ~240 registers (8 warps an SM); the same
// sums in local memory (~72-98 registers, up to 5 blocks an SM) were 0-25% slower (docs/cuda.md,
// round 22).

#include "backend/cuda/rows_mma.h"

#include <cuda_fp16.h>

#include "backend/cuda/butterfly_tree.h"
#include "backend/cuda/cp_async.cuh"
#include "backend/cuda/dequant.cuh"
#include "backend/cuda/gemv_kernels.h"
#include "backend/cuda/gemv_kq.cuh"
#include "backend/cuda/launch.h"
#include "backend/cuda/mma_s8.cuh"
#include "backend/cuda/pdl.cuh"

namespace vellum::cuda {
namespace {

enum class Fmt { Q4_K, Q6_K, Q8_0 };

// Passes of a row and whether lane position j has work in pass p (the GEMV's `continue` / `break`).
template <Fmt F>
__host__ __device__ inline int passes_of(int64_t k) {
  if constexpr (F == Fmt::Q8_0) return int((k / 64 + 31) / 32);
  else return int((k / 256 + 3) / 4);
}
template <Fmt F>
__device__ __forceinline__ bool has_work(int p, int j, int64_t k) {
  if constexpr (F == Fmt::Q8_0) return int64_t(p) * 32 + j < k / 64;
  else return int64_t(p) * 4 + j / 8 < k / 256;
}

// A stage holds lane position j's pieces of every pass for the block's RT weight rows and BT token
// rows, copied by cp.async while the previous position is computed. Pieces are laid out piece-major
// (all rows of piece 0, then piece 1, ...) so that lane (g, t) reading word t of rows g = 0..7 (or
// tokens) hits 32 different banks. Per (pass, weight row): kWq 16-byte weight pieces and one aux
// piece (Q4_K: the super-block header; Q6_K: 8 bytes of high bits, the word holding the sub-block's
// two int8 scales, the word holding its f16 d; Q8_0: the word holding the two blocks' f16 scales).
// Per (pass, token row): kXq 16-byte pieces of x and kXs bytes of its scale pairs.
template <Fmt F>
struct Layout {
  static constexpr int kWq = F == Fmt::Q8_0 ? 4 : 1, kXq = F == Fmt::Q8_0 ? 4 : 2, kXs = F == Fmt::Q8_0 ? 16 : 8;
  __host__ __device__ static constexpr size_t stage_bytes(int passes, int rt, int bt) {
    return size_t(passes) * (size_t(rt) * 16 * (kWq + 1) + size_t(bt) * (16 * kXq + kXs));
  }
};

template <Fmt F, int RT, int BT>
struct Stage {
  using L = Layout<F>;
  uint4* wq;    // [pass][piece][row]
  uint4* wa;    // [pass][row]
  uint4* xq;    // [pass][piece][token]
  uint8_t* xs;  // [pass][token] kXs bytes
  __device__ Stage(uint8_t* base, int passes) {
    wq = reinterpret_cast<uint4*>(base);
    wa = wq + passes * L::kWq * RT;
    xq = wa + passes * RT;
    xs = reinterpret_cast<uint8_t*>(xq + passes * L::kXq * BT);
  }
  __device__ uint32_t wword(int p, int piece, int r, int t) const {
    return reinterpret_cast<const uint32_t*>(&wq[(p * L::kWq + piece) * RT + r])[t];
  }
  __device__ uint32_t xword(int p, int piece, int b, int t) const {
    return reinterpret_cast<const uint32_t*>(&xq[(p * L::kXq + piece) * BT + b])[t];
  }
};

// Every thread's share of a stage's copies, fixed for the whole kernel: slot s is copy unit
// s·NTH + threadIdx.x of a pass (weight units: piece-major over the RT rows, the aux piece last; x
// units: piece-major over the BT tokens, the scales last). Rows and tokens past the end re-read the
// last one (dropped at the store). A pass p and position j only add offsets.
template <Fmt F, int RT, int BT, int NTH>
struct Copier {
  using L = Layout<F>;
  static constexpr int kWU = (L::kWq + 1) * RT, kXU = (L::kXq + 1) * BT;  // copy units a pass
  static constexpr int kWS = (kWU + NTH - 1) / NTH, kXS = (kXU + NTH - 1) / NTH;
  const uint8_t* wsrc[kWS];
  const int8_t* xsrc[kXS];
  uint32_t wdst[kWS], xdst[kXS];  // shared-memory address in pass 0 of the stage at offset 0
  int wpiece[kWS], xpiece[kXS];   // -1: no unit
  __device__ Copier(int passes, const uint8_t* w, size_t rb, int64_t o0, int64_t n, const int8_t* xq, size_t xstride, size_t xs_off,
                    int b0, int nb, uint32_t smem) {
    const uint32_t wa = smem + uint32_t(passes * L::kWq * RT * 16), xqb = wa + uint32_t(passes * RT * 16);
    const uint32_t xsb = xqb + uint32_t(passes * L::kXq * BT * 16);
#pragma unroll
    for (int s = 0; s < kWS; ++s) {
      const int u = s * NTH + int(threadIdx.x), piece = u / RT, r = u % RT;
      wpiece[s] = u < kWU ? piece : -1;
      wsrc[s] = w + min(o0 + r, n - 1) * rb;
      wdst[s] = piece < L::kWq ? smem + uint32_t((piece * RT + r) * 16) : wa + uint32_t(r * 16);
    }
#pragma unroll
    for (int s = 0; s < kXS; ++s) {
      const int u = s * NTH + int(threadIdx.x), piece = u / BT, b = u % BT;
      xpiece[s] = u < kXU ? piece : -1;
      const int8_t* xr = xq + size_t(min(b0 + b, nb - 1)) * xstride;
      xsrc[s] = piece < L::kXq ? xr : xr + xs_off;
      xdst[s] = piece < L::kXq ? xqb + uint32_t((piece * BT + b) * 16) : xsb + uint32_t(b * L::kXs);
    }
  }
  // Lane position j's pieces of every pass into the stage at byte offset `stage` (cp.async, not
  // awaited); pieces of sub-blocks that do not exist are not copied (nor read).
  __device__ void issue(int j, int passes, int64_t k, uint32_t stage) const {
    for (int p = 0; p < passes; ++p) {
      if (!has_work<F>(p, j, k)) continue;  // block-uniform
#pragma unroll
      for (int s = 0; s < kWS; ++s) {
        const int piece = wpiece[s];
        if (piece < 0) continue;
        if constexpr (F == Fmt::Q4_K) {
          const uint8_t* g = wsrc[s] + size_t(p) * GemvQ4K::kGroupBytes;
          if (piece == 0) cp_async16_s(stage + wdst[s] + uint32_t(p * RT * 16), g + DecQ4_KR::kQuantOff + 16 * j);
          else cp_async16_s(stage + wdst[s] + uint32_t(p * RT * 16), g + 16 * (j / 8));
        } else if constexpr (F == Fmt::Q6_K) {
          const uint8_t* g = wsrc[s] + size_t(p) * GemvQ6K::kGroupBytes;
          const uint32_t d = stage + wdst[s] + uint32_t(p * RT * 16);
          if (piece == 0) {
            cp_async16_s(d, g + 16 * j);
          } else {
            cp_async8_s(d, g + DecQ6_KR::kQhOff + 8 * j);
            cp_async4_s(d + 8, g + DecQ6_KR::kScOff + 4 * (j / 2));
            cp_async4_s(d + 12, g + DecQ6_KR::kDOff + 4 * (j / 16));
          }
        } else {  // chunk c = 32p + j: group 8p + j / 4, blocks 2 (j % 4) and 2 (j % 4) + 1 of it
          const uint8_t* g = wsrc[s] + (size_t(p) * 8 + j / 4) * DecQ8_0R::kGroupBytes;
          const int jj = (j % 4) * 2;
          if (piece < 4) cp_async16_s(stage + wdst[s] + uint32_t(p * 4 * RT * 16), g + 16 + 32 * jj + 16 * piece);
          else cp_async4_s(stage + wdst[s] + uint32_t(p * RT * 16), g + 2 * jj);
        }
      }
      const int64_t e = F == Fmt::Q8_0 ? (int64_t(p) * 32 + j) * 64 : int64_t(p) * 1024 + 32 * j;
#pragma unroll
      for (int s = 0; s < kXS; ++s) {
        const int piece = xpiece[s];
        if (piece < 0) continue;
        if (piece < L::kXq) cp_async16_s(stage + xdst[s] + uint32_t(p * L::kXq * BT * 16), xsrc[s] + e + 16 * piece);
        else if constexpr (F == Fmt::Q8_0) cp_async16_s(stage + xdst[s] + uint32_t(p * BT * L::kXs), xsrc[s] + (e / 32) * 8);
        else cp_async8_s(stage + xdst[s] + uint32_t(p * BT * L::kXs), xsrc[s] + (e / 32) * 8);
      }
    }
  }
};

// Weight rows r0 = 16·wm + g and r0 + 8's terms for lane position j in pass p against NT tiles of 8
// token rows from column c0: part[nt][e] += the GEMV's term of C element e (rows r0, r0, r0 + 8,
// r0 + 8; tokens 2t, 2t + 1, 2t, 2t + 1 of the tile).
template <Fmt F, int RT, int BT, int NT>
__device__ __forceinline__ void pass_terms(const Stage<F, RT, BT>& st, int p, int j, int r0, int c0, int g, int t,
                                           float (&part)[NT][4]) {
  const int r1 = r0 + 8;
  if constexpr (F == Fmt::Q4_K) {
    constexpr uint32_t kLo = 0x0F0F0F0Fu;
    const GemvQ4K::Lane L(j);
    const uint32_t q0 = st.wword(p, 0, r0, t), q1 = st.wword(p, 0, r1, t);
    float dsc0, dm0, dsc1, dm1;
    GemvQ4K::scales(st.wa[p * RT + r0], L, dsc0, dm0);
    GemvQ4K::scales(st.wa[p * RT + r1], L, dsc1, dm1);
    const float2* xs = reinterpret_cast<const float2*>(st.xs) + p * BT;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      const int b = c0 + nt * 8;
      int c[4];
      mma_k32(q0 & kLo, q1 & kLo, (q0 >> 4) & kLo, (q1 >> 4) & kLo, st.xword(p, 0, b + g, t), st.xword(p, 1, b + g, t), c);
      const float4 s2 = *reinterpret_cast<const float4*>(&xs[b + 2 * t]);  // tokens 2t and 2t + 1
      const float2 sa = make_float2(s2.x, s2.y), sb = make_float2(s2.z, s2.w);
      part[nt][0] += GemvQ4K::combine(__int2float_rn(c[0]), sa, dsc0, dm0);
      part[nt][1] += GemvQ4K::combine(__int2float_rn(c[1]), sb, dsc0, dm0);
      part[nt][2] += GemvQ4K::combine(__int2float_rn(c[2]), sa, dsc1, dm1);
      part[nt][3] += GemvQ4K::combine(__int2float_rn(c[3]), sb, dsc1, dm1);
    }
  } else if constexpr (F == Fmt::Q6_K) {
    constexpr uint32_t kLo = 0x0F0F0F0Fu, k32 = 0x20202020u;
    uint32_t lo[2], hi[2];
    int sc0[2], sc1[2];
    float d[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int r = i == 0 ? r0 : r1;
      const uint32_t ql = st.wword(p, 0, r, t);
      const uint4 a = st.wa[p * RT + r];  // qh (2 words), the scales' word, d's word
      // The GEMV's 6-bit words (GemvQ6K::half) minus 32 a byte: Σ (q − 32)·x as one signed product.
      lo[i] = __vsub4((ql & kLo) | DecQ6_KR::hi2(a.x, t), k32);
      hi[i] = __vsub4(((ql >> 4) & kLo) | DecQ6_KR::hi2(a.y, t), k32);
      const uint32_t sc = (j & 1) ? a.z >> 16 : a.z & 0xFFFFu;
      sc0[i] = int(int8_t(sc & 0xFFu));
      sc1[i] = int(int8_t(sc >> 8));
      d[i] = __half2float(__ushort_as_half(uint16_t(((j / 8) & 1) ? a.w >> 16 : a.w & 0xFFFFu)));
    }
    const float2* xs = reinterpret_cast<const float2*>(st.xs) + p * BT;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      const int b = c0 + nt * 8;
      int s0[4], s1[4];
      mma_k16(lo[0], lo[1], st.xword(p, 0, b + g, t), s0);
      mma_k16(hi[0], hi[1], st.xword(p, 1, b + g, t), s1);
      const float4 s2 = *reinterpret_cast<const float4*>(&xs[b + 2 * t]);  // tokens 2t and 2t + 1
      const float sa = s2.x, sb = s2.z;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int r = i / 2;
        part[nt][i] += GemvQ6K::combine(sc0[r] * s0[i] + sc1[r] * s1[i], i % 2 ? sb : sa, d[r]);
      }
    }
  } else {
    uint32_t a[4][2], dd[2];  // [piece][row]: pieces 0, 1 = block 2c's 32 bytes, 2, 3 = block 2c + 1's
#pragma unroll
    for (int piece = 0; piece < 4; ++piece) {
      a[piece][0] = st.wword(p, piece, r0, t);
      a[piece][1] = st.wword(p, piece, r1, t);
    }
    dd[0] = st.wa[p * RT + r0].x;
    dd[1] = st.wa[p * RT + r1].x;
    const float4* xs = reinterpret_cast<const float4*>(st.xs) + p * BT;  // (d, d·Σq) of both blocks
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      const int b = c0 + nt * 8;
      int s0[4], s1[4];
      mma_k32(a[0][0], a[0][1], a[1][0], a[1][1], st.xword(p, 0, b + g, t), st.xword(p, 1, b + g, t), s0);
      mma_k32(a[2][0], a[2][1], a[3][0], a[3][1], st.xword(p, 2, b + g, t), st.xword(p, 3, b + g, t), s1);
      const float4 sa = xs[b + 2 * t], sb = xs[b + 2 * t + 1];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float4& s = i % 2 ? sb : sa;
        part[nt][i] += I8Q8_0::combine(s0[i], s1[i], s.x, s.z, dd[i / 2]);
      }
    }
  }
}

template <int NT>
__device__ __forceinline__ void take(float (&dst)[NT][4], const float (&src)[NT][4]) {
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
    for (int i = 0; i < 4; ++i) dst[nt][i] = src[nt][i];
  }
}
template <int NT>
__device__ __forceinline__ void add_into(float (&v)[NT][4], const float (&s)[NT][4]) {
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
    for (int i = 0; i < 4; ++i) v[nt][i] = s[nt][i] + v[nt][i];
  }
}

// WM × WN warps a block, each 16 weight rows × NT·8 token rows; two stages in dynamic shared memory
// (stage_bytes apart). Grid: x = token tiles (fastest, so that the blocks sharing weight rows run
// together and read them from L2), y = weight-row tiles.
template <Fmt F, int WM, int WN, int NT>
__global__ void __launch_bounds__(WM * WN * 32) rows_mma_kernel(const uint8_t* w, size_t rb, int64_t n, int64_t k,
                                                               const int8_t* xq, size_t xstride, size_t xs_off, int nb,
                                                               float* out, int64_t ldo, const float* bias, size_t stage_bytes,
                                                               float* ws) {
  constexpr int RT = WM * 16, BT = WN * NT * 8, NTH = WM * WN * 32;
  extern __shared__ uint4 smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  const int g = lane / 4, t = lane % 4;
  const int64_t o0 = int64_t(blockIdx.y) * RT;
  const int b0 = int(blockIdx.x) * BT;
  const int r0 = (warp % WM) * 16 + g, c0 = (warp / WM) * NT * 8;  // within the tile
  const bool active = o0 + (warp % WM) * 16 < n && b0 + c0 < nb;  // whole warps
  const int passes = passes_of<F>(k);
  pdl_wait();
  const auto stage = [&](int i) {  // position i's buffer
    return Stage<F, RT, BT>(reinterpret_cast<uint8_t*>(smem) + (i & 1) * stage_bytes, passes);
  };
  const uint32_t smem0 = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const Copier<F, RT, BT, NTH> copier(passes, w, rb, o0, n, xq, xstride, xs_off, b0, nb, smem0);
  const auto issue = [&](int i) { copier.issue(butterfly_leaf(i), passes, k, uint32_t((i & 1) * stage_bytes)); };
  // Block z of a split takes leaves i0 .. i0 + span - 1: one subtree of the tree (span a power of 2).
  const int span = 32 / int(gridDim.z), i0 = int(blockIdx.z) * span;
  issue(i0);
  cp_async_commit();
  float part[NT][4], pend[5][NT][4];
#pragma unroll 1
  for (int i = i0; i < i0 + span; ++i) {
    if (i + 1 < i0 + span) issue(i + 1);
    cp_async_commit();
    cp_async_wait<1>();  // position i's stage has landed (this thread's copies) ...
    __syncthreads();     // ... and every thread's
    const int j = butterfly_leaf(i);
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) part[nt][e] = 0.0f;
    }
    if (active) {
      const Stage<F, RT, BT> cur = stage(i);
      // Every pass but the last has work at every position: two at a time, so that one pass's
      // loads and products overlap the other's float work (the adds into part stay in pass order).
#pragma unroll 2
      for (int p = 0; p < passes - 1; ++p) pass_terms<F, RT, BT, NT>(cur, p, j, r0, c0, g, t, part);
      if (has_work<F>(passes - 1, j, k)) pass_terms<F, RT, BT, NT>(cur, passes - 1, j, r0, c0, g, t, part);  // warp-uniform
    }
    __syncthreads();  // the stage is read before position i + 2 refills it
    // After the block's last leaf, part holds its subtree's sum (the whole row when unsplit).
    butterfly_push(i - i0, [&](auto l) { take(pend[l()], part); }, [&](auto l) { add_into(part, pend[l()]); });
  }
  if (!active) return;
  // Unsplit: the row, plus the bias, into out. Split: the subtree's sums into plane z of ws, for
  // rows_mma_merge_kernel.
  const bool split = gridDim.z > 1;
  float* dst = split ? ws + size_t(blockIdx.z) * size_t(nb) * size_t(n) : out;
  const int64_t ld = split ? n : ldo;
  const float* add = split ? nullptr : bias;
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int64_t o = o0 + r0 + (e / 2) * 8;
      const int b = b0 + c0 + nt * 8 + 2 * t + e % 2;
      if (o < n && b < nb) dst[int64_t(b) * ld + o] = add != nullptr ? part[nt][e] + add[o] : part[nt][e];
    }
  }
}

// A split launch's subtrees added as warp_sum's tree adds them (neighbours first), then the bias.
__global__ void rows_mma_merge_kernel(const float* ws, int splits, int64_t n, int nb, float* out, int64_t ldo,
                                      const float* bias) {
  pdl_wait();
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x, plane = int64_t(nb) * n;
  if (i >= plane) return;
  float v[8];
  for (int z = 0; z < splits; ++z) v[z] = ws[z * plane + i];
  for (int w = 1; w < splits; w *= 2) {
    for (int z = 0; z < splits; z += 2 * w) v[z] = v[z] + v[z + w];
  }
  const int64_t b = i / n, o = i % n;
  out[b * ldo + o] = bias != nullptr ? v[0] + bias[o] : v[0];
}

constexpr size_t kMaxSmem = 227 * 1024;

template <Fmt F, int WM, int WN, int NT>
cudaError_t go(const void* w, size_t rb, int64_t n, int64_t k, const void* q8, int rows, float* out, int64_t ldo,
               const float* bias, int splits, float* ws, cudaStream_t stream) {
  constexpr int RT = WM * 16, BT = WN * NT * 8;
  auto* kernel = rows_mma_kernel<F, WM, WN, NT>;
  static const cudaError_t attr = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kMaxSmem));
  if (attr != cudaSuccess) return attr;
  const size_t stage = Layout<F>::stage_bytes(passes_of<F>(k), RT, BT);
  if (2 * stage > kMaxSmem) return cudaErrorNotSupported;
  const unsigned tiles_b = unsigned((rows + BT - 1) / BT);
  const int64_t tiles_o = (n + RT - 1) / RT;
  if (tiles_o > 65535) return cudaErrorInvalidValue;
  launch_kernel(kernel, dim3(tiles_b, unsigned(tiles_o), unsigned(splits)), WM * WN * 32, 2 * stage, stream,
      static_cast<const uint8_t*>(w), rb, n, k, static_cast<const int8_t*>(q8), q8_bytes(k), size_t((k + 15) / 16 * 16), rows,
      out, ldo, bias, stage, ws);
  if (splits == 1) return cudaGetLastError();
  const int64_t plane = int64_t(rows) * n;
  launch_kernel(rows_mma_merge_kernel, unsigned((plane + 255) / 256), 256, 0, stream, ws, splits, n, rows, out, ldo, bias);
  return cudaGetLastError();
}

// The tile shape by_rows takes: weight rows a block.
int rows_tile(int rows) { return rows <= 32 ? 64 : 32; }
int tokens_tile(int rows) { return rows <= 16 ? 16 : rows <= 32 ? 32 : 64; }

// Tile by token rows: up to 16 (4 warps of 16 weight rows × 16 tokens), 32 (× 32), then 2 × 2 warps
// of 16 × 32 (32 weight rows × 64 tokens a block). Measured against the other shapes on an H100
// (round 22, > 32 rows): 2 × 4 warps of 16 × 16, 2 × 2 of 16 × 16, 4 × 2 of 16 × 16, and 2 × 2 of
// 16 × 32 held to 168 registers (3 blocks an SM, spilling) were 5–30% slower on every shape.
template <Fmt F>
cudaError_t by_rows(const void* w, size_t rb, int64_t n, int64_t k, const void* q8, int rows, float* out, int64_t ldo,
                    const float* bias, int splits, float* ws, cudaStream_t stream) {
  if (rows <= 16) return go<F, 4, 1, 2>(w, rb, n, k, q8, rows, out, ldo, bias, splits, ws, stream);
  if (rows <= 32) return go<F, 4, 1, 4>(w, rb, n, k, q8, rows, out, ldo, bias, splits, ws, stream);
  return go<F, 2, 2, 4>(w, rb, n, k, q8, rows, out, ldo, bias, splits, ws, stream);
}

}  // namespace

bool rows_mma_supports(TensorType type, int64_t k) {
  switch (type) {
    case TensorType::Q8_0: return k > 0 && k % 64 == 0;
    case TensorType::Q4_K:
    case TensorType::Q6_K: return k > 0 && k % 256 == 0;
    default: return false;
  }
}

// Blocks of two stages at most two a multiprocessor: a split fills at most two waves.
int rows_mma_splits(TensorType type, int64_t n, int rows, int sms) {
  if (!rows_mma_supports(type, 256) || n <= 0 || rows < 1 || sms < 1) return 1;
  const int64_t blocks = (n + rows_tile(rows) - 1) / rows_tile(rows) * ((rows + tokens_tile(rows) - 1) / tokens_tile(rows));
  int s = 1;
  while (s < 8 && blocks * s * 2 <= 2 * int64_t(sms)) s *= 2;
  return s;
}
size_t rows_mma_ws_floats(int splits, int64_t n, int rows) { return splits > 1 ? size_t(splits) * size_t(n) * size_t(rows) : 0; }

cudaError_t launch_rows_mma(TensorType type, const void* w, int64_t n, int64_t k, const void* q8, int rows, float* out,
                            int64_t ldo, const float* bias, int splits, float* ws, cudaStream_t stream) {
  if (n <= 0 || rows < 1 || !rows_mma_supports(type, k)) return cudaErrorInvalidValue;
  if ((splits != 1 && splits != 2 && splits != 4 && splits != 8) || (splits > 1 && ws == nullptr)) return cudaErrorInvalidValue;
  switch (type) {
    case TensorType::Q4_K:
      return by_rows<Fmt::Q4_K>(w, DecQ4_KR::repacked_row_bytes(k), n, k, q8, rows, out, ldo, bias, splits, ws, stream);
    case TensorType::Q6_K:
      return by_rows<Fmt::Q6_K>(w, DecQ6_KR::repacked_row_bytes(k), n, k, q8, rows, out, ldo, bias, splits, ws, stream);
    case TensorType::Q8_0:
      return by_rows<Fmt::Q8_0>(w, DecQ8_0R::repacked_row_bytes(k), n, k, q8, rows, out, ldo, bias, splits, ws, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace vellum::cuda
