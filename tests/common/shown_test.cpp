// Text as messages show it, and the one NUL check.
#include "common/shown.hpp"

#include <gtest/gtest.h>

namespace px {
namespace {

TEST(Shown, KeepsLettersOfAnyLanguageAndEscapesWhatATerminalWouldActOn) {
  EXPECT_EQ(shown("ÜBER"), "ÜBER");
  EXPECT_EQ(shown("名前 ok"), "名前 ok");
  EXPECT_EQ(shown("a\x1b[31mb"), "a\\x1b[31mb");
  EXPECT_EQ(shown(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(shown("a\nb\tc"), "a\\nb\\tc");
  EXPECT_EQ(shown("\x7f"), "\\x7f");
  // C1 controls (U+009B is a CSI) and bytes that are not UTF-8.
  EXPECT_EQ(shown("a\xc2\x9b"
                  "31m"),
            "a\\xc2\\x9b31m");
  EXPECT_EQ(shown("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(shown("\xc3"), "\\xc3");                    // cut short
  EXPECT_EQ(shown("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");  // overlong
  EXPECT_EQ(shown("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(shown("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");
}

TEST(ShownLines, KeepsTheMessagesOwnLineBreaksAndCutsAHugeOne) {
  // A message's line breaks stay; what a terminal would act on does not.
  EXPECT_EQ(shown_lines("one\ntwo \x1b]0;title\x07"), "one\ntwo \\x1b]0;title\\x07");
  EXPECT_EQ(shown_lines("\xc3\x9c\tb"), "\xc3\x9c\\tb");
  const std::string huge(100000, 'x');
  const std::string cut = shown_lines(huge, 100);
  EXPECT_EQ(cut, std::string(100, 'x') + "... (99900 more bytes left out)");
  EXPECT_EQ(shown_lines(std::string(100, 'y'), 100), std::string(100, 'y'));
}

TEST(RefuseNul, NamesWhatAndTheValueShown) {
  EXPECT_TRUE(refuse_nul("fine", "--grant"));
  const auto r = refuse_nul(std::string("/tmp/a\0b", 8), "the profile entry filesystem.read");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::invalid_input);
  EXPECT_EQ(r.error().message,
            "the profile entry filesystem.read: the value \"/tmp/a\\x00b\" holds a NUL byte (\\x00), which "
            "would cut it "
            "short where it is used; remove it");
  const auto huge = refuse_nul(std::string(1000, 'x') + std::string(1, '\0'), "x");
  ASSERT_FALSE(huge);
  EXPECT_LT(huge.error().message.size(), 400u);
}

}  // namespace
}  // namespace px
