#include "engine/logit_edit_state.h"

#include <algorithm>

#include "engine/logits_processor.h"

namespace vellum::engine {

void LogitEditState::reset(const SamplingParams& params, std::span<const int32_t> prompt, std::span<const int32_t> output,
                           int64_t vocab) {
  repetition_ = params.repetition_penalty;
  frequency_ = params.frequency_penalty;
  presence_ = params.presence_penalty;
  vocab_ = vocab;
  edits_.clear();
  append_logit_edits(params, prompt, {}, {}, vocab, edits_);  // bias, and the prompt's repetition penalty
  counts_.assign(edits_.size(), 0);
  ready_ = true;
  for (int32_t t : output) add_output(t);
}

void LogitEditState::add_output(int32_t token) {
  using backend::LogitEdit;
  const bool repeats = repetition_ != 1.0f, penalizes = presence_ != 0.0f || frequency_ != 0.0f;
  if (token < 0 || token >= vocab_ || (!repeats && !penalizes)) return;
  const auto it = std::lower_bound(edits_.begin(), edits_.end(), token,
                                   [](const LogitEdit& e, int32_t t) { return e.token < t; });
  const auto i = static_cast<size_t>(it - edits_.begin());
  if (it == edits_.end() || it->token != token) {
    edits_.insert(it, LogitEdit{token});
    counts_.insert(counts_.begin() + static_cast<ptrdiff_t>(i), 0);
  }
  LogitEdit& e = edits_[i];
  if (repeats) {
    e.ops |= LogitEdit::kRepetition;
    e.repetition = repetition_;
  }
  if (penalizes) {
    e.ops |= LogitEdit::kSubtract;
    e.subtract = penalty_subtract(++counts_[i], frequency_, presence_);
  }
}

void LogitEditState::append(std::span<const int32_t> suppressed, std::vector<backend::LogitEdit>& out) const {
  using backend::LogitEdit;
  if (suppressed.empty()) {
    out.insert(out.end(), edits_.begin(), edits_.end());
    return;
  }
  // Merged with the suppressed ids (few: end-of-generation and stop ids), in token order.
  std::vector<int32_t> s(suppressed.begin(), suppressed.end());
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  size_t j = 0;
  for (const LogitEdit& e : edits_) {
    for (; j < s.size() && s[j] < e.token; ++j) {
      if (s[j] >= 0 && s[j] < vocab_) out.push_back({s[j], LogitEdit::kSuppress});
    }
    out.push_back(e);
    if (j < s.size() && s[j] == e.token) {
      out.back().ops |= LogitEdit::kSuppress;
      ++j;
    }
  }
  for (; j < s.size(); ++j) {
    if (s[j] >= 0 && s[j] < vocab_) out.push_back({s[j], LogitEdit::kSuppress});
  }
}

}  // namespace vellum::engine
