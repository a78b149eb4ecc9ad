// Input JSON nested past the limit is refused before it is parsed: copying
// or destroying such a value would overflow the stack.
#include "common/json_io.hpp"

#include <gtest/gtest.h>

#include <string>

namespace px {
namespace {

std::string nested(int depth, const std::string& inner = "1") {
  return "{\"a\":" + std::string(static_cast<std::size_t>(depth), '[') + inner +
         std::string(static_cast<std::size_t>(depth), ']') + "}";
}

TEST(JsonInput, OrdinaryNestingParses) {
  const auto j = parse_json_input(nested(kMaxJsonDepth - 1));
  ASSERT_FALSE(j.is_discarded());
  EXPECT_TRUE(j.contains("a"));
}

TEST(JsonInput, DeepNestingIsRefusedAndUsingTheResultIsSafe) {
  const auto j = parse_json_input(nested(200000));
  EXPECT_TRUE(j.is_discarded());
  const auto copy = j;  // would recurse 200,000 deep had it been parsed
  EXPECT_TRUE(copy.is_discarded());
}

TEST(JsonInput, BracketsInsideStringsDoNotCount) {
  const std::string text = "{\"a\":\"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"}";
  EXPECT_FALSE(json_nests_deeper_than(text, 2));
  EXPECT_FALSE(parse_json_input(text).is_discarded());
}

TEST(JsonInput, MalformedTextIsDiscarded) {
  EXPECT_TRUE(parse_json_input("{\"a\":").is_discarded());
  EXPECT_TRUE(parse_json_input("]]]]").is_discarded());
}

}  // namespace
}  // namespace px
