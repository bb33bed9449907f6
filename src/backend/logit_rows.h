#pragma once
// Reductions of logit rows on the host, for a backend whose rows are in host memory (the CPU backend,
// on its rows in place, a row per task): the first maximum of a row, as std::max_element finds it,
// its k best candidates in core/logit_order.h's order, and a token drawn from its softmax (which
// the sampler uses too, so that a row drawn by the backend gives the sampler's token).

#include <cstdint>
#include <span>
#include <vector>

namespace vellum::backend {

int32_t first_max(const float* row, int64_t cols);
// values[0, k) and ids[0, k); `order` is scratch (resized to cols).
void top_k_of_row(const float* row, int64_t cols, int k, float* values, int32_t* ids, std::vector<int32_t>& order);
// A token drawn from the row's softmax at `temperature` (> 0) with the uniform `u` in [0, 1): the
// weights exp((l - max) / temperature) in double (NaN logits weigh 0; max is the row's best logit in
// logit_before's order), r = u · Σw summed in column order, and the first column whose running sum
// exceeds r. A row whose best logit is not finite gives that best column (nothing to weigh), as does
// an r the sum never exceeds (u · Σw rounded up to Σw). `w` is scratch (resized to cols).
// A row's softmax weights at `temperature` (> 0), unnormalized: w[i] = exp((l_i - max) / temperature)
// in double (1 for the best), NaN logits 0, and their sum in column order. `best` is the row's best
// column in logit_before's order; a row whose best logit is not finite has no weights (finite false,
// w untouched). Shared by draw_of_row and the sampler's min-p / top-p cut.
struct RowWeights {
  int32_t best = 0;
  bool finite = false;
  double sum = 0;
};
RowWeights softmax_weights(const float* row, int64_t cols, float temperature, std::vector<double>& w);
struct RowDraw {
  double u = 0;            // in [0, 1)
  float temperature = 1;   // > 0
};
int32_t draw_of_row(const float* row, int64_t cols, float temperature, double u, std::vector<double>& w);
// Throws vellum::Error naming the problem unless 1 <= k <= min(max_k, cols) and values and ids hold
// rows × k entries.
void check_top_k_args(int64_t rows, int64_t cols, int k, int max_k, size_t values, size_t ids);
// Throws vellum::Error naming the problem unless there are `rows` draws and outputs, every
// temperature is finite and above 0 and every u in [0, 1).
void check_draw_args(int64_t rows, std::span<const RowDraw> draws, size_t out);

}  // namespace vellum::backend
