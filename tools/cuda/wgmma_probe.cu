// Round 23 experiment (vellum_cuda_check --wgmma-probe): does a chain of warpgroup MMAs (wgmma,
// A in registers, B in shared memory) give each f32 accumulator the bits of the same chain of
// mma.sync m16n8k16 on the same k16 slots? If it does, the deterministic mode's many-row F16/BF16
// matmul could run on wgmma while its batch-1 GEMV keeps mma.sync. Random bf16 of 41 binades, rows
// that cancel, and random f32 starting accumulators; every output compared bit for bit.

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "backend/cuda/wgmma.cuh"

namespace {

constexpr int kM = 64, kN = 32, kK = 64, kSteps = kK / 16;

__device__ __forceinline__ void mma_bf16(const uint32_t (&a)[4], uint32_t b0, uint32_t b1, float (&c)[4]) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// wgmma m64n32k16 RS with a run-time scale-d (0: d = A·Bᵀ, 1: d += A·Bᵀ).
__device__ __forceinline__ void wgmma_n32(float (&d)[4][4], const uint32_t (&a)[4], uint64_t b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, {%16, %17, %18, %19}, %20, p, 1, 1, 0;\n}\n"
      : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),
        "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));
}

// One block = one warpgroup, one 64 x 32 tile: a[64][64], b[32][64] (bf16 bits), c0[64][32]. from_zero:
// mma.sync starts from +0 and wgmma's first step does not accumulate (c0 unused). reversed: the
// mma.sync chain takes the k16 steps in reverse order (a control: it must differ).
__global__ void probe_kernel(const uint16_t* a_all, const uint16_t* b_all, const float* c_all, float* out_sync, float* out_wg,
                             int from_zero, int reversed) {
  __shared__ __align__(1024) uint8_t sb[kN * 128];
  const int blk = int(blockIdx.x), tid = int(threadIdx.x), warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const uint16_t* a = a_all + size_t(blk) * kM * kK;
  const uint16_t* b = b_all + size_t(blk) * kN * kK;
  const float* c0 = c_all + size_t(blk) * kM * kN;
  for (int i = tid; i < kN * 8; i += 128) {  // 128-byte swizzle: chunk c of row r at chunk c ^ (r % 8)
    const int r = i / 8, c = i % 8;
    *reinterpret_cast<uint4*>(sb + r * 128 + ((c ^ (r & 7)) * 16)) = *reinterpret_cast<const uint4*>(b + r * kK + c * 8);
  }
  __syncthreads();
  const auto aw = [&](int row, int k) { return *reinterpret_cast<const uint32_t*>(a + row * kK + k); };
  const auto bw = [&](int row, int k) { return *reinterpret_cast<const uint32_t*>(b + row * kK + k); };
  uint32_t q[kSteps][4];
  const int r0 = 16 * warp + g;
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    q[s][0] = aw(r0, 16 * s + 2 * t);
    q[s][1] = aw(r0 + 8, 16 * s + 2 * t);
    q[s][2] = aw(r0, 16 * s + 2 * t + 8);
    q[s][3] = aw(r0 + 8, 16 * s + 2 * t + 8);
  }
  float c[kN / 8][4], d[kN / 8][4];
#pragma unroll
  for (int j = 0; j < kN / 8; ++j) {
    c[j][0] = d[j][0] = from_zero ? 0.0f : c0[r0 * kN + 8 * j + 2 * t];
    c[j][1] = d[j][1] = from_zero ? 0.0f : c0[r0 * kN + 8 * j + 2 * t + 1];
    c[j][2] = d[j][2] = from_zero ? 0.0f : c0[(r0 + 8) * kN + 8 * j + 2 * t];
    c[j][3] = d[j][3] = from_zero ? 0.0f : c0[(r0 + 8) * kN + 8 * j + 2 * t + 1];
  }
#pragma unroll
  for (int i = 0; i < kSteps; ++i) {
    const int s = reversed ? kSteps - 1 - i : i;
#pragma unroll
    for (int j = 0; j < kN / 8; ++j) mma_bf16(q[s], bw(8 * j + g, 16 * s + 2 * t), bw(8 * j + g, 16 * s + 2 * t + 8), c[j]);
  }
  vellum::cuda::wgmma_fence_operands(d);
  vellum::cuda::wgmma_fence();
#pragma unroll
  for (int s = 0; s < kSteps; ++s) wgmma_n32(d, q[s], vellum::cuda::smem_desc_sw128(sb + 32 * s), s == 0 && from_zero ? 0 : 1);
  vellum::cuda::wgmma_commit();
  vellum::cuda::wgmma_wait<0>();
  vellum::cuda::wgmma_fence_operands(d);
  float* os = out_sync + size_t(blk) * kM * kN;
  float* ow = out_wg + size_t(blk) * kM * kN;
#pragma unroll
  for (int j = 0; j < kN / 8; ++j) {
    const int col = 8 * j + 2 * t;
    os[r0 * kN + col] = c[j][0], os[r0 * kN + col + 1] = c[j][1], os[(r0 + 8) * kN + col] = c[j][2], os[(r0 + 8) * kN + col + 1] = c[j][3];
    ow[r0 * kN + col] = d[j][0], ow[r0 * kN + col + 1] = d[j][1], ow[(r0 + 8) * kN + col] = d[j][2], ow[(r0 + 8) * kN + col + 1] = d[j][3];
  }
}

uint16_t bf16_bits(float v) {
  const __nv_bfloat16 h = __float2bfloat16_rn(v);
  uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}

}  // namespace

// Returns the most differing outputs of the two real comparisons (-1 on a CUDA error); prints a line a mode.
long wgmma_probe(int blocks) {
  std::mt19937 rng(23);
  std::normal_distribution<float> nd;
  std::uniform_int_distribution<int> ex(-20, 20), kind(0, 3);
  std::vector<uint16_t> a(size_t(blocks) * kM * kK), b(size_t(blocks) * kN * kK);
  std::vector<float> c(size_t(blocks) * kM * kN);
  for (int blk = 0; blk < blocks; ++blk) {
    const int k = kind(rng);  // 0: unit normals, 1: 41 binades, 2: B rows that cancel A rows, 3: tiny C
    for (int i = 0; i < kM * kK; ++i) a[size_t(blk) * kM * kK + i] = bf16_bits(nd(rng) * (k == 1 ? std::ldexp(1.0f, ex(rng)) : 1.0f));
    for (int r = 0; r < kN; ++r) {
      for (int i = 0; i < kK; ++i) {
        float v = nd(rng) * (k == 1 ? std::ldexp(1.0f, ex(rng)) : 1.0f);
        if (k == 2 && i % 2 == 1) v = -v;  // pairs of products that nearly cancel against a rounded A
        b[size_t(blk) * kN * kK + r * kK + i] = bf16_bits(v);
      }
    }
    for (int i = 0; i < kM * kN; ++i) c[size_t(blk) * kM * kN + i] = nd(rng) * (k == 3 ? 1e-6f : k == 1 ? std::ldexp(1.0f, ex(rng)) : 4.0f);
  }
  uint16_t *da = nullptr, *db = nullptr;
  float *dc = nullptr, *ds = nullptr, *dw = nullptr;
  const size_t outs = size_t(blocks) * kM * kN;
  if (cudaMalloc(&da, a.size() * 2) != cudaSuccess || cudaMalloc(&db, b.size() * 2) != cudaSuccess ||
      cudaMalloc(&dc, c.size() * 4) != cudaSuccess || cudaMalloc(&ds, outs * 4) != cudaSuccess || cudaMalloc(&dw, outs * 4) != cudaSuccess) {
    return -1;
  }
  cudaMemcpy(da, a.data(), a.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(dc, c.data(), c.size() * 4, cudaMemcpyHostToDevice);
  std::vector<float> sv(outs), wv(outs);
  long first = -1;
  for (int mode = 0; mode < 3; ++mode) {  // 0: from random accumulators, 1: from zero, 2: the reversed control
    probe_kernel<<<blocks, 128>>>(da, db, dc, ds, dw, mode == 1, mode == 2);
    if (cudaDeviceSynchronize() != cudaSuccess) return -1;
    cudaMemcpy(sv.data(), ds, outs * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(wv.data(), dw, outs * 4, cudaMemcpyDeviceToHost);
    long differ = 0, nonfinite = 0;
    double max_rel = 0;
    for (size_t i = 0; i < outs; ++i) {
      if (std::memcmp(&sv[i], &wv[i], 4) != 0) {
        ++differ;
        if (std::isfinite(sv[i]) && sv[i] != 0) max_rel = std::max(max_rel, std::fabs(double(wv[i]) - sv[i]) / std::fabs(double(sv[i])));
      }
      nonfinite += !std::isfinite(sv[i]);
    }
    std::printf("wgmma probe (%s): %zu outputs of %d-step chains (bf16, f32 accumulators): %ld differ bit for bit (max rel %.3g), %ld non-finite\n",
                mode == 0 ? "from random accumulators" : mode == 1 ? "from zero, first wgmma without accumulating" : "control: mma.sync steps reversed",
                outs, kSteps, differ, max_rel, nonfinite);
    if (mode < 2) first = std::max(first, differ);
  }
  cudaFree(da), cudaFree(db), cudaFree(dc), cudaFree(ds), cudaFree(dw);
  return first;
}
