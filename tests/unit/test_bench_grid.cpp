// `vellum bench` sweep lists: parsing, its errors, and the grid order.
#include <gtest/gtest.h>

#include "bench/grid.h"
#include "core/error.h"

using namespace vellum::bench;

TEST(BenchGrid, ParsesCommaLists) {
  EXPECT_EQ(parse_list("512,2048", "-p"), (std::vector<uint32_t>{512, 2048}));
  EXPECT_EQ(parse_list("1", "-b"), (std::vector<uint32_t>{1}));
  EXPECT_EQ(parse_list("0", "-n", true), (std::vector<uint32_t>{0}));
}

TEST(BenchGrid, RejectsBadLists) {
  for (const char* bad : {"", ",", "1,", ",1", "1,,2", "a", "1x", "-1", "0", "99999999999", "1.5"}) {
    try {
      parse_list(bad, "-p");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const vellum::Error& e) {
      EXPECT_NE(std::string(e.what()).find("-p"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(parse_list("5000", "-b", false, 4096), vellum::Error);
}

TEST(BenchGrid, BatchOutermost) {
  const auto g = make_grid({16, 32}, {4}, {1, 8});
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g[0].batch, 1u);
  EXPECT_EQ(g[0].prompt, 16u);
  EXPECT_EQ(g[1].prompt, 32u);
  EXPECT_EQ(g[2].batch, 8u);
  EXPECT_EQ(g[3].generate, 4u);
}
