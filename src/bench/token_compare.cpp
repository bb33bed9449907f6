#include "bench/token_compare.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"

namespace vellum::bench {

Comparison compare_runs(const TokenRuns& a, const TokenRuns& b) {
  if (a.size() != b.size()) throw_error("cannot compare runs over {} and {} prompts", a.size(), b.size());
  Comparison c;
  c.prompts = a.size();
  for (size_t p = 0; p < a.size(); ++p) {
    c.tokens_a += a[p].size();
    c.tokens_b += b[p].size();
    if (a[p] == b[p]) {
      ++c.identical_prompts;
      continue;
    }
    ++c.differing_prompts;
    if (c.first) continue;
    const auto [ia, ib] = std::mismatch(a[p].begin(), a[p].end(), b[p].begin(), b[p].end());
    Divergence d;
    d.prompt = p;
    d.position = static_cast<size_t>(ia - a[p].begin());
    if (ia != a[p].end()) d.a = *ia;
    if (ib != b[p].end()) d.b = *ib;
    c.first = d;
  }
  return c;
}

std::string quote(const std::string& text) {
  std::string out = "\"";
  for (unsigned char ch : text) {
    if (ch == '"' || ch == '\\') out += std::string("\\") + static_cast<char>(ch);
    else if (ch == '\n') out += "\\n";
    else if (ch == '\t') out += "\\t";
    else if (ch < 0x20 || ch == 0x7f) out += fmt::format("\\x{:02x}", ch);
    else out += static_cast<char>(ch);
  }
  return out + "\"";
}

std::string describe_divergence(const Divergence& d, const TokenRuns& a, const TokenRuns& b,
                                const std::vector<std::string>& prompts,
                                const std::function<std::string(int32_t)>& piece, size_t context) {
  auto token = [&](const std::optional<int32_t>& t) {
    return t ? fmt::format("{} {}", *t, quote(piece(*t))) : std::string("(end of output)");
  };
  std::string out = fmt::format("first divergence: prompt {} ({}), generated position {}\n", d.prompt,
                                d.prompt < prompts.size() ? quote(prompts[d.prompt]) : std::string("?"), d.position);
  const auto& same = a[d.prompt];  // identical before the divergence on both sides
  const size_t from = d.position > context ? d.position - context : 0;
  std::string before, ids;
  for (size_t i = from; i < d.position; ++i) {
    before += piece(same[i]);
    ids += fmt::format("{}{}", i > from ? " " : "", same[i]);
  }
  out += fmt::format("  before (positions {}..{}): [{}] {}\n", from, d.position, ids, quote(before));
  out += fmt::format("  a: {}\n", token(d.a));
  out += fmt::format("  b: {}\n", token(d.b));
  (void)b;
  return out;
}

std::string summary_line(const Comparison& c) {
  if (c.same())
    return fmt::format("proof: IDENTICAL: {} prompts, {} generated tokens each side", c.prompts, c.tokens_a);
  return fmt::format("proof: DIFFERENT: {} of {} prompts differ (first at prompt {} position {}); tokens a={} b={}",
                     c.differing_prompts, c.prompts, c.first->prompt, c.first->position, c.tokens_a, c.tokens_b);
}

}  // namespace vellum::bench
