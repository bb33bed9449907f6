#include "backend/logit_edits.h"

#include "core/error.h"

namespace vellum::backend {

void check_logit_edits(std::span<const LogitEdit> edits, std::span<const uint32_t> rows, size_t logit_rows, int64_t vocab) {
  if (rows.empty()) {
    if (!edits.empty()) throw_error("logit edits: {} edits without row offsets", edits.size());
    return;
  }
  if (rows.size() != logit_rows + 1) throw_error("logit edits: {} row offsets for {} logit rows", rows.size(), logit_rows);
  if (rows.front() != 0 || rows.back() != edits.size()) {
    throw_error("logit edits: row offsets span [{}, {}) of {} edits", rows.front(), rows.back(), edits.size());
  }
  for (size_t r = 0; r + 1 < rows.size(); ++r) {
    if (rows[r] > rows[r + 1]) throw_error("logit edits: row {} ends before it begins", r);
    for (uint32_t i = rows[r]; i < rows[r + 1]; ++i) {
      const int32_t t = edits[i].token;
      if (t < 0 || t >= vocab) throw_error("logit edits: token {} of row {} is outside the vocabulary ({})", t, r, vocab);
      if (i > rows[r] && t <= edits[i - 1].token) throw_error("logit edits: row {} lists token {} out of order", r, t);
    }
  }
}

}  // namespace vellum::backend
