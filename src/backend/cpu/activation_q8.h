#pragma once
// Activations quantized on the fly for the integer dot products of quantized weights: each row cut
// into blocks of 32, each block stored as int8 q = nearest(x * 127 / amax) with its f32 scale
// d = amax / 127 and the sums of its two halves of 16 (the K-quants need per-16 sums for their
// offsets and mins). One f32 scale per 32 (rather than llama.cpp's one per 256 for K-quants) keeps
// the quantization error of every block relative to its own magnitude.
//
// Quantization is scalar and depends only on the row's values, so a row quantizes to the same bytes
// whatever other rows are in the matmul (batch invariance).

#include <cstdint>
#include <vector>

#include "backend/cpu/cpu_features.h"

namespace vellum::backend::cpu {

inline constexpr int kActBlock = 32;

// The VNNI kernels' record of one row and one pair of blocks (b, b + 1): per group of 4 elements
// -128 * Σ4 q and the block's scale, then the 64 quantized values, then float(Σ4 q) * d; a missing second block (odd
// block count) is all zeros. Records are grouped by 8 rows so that a tile of up to 8 rows starting
// at a multiple of 8 reaches all its records from one pointer: record (r, p) is at
// ((r / 8) * pairs + p) * 8 * kRecordBytes + (r % 8) * kRecordBytes.
inline constexpr int kRecordBytes = 256;
inline constexpr int kRecordGroup = 8;
struct alignas(64) ActRecord {
  int32_t neg128[16];
  float dlanes[16];
  int8_t q[64];
  float lsum[16];  // float(Σ4 q) * d: the mins' per-lane activation sums
};
static_assert(sizeof(ActRecord) == kRecordBytes);

// A read-only view of quantized rows: row r has q + r*k, d + r*k/32, sums + r*k/16, and, when
// built with records, the records above.
struct ActQ8View {
  const int8_t* q = nullptr;
  const float* d = nullptr;
  const int16_t* sums = nullptr;
  int64_t k = 0;  // elements per row, a multiple of 32
  const ActRecord* records = nullptr;
  int64_t pairs = 0;  // (k / 32 + 1) / 2
};

class ActQ8Rows {
 public:
  // Sizes the buffers for `rows` rows of `k` elements (k % 32 == 0), with or without records.
  void resize(int64_t rows, int64_t k, bool records);
  // Quantizes one row of k floats into row r (the same bytes at every level; `level` picks the code).
  void quantize_row(int64_t r, const float* x, IsaLevel level);
  ActQ8View view() const {
    return {q_.data(), d_.data(), sums_.data(), k_, records_on_ ? records_.data() : nullptr, pairs_};
  }

 private:
  int64_t k_ = 0;
  std::vector<int8_t> q_;
  std::vector<float> d_;
  std::vector<int16_t> sums_;
  bool records_on_ = false;
  int64_t pairs_ = 0;
  std::vector<ActRecord> records_;
};

// The quantization of one block of 32 (exposed for tests): portable, and the AVX2 version (same
// bytes; call it only where the CPU has AVX2).
void quantize_act_block(const float* x, int8_t* q, float* d, int16_t* sums);
void quantize_act_block_avx2(const float* x, int8_t* q, float* d, int16_t* sums);

}  // namespace vellum::backend::cpu
