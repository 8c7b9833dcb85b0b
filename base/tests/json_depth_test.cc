#include "base/json_depth.h"

#include <gtest/gtest.h>

#include <string>

namespace heapscope::base {
namespace {

TEST(JsonDepth, CountsArraysAndObjects) {
  EXPECT_EQ(json_nesting_depth("1"), 0u);
  EXPECT_EQ(json_nesting_depth("[]"), 1u);
  EXPECT_EQ(json_nesting_depth(R"({"a": [1, {"b": []}], "c": {}})"), 4u);
}

TEST(JsonDepth, IgnoresBracketsInStrings) {
  EXPECT_EQ(json_nesting_depth(R"(["[[[{{{", "\"[[["])"), 1u);
}

TEST(JsonDepth, MeasuresUnbalancedAndHugeText) {
  EXPECT_EQ(json_nesting_depth(std::string(100000, '[')), 100000u);
  EXPECT_EQ(json_nesting_depth("]]]["), 1u);
}

}  // namespace
}  // namespace heapscope::base
