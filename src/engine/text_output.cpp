#include "engine/text_output.h"

#include <algorithm>

namespace vellum::engine {

TextOutput::TextOutput(tokenizer::Tokenizer tokenizer, std::vector<std::string> stop_strings, bool strip_leading_space)
    : detok_(std::move(tokenizer), strip_leading_space, false), stops_(std::move(stop_strings)) {
  std::erase(stops_, std::string());
}

TextOutput::Delta TextOutput::push(int32_t token, bool match_stops) {
  if (stopped_) return {};
  // Nothing is held back without stop strings to look for: the decoded text goes straight out.
  if (held_.empty() && (!match_stops || stops_.empty())) return {detok_.push(token), false};
  held_ += detok_.push(token);
  if (!match_stops) {
    std::string out = std::move(held_);
    held_.clear();
    return {std::move(out), false};
  }
  // The earliest complete stop string ends the text.
  size_t first = std::string::npos;
  for (const auto& s : stops_) first = std::min(first, held_.find(s));
  if (first != std::string::npos) {
    std::string out = held_.substr(0, first);
    held_.clear();
    stopped_ = true;
    return {std::move(out), true};
  }
  // Hold back the longest suffix that is a proper prefix of some stop string.
  size_t keep = 0;
  for (const auto& s : stops_) {
    for (size_t len = std::min(s.size() - 1, held_.size()); len > keep; --len) {
      if (held_.compare(held_.size() - len, len, s, 0, len) == 0) {
        keep = len;
        break;
      }
    }
  }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return {std::move(out), false};
}

std::string TextOutput::finish() {
  if (stopped_) return {};
  std::string out = held_ + detok_.flush();
  held_.clear();
  // A stop string may complete only with the flushed bytes.
  size_t first = std::string::npos;
  for (const auto& s : stops_) first = std::min(first, out.find(s));
  if (first != std::string::npos) out.resize(first);
  return out;
}

}  // namespace vellum::engine
