// Results table rendering: Markdown text, CSV (checked against RFC 4180 quoting) and JSON types.
#include <gtest/gtest.h>

#include "bench/table.h"
#include "core/error.h"

using namespace vellum::bench;

namespace {
Table sample() {
  Table t;
  t.columns = {"name", "tok_s", "n"};
  t.rows = {{std::string("a,b"), 12.345, int64_t(3)}, {std::string("say \"hi\""), 1.0, int64_t(40)}};
  return t;
}
}  // namespace

TEST(BenchTable, Text) {
  EXPECT_EQ(sample().to_text(),
            "|     name | tok_s |  n |\n"
            "| -------- | ----- | -- |\n"
            "|      a,b | 12.35 |  3 |\n"
            "| say \"hi\" |  1.00 | 40 |\n");
}

TEST(BenchTable, CsvQuotesPerRfc4180) {
  EXPECT_EQ(sample().to_csv(), "name,tok_s,n\n\"a,b\",12.345,3\n\"say \"\"hi\"\"\",1,40\n");
  EXPECT_EQ(csv_escape("plain"), "plain");
  EXPECT_EQ(csv_escape("two\nlines"), "\"two\nlines\"");
}

TEST(BenchTable, JsonKeepsNumbers) {
  const auto j = sample().to_json();
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["name"], "a,b");
  EXPECT_TRUE(j[0]["tok_s"].is_number_float());
  EXPECT_TRUE(j[1]["n"].is_number_integer());
  EXPECT_EQ(j[1]["n"], 40);
}

TEST(BenchTable, RaggedRowIsAnError) {
  Table t = sample();
  t.rows.push_back({std::string("x")});
  EXPECT_THROW(t.to_text(), vellum::Error);
  EXPECT_THROW(t.to_csv(), vellum::Error);
}
