#pragma once
// Reductions of logit rows on the host, for a backend whose rows are in host memory (the CPU backend,
// on its rows in place, a row per task): the first maximum of a row, as std::max_element finds it,
// and its k best candidates in core/logit_order.h's order.

#include <cstdint>
#include <span>
#include <vector>

namespace vellum::backend {

int32_t first_max(const float* row, int64_t cols);
// values[0, k) and ids[0, k); `order` is scratch (resized to cols).
void top_k_of_row(const float* row, int64_t cols, int k, float* values, int32_t* ids, std::vector<int32_t>& order);
// Throws vellum::Error naming the problem unless 1 <= k <= min(max_k, cols) and values and ids hold
// rows × k entries.
void check_top_k_args(int64_t rows, int64_t cols, int k, int max_k, size_t values, size_t ids);

}  // namespace vellum::backend
