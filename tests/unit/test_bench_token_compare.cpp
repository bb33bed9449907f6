// vellum proof's comparison: where the first divergence is, and how it is reported.
#include <gtest/gtest.h>

#include "bench/prompt_suite.h"
#include "bench/token_compare.h"
#include "core/error.h"

using namespace vellum::bench;

TEST(BenchTokenCompare, IdenticalRuns) {
  const TokenRuns a = {{1, 2, 3}, {4, 5}};
  const auto c = compare_runs(a, a);
  EXPECT_TRUE(c.same());
  EXPECT_EQ(c.identical_prompts, 2u);
  EXPECT_EQ(c.tokens_a, 5u);
  EXPECT_EQ(summary_line(c), "proof: IDENTICAL: 2 prompts, 5 generated tokens each side");
}

TEST(BenchTokenCompare, FirstDivergenceIsLowestPromptThenPosition) {
  const TokenRuns a = {{1, 2, 3}, {4, 5, 6, 7}, {8, 9}};
  const TokenRuns b = {{1, 2, 3}, {4, 5, 0, 7}, {8, 1}};
  const auto c = compare_runs(a, b);
  ASSERT_FALSE(c.same());
  EXPECT_EQ(c.first->prompt, 1u);
  EXPECT_EQ(c.first->position, 2u);
  EXPECT_EQ(c.first->a, 6);
  EXPECT_EQ(c.first->b, 0);
  EXPECT_EQ(c.differing_prompts, 2u);
  EXPECT_EQ(summary_line(c),
            "proof: DIFFERENT: 2 of 3 prompts differ (first at prompt 1 position 2); tokens a=9 b=9");
  const std::vector<std::string> prompts = {"p0", "p1", "p2"};
  const auto text = describe_divergence(*c.first, a, b, prompts, [](int32_t id) { return "<" + std::to_string(id) + ">"; }, 1);
  EXPECT_EQ(text,
            "first divergence: prompt 1 (\"p1\"), generated position 2\n"
            "  before (positions 1..2): [5] \"<5>\"\n"
            "  a: 6 \"<6>\"\n"
            "  b: 0 \"<0>\"\n");
}

TEST(BenchTokenCompare, ShorterOutputDiverges) {
  const auto c = compare_runs({{1, 2, 3}}, {{1, 2}});
  ASSERT_FALSE(c.same());
  EXPECT_EQ(c.first->position, 2u);
  EXPECT_EQ(c.first->a, 3);
  EXPECT_FALSE(c.first->b.has_value());
  EXPECT_THROW(compare_runs({{1}}, {}), vellum::Error);
}

TEST(BenchTokenCompare, QuoteEscapes) { EXPECT_EQ(quote("a\"b\\\n\x01"), "\"a\\\"b\\\\\\n\\x01\""); }

TEST(BenchPromptSuite, PlainAndJsonLines) {
  const auto p = parse_prompt_suite("Once upon\n\n{\"prompt\": \"two\\nlines\", \"id\": 3}\r\nThe end\n", "s");
  EXPECT_EQ(p, (std::vector<std::string>{"Once upon", "two\nlines", "The end"}));
}

TEST(BenchPromptSuite, Errors) {
  auto msg = [](const std::string& text) {
    try {
      parse_prompt_suite(text, "suite.jsonl");
    } catch (const vellum::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(msg("\n  \n"), "suite.jsonl: no prompts");
  EXPECT_NE(msg("ok\n{\"prompt\": 3}\n").find("suite.jsonl:2: expected a string \"prompt\""), std::string::npos);
  EXPECT_NE(msg("{bad json\n").find("suite.jsonl:1: invalid JSON"), std::string::npos);
  EXPECT_THROW(load_prompt_suite("/nonexistent/prompts.txt"), vellum::Error);
}
