#include "tokenizer/detokenizer.h"

#include "tokenizer/unicode.h"

namespace vellum::tokenizer {

std::string StreamingDetokenizer::push(int32_t id) {
  std::string piece = tokenizer_.token_to_piece(id, special_);
  if (strip_ && !tokenizer_.vocab().is_control(id)) {
    if (!piece.empty() && piece[0] == ' ') piece.erase(0, 1);
    strip_ = false;
  }
  pending_ += piece;
  const size_t keep = unicode::incomplete_suffix(pending_);
  const size_t ready = pending_.size() - keep;
  if (ready == 0) return std::string();
  std::string out = unicode::sanitize_utf8(std::string_view(pending_).substr(0, ready));
  pending_.erase(0, ready);
  return out;
}

std::string StreamingDetokenizer::flush() {
  std::string out = unicode::sanitize_utf8(pending_);
  pending_.clear();
  return out;
}

}  // namespace vellum::tokenizer
