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
// A row's softmax weights at `temperature` (> 0), unnormalized: w[i] = exp((l_i - max) / temperature)
// in double (1 for the best), NaN logits 0, and their sum in column order. `best` is the row's best
// column in logit_before's order; a row whose best logit is not finite has no weights (finite false,
// w untouched).
struct RowWeights {
  int32_t best = 0;
  bool finite = false;
  double sum = 0;
};
RowWeights softmax_weights(const float* row, int64_t cols, float temperature, std::vector<double>& w);

// One row's sampling without a top-k cut, as every backend's draw_rows and the sampler do it.
// Laid out for a device backend to copy as it is (cuda/row_draw.h's DrawArg).
struct RowDraw {
  double u = 0;           // the row's uniform, in [0, 1)
  float temperature = 1;  // > 0
  float min_p = 0;        // [0, 1]; 0: off
  float top_p = 1;        // (0, 1]; 1: off
  float unused = 0;
};

// The draw works on integer masses so that any summation order gives the same bits: a device sums
// in parallel and still finds the host's token. A column's mass is its weight scaled by
// 2^mass_shift(cols) and rounded to the nearest integer (the best column's is 2^shift; a row's
// masses sum below 2^63). A weight below 2^-(shift+1) of the best weighs nothing: such a token has
// a total chance below cols · 2^-45 (3·10^-9 at 150k columns) and is never drawn.
int mass_shift(int64_t cols);
uint64_t mass_of(double weight, int shift);
// ceil(top_p · S) and floor(u · T) (at most T - 1), in the double arithmetic every backend uses.
uint64_t top_p_target(float top_p, uint64_t mass);
uint64_t draw_point(double u, uint64_t total);

// A token drawn from the row's softmax at d.temperature with d.u, after the cuts:
// - min-p keeps the columns whose weight is at least d.min_p (the best weighs 1) and above 0;
// - top-p then keeps the columns (of those) whose logit is at least V, V the largest logit such that
//   the kept mass of logits >= V reaches top_p_target(d.top_p, S), S the mass of the whole row
//   (ties at V are all kept; when min-p left less than the target, top-p cuts nothing);
// - r = draw_point(d.u, kept mass), and the token is the first kept column, in column order, whose
//   running mass exceeds r.
// A row whose best logit is not finite gives that best column (nothing to weigh).
struct DrawScratch {
  std::vector<double> w;
  std::vector<uint64_t> mass;
  std::vector<int32_t> ids;
};
int32_t draw_of_row(const float* row, int64_t cols, const RowDraw& d, DrawScratch& s);
// log Σ exp(row) in double, as logprobs need it: max + log(Σ exp(x − max)), the max over the values
// that compare (NaN skipped), summed in column order (a NaN anywhere makes it NaN, as does a row
// with no value above -inf).
double log_normalizer(const float* row, int64_t cols);
// A logit's log-probability given its row's log normalizer: value − log_z in double, to float.
float logprob_of(float value, double log_z);

// Throws vellum::Error naming the problem unless 1 <= k <= min(max_k, cols) and values and ids hold
// rows × k entries.
void check_top_k_args(int64_t rows, int64_t cols, int k, int max_k, size_t values, size_t ids);
// Throws vellum::Error naming the problem unless there are `rows` columns and outputs, each column
// in [0, cols).
void check_pick_args(int64_t rows, int64_t cols, std::span<const int32_t> picks, size_t out);
// Throws vellum::Error naming the problem unless there are `rows` draws and outputs, every
// temperature is finite and above 0, every u in [0, 1), min_p in [0, 1] and top_p in (0, 1].
void check_draw_args(int64_t rows, std::span<const RowDraw> draws, size_t out);

}  // namespace vellum::backend
