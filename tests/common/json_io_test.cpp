// Input JSON nested past the limit is refused before it is parsed: copying
// or destroying such a value would overflow the stack.
#include "common/json_io.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <vector>

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

TEST(JsonInput, CommentsAreSkippedByTheDepthCountWhenTheParserSkipsThem) {
  // A quote in a comment must not hide the brackets after it from the count.
  const std::string hidden = "{\"a\": // \"\n" + std::string(500, '[') + std::string(500, ']') + "}";
  EXPECT_TRUE(json_nests_deeper_than(hidden, kMaxJsonDepth, JsonComments::ignored));
  EXPECT_TRUE(parse_json_input(hidden, JsonComments::ignored).is_discarded());
  const std::string block = "{\"a\": /* \" [[[ */ " + std::string(500, '[') + std::string(500, ']') + "}";
  EXPECT_TRUE(json_nests_deeper_than(block, kMaxJsonDepth, JsonComments::ignored));
  // Brackets inside a comment count for nothing; comments parse where they are allowed only.
  const std::string commented = "{\"a\": 1 /* " + std::string(500, '[') + " */ // ]]\n}";
  EXPECT_FALSE(json_nests_deeper_than(commented, 2, JsonComments::ignored));
  EXPECT_EQ(parse_json_input(commented, JsonComments::ignored).value("a", 0), 1);
  EXPECT_EQ(parse_json_input<nlohmann::ordered_json>(commented, JsonComments::ignored).value("a", 0), 1);
  EXPECT_TRUE(parse_json_input(commented).is_discarded());
}

TEST(JsonInput, MalformedTextIsDiscarded) {
  EXPECT_TRUE(parse_json_input("{\"a\":").is_discarded());
  EXPECT_TRUE(parse_json_input("]]]]").is_discarded());
}

// parse_json_input<ordered_json> builds its values itself (for speed): it must give exactly
// what ordered_json::parse gives, member order, repeated keys and refusals included.
void expect_same_as_nlohmann(const std::string& text) {
  const auto ours = parse_json_input<nlohmann::ordered_json>(text);
  const auto theirs = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  ASSERT_EQ(ours.is_discarded(), theirs.is_discarded()) << text;
  if (!ours.is_discarded()) {
    EXPECT_EQ(ours.dump(), theirs.dump()) << text;
  }
}

TEST(JsonInput, OrderedParseGivesWhatNlohmannGives) {
  for (const char* text : {"{}",
                           "[]",
                           "null",
                           "0",
                           "-1",
                           "18446744073709551615",
                           "1.5e300",
                           "1e400",
                           "\"x\"",
                           "true",
                           "{\"b\":1,\"a\":2,\"c\":{\"z\":[1,{\"y\":null}],\"a\":[]}}",
                           "{\"a\":1,\"b\":2,\"a\":3}",
                           "[{\"k\":\"\\u00e9\\ud83d\\ude00\"},[[[]]],\"\"]",
                           "  {\"a\" : [ 1 , 2 ] }  \n",
                           "",
                           " ",
                           "{",
                           "{\"a\":}",
                           "[1,]",
                           "{\"a\":1,}",
                           "[1] x",
                           "{} {}",
                           "\"\\ud800\"",
                           "nul",
                           "[\"\x01\"]",
                           "{\"a\":1}\n\n"})
    expect_same_as_nlohmann(text);
  // Random documents: nested objects (keys repeated on purpose) and arrays of every kind of value.
  std::mt19937 rng(7);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  std::function<std::string(int)> value = [&](int depth) -> std::string {
    switch (depth > 4 ? pick(5) : pick(7)) {
      case 0:
        return "null";
      case 1:
        return pick(2) ? "true" : "false";
      case 2:
        return std::to_string(static_cast<int>(rng() % 2000) - 1000);
      case 3:
        return std::to_string(pick(1000)) + ".25";
      case 4:
        return "\"s" + std::to_string(pick(50)) + "\"";
      case 5: {
        std::string out = "{";
        for (int i = 0, n = pick(20); i < n; ++i)
          out += (i ? "," : "") + ("\"k" + std::to_string(pick(12)) + "\":") + value(depth + 1);
        return out + "}";
      }
      default: {
        std::string out = "[";
        for (int i = 0, n = pick(12); i < n; ++i) out += (i ? "," : "") + value(depth + 1);
        return out + "]";
      }
    }
  };
  for (int i = 0; i < 500; ++i) {
    std::string text = value(0);
    expect_same_as_nlohmann(text);
    // The same text cut short or with a byte changed: refused alike (or read alike).
    if (text.size() > 2) {
      expect_same_as_nlohmann(text.substr(0, text.size() / 2));
      text[static_cast<std::size_t>(pick(static_cast<int>(text.size())))] = ",:]}x\""[pick(6)];
      expect_same_as_nlohmann(text);
    }
  }
}

TEST(JsonInput, OrderedParseOfAnObjectWithManyKeysIsLinear) {
  // 200,000 members, every tenth key given twice: ordered_json's own parse searches the members
  // before each key (hours at this size); this takes well under a second.
  std::string text = "{";
  for (int i = 0; i < 200000; ++i)
    text += (i ? ",\"k" : "\"k") + std::to_string(i % 10 == 9 ? i - 9 : i) + "\":" + std::to_string(i);
  text += "}";
  const auto start = std::chrono::steady_clock::now();
  const auto j = parse_json_input<nlohmann::ordered_json>(text);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.size(), 180000u);
  EXPECT_EQ(j.begin().key(), "k0");
  EXPECT_EQ(j["k0"], 9);  // its first place, its last value
  EXPECT_EQ(j["k10"], 19);
  EXPECT_EQ(std::next(j.begin()).key(), "k1");
  EXPECT_LT(took, 10.0);  // the search took hours; the sanitizer build, loaded, a few seconds at most
  // The same rules on a smaller object, against ordered_json::parse itself.
  std::string small = "{";
  for (int i = 0; i < 300; ++i)
    small += (i ? ",\"k" : "\"k") + std::to_string(i % 7 == 6 ? i / 2 : i) + "\":" + std::to_string(i);
  expect_same_as_nlohmann(small + "}");
}

TEST(JsonInput, OrderedParseRefusesDeepNestingToo) {
  EXPECT_TRUE(parse_json_input<nlohmann::ordered_json>(nested(200000)).is_discarded());
  EXPECT_FALSE(parse_json_input<nlohmann::ordered_json>(nested(kMaxJsonDepth - 1)).is_discarded());
}

}  // namespace
}  // namespace px
