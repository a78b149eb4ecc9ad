// What the host prints of a plugin's session: read as outside input, masked,
// and indented exactly as nlohmann's dump(2) prints the same object.
#include "report/session_text.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "common/json_io.hpp"
#include "common/redact.hpp"

namespace {

using Json = nlohmann::ordered_json;

// What the host printed before it read sessions with simdjson: the object
// parsed into a DOM, every string value masked, dumped with an indent of 2.
std::string dom_masked(const std::string& text) {
  Json j = px::parse_json_input<Json>(text);
  const auto mask = [](auto& self, Json& v) -> void {
    if (v.is_string())
      v = px::redact(v.get_ref<const std::string&>());
    else if (v.is_structured())
      for (auto& child : v) self(self, child);
  };
  mask(mask, j);
  return px::to_json_text(j, 2);
}

std::string masked(const std::string& text, int indent = 0) {
  px::report::SessionMasker masker;
  auto out = masker.masked(text, indent);
  EXPECT_TRUE(out) << text.substr(0, 200) << ": " << (out ? "" : out.error().message);
  return out ? std::string(out.value()) : std::string();
}

std::string refusal(const std::string& text) {
  px::report::SessionMasker masker;
  auto out = masker.masked(text);
  EXPECT_FALSE(out) << text.substr(0, 200);
  return out ? std::string() : out.error().message;
}

// A session in the shape the parsers write, with what a transcript can hold.
Json a_session() {
  Json s;
  s["session_id"] = "01a1feff-61c0-784d-9d6c-c0e48f2942e2";
  s["parent_session_id"] = nullptr;
  s["cwd"] = "/home/me/caf\xc3\xa9 \xe2\x9c\x93";
  s["models"] = Json::array({"gpt-5", "o3"});
  s["files_read"] = Json::array();
  s["commands"] = Json::array();
  s["commands"].push_back(
      {{"command", "echo \"hi\" \\ \t done\n\x1b[31mred\x7f"},
       {"cwd", "/tmp"},
       {"exit_code", -1},
       {"status", "error"},
       {"argv", Json::array({"sh", "-c", "curl -H 'Authorization: Bearer abcdefgh12345678' x"})}});
  s["commands"].push_back(
      {{"command", "export KEY=sk-ant-api03-ABCDEFGHIJKLMNOPQRSTUVWX"}, {"exit_code", 0}});
  s["token_usage"] = {{"input_tokens", 18446744073709551615ULL},
                      {"cached", 9223372036854775807LL},
                      {"cost_usd", 0.1},
                      {"tiny", 1.5e-7},
                      {"huge", 2.5e300},
                      {"negative", -42}};
  s["empty"] = Json::object();
  s["nested"] = Json::array({Json::array(), Json::array({Json::object(), Json::array({1, 2})}), true, false});
  s["malformed_lines"] = 0;
  return s;
}

}  // namespace

TEST(SessionMasker, PrintsWhatTheDomPrintedWithEveryStringMasked) {
  const std::string text = a_session().dump();
  const std::string out = masked(text);
  EXPECT_EQ(out, dom_masked(text));
  EXPECT_EQ(out.find("sk-ant-api03"), std::string::npos) << out;
  EXPECT_EQ(out.find("abcdefgh12345678"), std::string::npos) << out;
  EXPECT_NE(out.find("[REDACTED:anthropic-key]"), std::string::npos) << out;
  // No control byte reaches the output: each is escaped (DEL is not a JSON control character).
  for (char c : out) EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 || c == '\n') << int(c);
  EXPECT_NE(out.find("\\u001b[31m"), std::string::npos) << out;
}

TEST(SessionMasker, EscapesAsWrittenByAnotherWriterComeOutAsTheDomWrites) {
  // \/, \u00e9, a surrogate pair, keys with escapes: decoded, then written as nlohmann writes them.
  const std::string text =
      R"({"a\/b":"x\/y\u00e9\ud83d\ude00\u0001","k\"q":[ 1 , {"z" : null } ],"n":-0,"e":1E+2})";
  const std::string out = masked(text);
  EXPECT_EQ(out,
            "{\n  \"a/b\": \"x/y\xc3\xa9\xf0\x9f\x98\x80\\u0001\",\n  \"k\\\"q\": [\n    1,\n    {\n"
            "      \"z\": null\n    }\n  ],\n  \"n\": -0,\n  \"e\": 1E+2\n}");
  // Numbers keep their text; the object is the same as the DOM's.
  EXPECT_EQ(Json::parse(out), Json::parse(dom_masked(text)));
}

TEST(SessionMasker, IndentsEveryLineForAnArraysElement) {
  const std::string text = a_session().dump();
  const std::string flat = masked(text);
  std::string in;  // each line after the first two spaces further in
  for (char c : flat) {
    in += c;
    if (c == '\n') in += "  ";
  }
  EXPECT_EQ(masked(text, 2), in);
  EXPECT_EQ(masked("{}", 2), "{}");
}

TEST(SessionMasker, OneMaskerReadsALongSessionThenAShortOne) {
  px::report::SessionMasker masker;
  Json long_one = a_session();
  for (int i = 0; i < 5000; ++i) long_one["files_read"].push_back("/src/file-" + std::to_string(i) + ".cpp");
  const std::string a = long_one.dump(), b = R"({"session_id":"s2","x":[true]})";
  auto first = masker.masked(a);
  ASSERT_TRUE(first);
  EXPECT_EQ(std::string(first.value()), dom_masked(a));
  auto second = masker.masked(b);
  ASSERT_TRUE(second);
  EXPECT_EQ(std::string(second.value()), dom_masked(b));
  EXPECT_FALSE(masker.masked("{\"a\":").has_value());
  auto third = masker.masked(a);  // after a refusal, as before it
  ASSERT_TRUE(third);
  EXPECT_EQ(std::string(third.value()), dom_masked(a));
}

TEST(SessionMasker, RefusesWhatIsNotOneJsonObjectSayingWhy) {
  EXPECT_NE(refusal("[1,2]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(refusal("\"text\"").find("not a JSON object"), std::string::npos);
  EXPECT_NE(refusal("42").find("not a JSON object"), std::string::npos);
  EXPECT_NE(refusal("").find("not valid JSON"), std::string::npos);
  EXPECT_NE(refusal("{} {}").find("more than one JSON value"), std::string::npos);
  refusal("{}x");
  refusal("{\"a\":1}]");
  refusal("{\"a\":1");
  refusal("{\"a\":[1,2}");
  refusal("{\"a\" 1}");
  refusal("{\"a\":1,}");
  refusal("{a:1}");
  // Numbers, literals and strings JSON does not have.
  for (const char* bad : {"01", "1.", "-", ".5", "1e", "+1", "0x10", "NaN", "Infinity", "nul", "truee",
                          "True", "'x'", "\"\\x\"", "\"\\u12\"", "\"a\tb\"", "\"\\ud800\""})
    refusal(std::string("{\"v\":") + bad + "}");
  // Bytes that are not UTF-8, in a value and in a key.
  refusal("{\"v\":\"\xff\"}");
  refusal("{\"\xc3\":1}");
  EXPECT_NE(refusal("{\"a\":1,\"b\":{\"c\":1,\"c\":2}}").find("\"c\" twice"), std::string::npos);
}

TEST(SessionMasker, RefusesNestingDeeperThanTheLimit) {
  const auto nested = [](int depth) {
    std::string t = "{\"v\":";
    for (int i = 1; i < depth; ++i) t += "[";
    t += "0";
    for (int i = 1; i < depth; ++i) t += "]";
    return t + "}";
  };
  EXPECT_EQ(masked(nested(px::kMaxJsonDepth)), dom_masked(nested(px::kMaxJsonDepth)));
  EXPECT_NE(refusal(nested(px::kMaxJsonDepth + 1)).find("deeper than"), std::string::npos);
  EXPECT_NE(refusal(nested(100000)).find("deeper than"), std::string::npos);
}
