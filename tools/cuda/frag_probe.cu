// Round 37 check (vellum_cuda_check --dq-only): the register-A kernel's A fragments
// (dq_weights.cuh, T::frag, both its run-time and its compile-time stage position) against the same
// stage's whole half-stages (T::dequant, which round 15's dq_mma and the dequantizing kernels'
// arithmetic follow), value for value, on random raw pieces of every stage position of a group.
// Equal as values: a zero's sign may differ (round 37's Q8_0 FMA gives +0 where s8f(b)·d gave -0);
// those are counted apart.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "backend/cuda/dq_weights.cuh"

namespace {

using namespace vellum::cuda::dq;

constexpr int kRawBytes = 5 * 16;  // the most pieces a type stages (5), side by side (ps = 16)
constexpr int kPairs = 32;         // bf16 pairs of a 64-element stage

template <class T, int Q>
__device__ void frag_q(const uint8_t* raw, int s, int t, uint32_t (&lo)[4], uint32_t (&hi)[4]) {
  T::template frag<Q>(raw, 16, s, t, lo, hi);
}

// Thread i: trial i / 16, stage s = (i / 4) % 4 + 4·(trial % 4) (every position in a 16-stage group:
// Q6_K's scales and d depend on s / 4), lane t = i % 4. Pair p of a stage is elements 2p, 2p + 1.
template <class T>
__global__ void frag_probe_kernel(const uint8_t* raws, int trials, uint32_t* deq, uint32_t* frag_rt, uint32_t* frag_ct) {
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= trials * 16) return;
  const int trial = i / 16, q = (i / 4) % 4, t = i % 4, s = q + 4 * (trial % 4);
  const uint8_t* raw = raws + size_t(trial) * kRawBytes;
  const size_t at = (size_t(trial) * 4 + size_t(q)) * kPairs;
  if (t == 0) {
    for (int h = 0; h < 2; ++h) T::dequant(raw, 16, s, h, deq + at + 16 * h);
  }
  uint32_t lo[4], hi[4], lq[4], hq[4];
  T::template frag<-1>(raw, 16, s, t, lo, hi);
  switch (q) {
    case 0: frag_q<T, 0>(raw, s, t, lq, hq); break;
    case 1: frag_q<T, 1>(raw, s, t, lq, hq); break;
    case 2: frag_q<T, 2>(raw, s, t, lq, hq); break;
    default: frag_q<T, 3>(raw, s, t, lq, hq); break;
  }
  for (int kk = 0; kk < 4; ++kk) {  // lo[kk]: elements 16kk + 2t, +1; hi[kk]: 16kk + 2t + 8, +9
    const int p = 8 * kk + t;
    frag_rt[at + p] = lo[kk], frag_rt[at + p + 4] = hi[kk];
    frag_ct[at + p] = lq[kk], frag_ct[at + p + 4] = hq[kk];
  }
}

// core/half.h's bf16_to_f32 needs C++20 (std::bit_cast); nvcc builds this file as C++17.
float bf16_value(uint16_t h) {
  const uint32_t b = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

}  // namespace

// Returns the values that differ between the fragments (either form) and dequant over `trials`
// random stages of weight type `type` (4: Q4_K, 6: Q6_K, 8: Q8_0); zero_signs counts those equal
// but for a zero's sign. -1: the type is not one of these or a CUDA call failed.
long frag_probe(int type, int trials, long& zero_signs) {
  zero_signs = 0;
  if (type != 4 && type != 6 && type != 8) return -1;
  std::mt19937 rng(0x5eed0000u + unsigned(type));
  std::vector<uint8_t> raws(size_t(trials) * kRawBytes);
  for (auto& b : raws) b = uint8_t(rng());
  // The f16 scales finite (Q4_K: piece 2's d and dmin; Q6_K: piece 4's d; Q8_0: piece 4's eight d),
  // every fourth Q8_0 trial's scales zero (the zero-sign case).
  const int piece = type == 4 ? 2 : 4, words = type == 4 ? 2 : type == 6 ? 4 : 8;
  for (int tr = 0; tr < trials; ++tr) {
    for (int w = 0; w < words; ++w) {
      uint8_t* p = raws.data() + size_t(tr) * kRawBytes + piece * 16 + 2 * w;
      if ((p[1] & 0x7C) == 0x7C) p[1] &= 0xBF;  // exponent 31 (Inf / NaN) -> 15
      if (type == 8 && tr % 4 == 3) p[0] = 0, p[1] = uint8_t(p[1] & 0x80);
    }
  }
  const size_t n = size_t(trials) * 4 * kPairs;
  uint8_t* d_raws = nullptr;
  uint32_t *d_out = nullptr;
  if (cudaMalloc(&d_raws, raws.size()) != cudaSuccess) return -1;
  if (cudaMalloc(&d_out, 3 * n * 4) != cudaSuccess) {
    cudaFree(d_raws);
    return -1;
  }
  bool ok = cudaMemcpy(d_raws, raws.data(), raws.size(), cudaMemcpyHostToDevice) == cudaSuccess &&
            cudaMemset(d_out, 0xFF, 3 * n * 4) == cudaSuccess;  // NaN pairs: an unwritten value differs
  const int threads = trials * 16, block = 128, grid = (threads + block - 1) / block;
  if (type == 4) frag_probe_kernel<WQ4_K><<<grid, block>>>(d_raws, trials, d_out, d_out + n, d_out + 2 * n);
  if (type == 6) frag_probe_kernel<WQ6_K><<<grid, block>>>(d_raws, trials, d_out, d_out + n, d_out + 2 * n);
  if (type == 8) frag_probe_kernel<WQ8_0><<<grid, block>>>(d_raws, trials, d_out, d_out + n, d_out + 2 * n);
  std::vector<uint32_t> out(3 * n);
  ok = ok && cudaGetLastError() == cudaSuccess && cudaMemcpy(out.data(), d_out, 3 * n * 4, cudaMemcpyDeviceToHost) == cudaSuccess;
  cudaFree(d_raws);
  cudaFree(d_out);
  if (!ok) return -1;
  long differ = 0;
  for (size_t i = 0; i < n; ++i) {
    for (int f = 1; f <= 2; ++f) {
      for (int half = 0; half < 2; ++half) {
        const uint16_t a = uint16_t(out[i] >> (16 * half)), b = uint16_t(out[f * n + i] >> (16 * half));
        const float va = bf16_value(a), vb = bf16_value(b);
        if (std::isnan(va) || std::isnan(vb)) {
          ++differ;  // unwritten (the poison), on either side: finite scales give finite values
        } else if (a != b && va == vb) {
          ++zero_signs;  // +0 and -0
        } else if (a != b) {
          ++differ;
        }
      }
    }
  }
  return differ;
}
