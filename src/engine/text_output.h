#pragma once
// One generated sequence's text as it streams: UTF-8-safe deltas (the streaming detokenizer holds
// back incomplete characters) and stop strings, which may span tokens. Text that could still turn
// out to be the start of a stop string is held back until it cannot; when a stop string completes,
// the text before it is released and the stream ends (the stop string itself is not output, as in
// the OpenAI API).

#include <string>
#include <vector>

#include "tokenizer/detokenizer.h"

namespace vellum::engine {

class TextOutput {
 public:
  TextOutput(tokenizer::Tokenizer tokenizer, std::vector<std::string> stop_strings, bool strip_leading_space);

  struct Delta {
    std::string text;
    bool stopped = false;  // a stop string completed: no more text follows
  };
  // The text this token releases. With `match_stops` false (before a request's min_tokens) stop
  // strings are not looked for and everything decoded so far is released; matching resumes in the
  // text that follows.
  Delta push(int32_t token, bool match_stops = true);
  // Everything still held back (the sequence ended for another reason).
  std::string finish();
  bool stopped() const { return stopped_; }

 private:
  tokenizer::StreamingDetokenizer detok_;
  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
};

}  // namespace vellum::engine
