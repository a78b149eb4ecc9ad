#pragma once
// Whether a program's output or a message holds a piece of text: the
// helpers the tests share for it (gmock's HasSubstr where a matcher reads better).
#include <gtest/gtest.h>

#include <initializer_list>
#include <string_view>

namespace px::test {

inline bool contains(std::string_view text, std::string_view needle) {
  return text.find(needle) != std::string_view::npos;
}

// Every part is in `text`; a part missing fails the test and names it.
inline void expect_contains(std::string_view text, std::initializer_list<const char*> parts) {
  for (const char* part : parts) EXPECT_TRUE(contains(text, part)) << "'" << part << "' not in: " << text;
}

}  // namespace px::test
