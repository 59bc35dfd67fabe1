// Text for people breaks between names, never inside one: a table narrowed to
// fit the width wraps "mac_opmath@SCALAR" at the '@', a dotted rule id after
// a dot, and keeps each piece whole.
#include "tools/text_table.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace ulpgate {
namespace {

using Lines = std::vector<std::string>;

TEST(WrapTextTest, BreaksBeforeAtAndAfterDots) {
  EXPECT_EQ(WrapText("mac_opmath@SCALAR training (model)", 12),
            (Lines{"mac_opmath", "@SCALAR", "training", "(model)"}));
  EXPECT_EQ(WrapText("tanh_bwd.bf16.opmath.mac.adversarial", 16),
            (Lines{"tanh_bwd.bf16.", "opmath.mac.", "adversarial"}));
  EXPECT_EQ(WrapText("alpha,beta,gamma", 8), (Lines{"alpha,", "beta,", "gamma"}));
}

TEST(WrapTextTest, BreaksBetweenTheWordsOfANameOnlyWhenItMust) {
  EXPECT_EQ(WrapText("mac_unfused_opmath", 12), (Lines{"mac_unfused_", "opmath"}));
  EXPECT_EQ(WrapText("mac_opmath@SCALAR_X", 11), (Lines{"mac_opmath", "@SCALAR_X"}));
}

TEST(WrapTextTest, CutsOnlyAPieceLongerThanTheLine) {
  EXPECT_EQ(WrapText("abcdefghijkl", 8), (Lines{"abcdefgh", "ijkl"}));
}

TEST(WrapTextTest, LongestPieceIsWhatWrapTextKeepsWhole) {
  EXPECT_EQ(LongestPiece("mac_opmath@SCALAR training (model)"), 10u);  // "mac_opmath"
  EXPECT_EQ(LongestPiece("mulsub_fma_fused@AVX3_DL"), 16u);
  EXPECT_EQ(LongestPiece("tanh_bwd.sweeps.digests_match"), 13u);  // "digests_match"
  EXPECT_EQ(LongestPiece("mac_unfused_opmath", true), 8u);         // "unfused_"
}

// A column of names too long to keep whole breaks between their words, at
// an underscore, rather than inside one ("mac_unfuse" over "d_opmath").
TEST(TextTableTest, BreaksLongNamesBetweenTheirWords) {
  TextTable table({"variant", "target", "max_ulp", "mean_ulp", "p99", "correctly_rounded", "model"});
  table.SetLeftAligned({0, 1, 6});
  table.AddRow({"mulsub_fma_fused_opmath_truncating_left", "AVX3_DL (model)", "0.5", "0.2535", "0.5",
                "100.00%", "mulsub_fused_opmath_truncating_left_per_op_wide"});
  std::ostringstream out;
  table.Print(out);
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(line.size(), kTextWidth) << line;
  }
  EXPECT_NE(out.str().find("truncating_"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("truncatin\n"), std::string::npos) << out.str();
}

// A table wider than the width: its widest text column narrows, but never
// below its longest piece, so no variant or target name is cut.
TEST(TextTableTest, NarrowsAColumnWithoutCuttingNames) {
  TextTable table({"limit", "measured", "where", "status"});
  table.SetLeftAligned({0, 1, 2, 3});
  const std::string where = "mulsub_fma_fused@AVX3_DL adversarial (model)";
  table.AddRow({std::string(50, 'x'), std::string(40, 'y'), where, "PASS"});
  std::ostringstream out;
  table.Print(out);
  std::string text = out.str();
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(line.size(), kTextWidth) << line;
  }
  for (const char* piece : {"mulsub_fma_fused", "@AVX3_DL", "adversarial", "(model)"}) {
    EXPECT_NE(text.find(piece), std::string::npos) << piece << " cut in:\n" << text;
  }
}

}  // namespace
}  // namespace ulpgate
