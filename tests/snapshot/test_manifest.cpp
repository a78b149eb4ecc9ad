// The manifest format and the object hash encoding.
#include <gtest/gtest.h>

#include <algorithm>

#include "snapshot/manifest.hpp"
#include "snapshot/objects.hpp"
#include "snapshot/snapshot.hpp"

using namespace px::snapshot;

TEST(Manifest, EscapeRoundTripsEveryByte) {
  std::string all;
  for (int c = 1; c < 256; ++c) all += static_cast<char>(c);
  std::string esc = escape_bytes(all);
  EXPECT_EQ(esc.find('\t'), std::string::npos);
  EXPECT_EQ(esc.find('\n'), std::string::npos);
  auto back = unescape_bytes(esc);
  ASSERT_TRUE(back);
  EXPECT_EQ(back.value(), all);
  EXPECT_FALSE(unescape_bytes("abc%4"));
  EXPECT_FALSE(unescape_bytes("abc%zz"));
}

TEST(Manifest, TreeRoundTrip) {
  std::vector<Entry> entries(3);
  entries[0] = {"a", 'd', 0700, 1, 2, 0, 123, "", "", 0};
  entries[1] = {
      std::string("a/\xff\nname with\ttab"), 'f', 04600, 0, 0, 42, -5, std::string(64, 'a'), "", kChanged};
  entries[2] = {"a/link", 'l', 0777, 0, 0, 3, 9, "", "../tar get\n", 0};
  auto parsed = parse_tree(serialize_tree(entries));
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed.value().size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& a = entries[i];
    const auto& b = parsed.value()[i];
    EXPECT_EQ(a.path, b.path);
    EXPECT_EQ(a.type, b.type);
    EXPECT_EQ(a.mode, b.mode);
    EXPECT_EQ(a.size, b.size);
    EXPECT_EQ(a.mtime_ns, b.mtime_ns);
    EXPECT_EQ(a.hash, b.hash);
    EXPECT_EQ(a.target, b.target);
    EXPECT_EQ(a.flags, b.flags);
  }
  EXPECT_FALSE(parse_tree("parallex-tree 1\nf\t1\n"));
  EXPECT_FALSE(parse_tree("something else\n"));
}

TEST(Manifest, PathOrderKeepsSubtreesTogether) {
  std::vector<std::string> p = {"a!", "a/b", "a", "a/b/c", "a.b", "b"};
  std::sort(p.begin(), p.end(), [](auto& x, auto& y) { return path_less(x, y); });
  EXPECT_EQ(p, (std::vector<std::string>{"a", "a/b", "a/b/c", "a!", "a.b", "b"}));
}

TEST(Manifest, DisplayNameEscapesControlAndInvalidUtf8) {
  EXPECT_EQ(display_name("plain name"), "plain name");
  EXPECT_EQ(display_name("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(display_name("a\nb"), "a\\x0ab");
  EXPECT_EQ(display_name("\xff"), "\\xff");
}

TEST(Manifest, InfoRoundTripsNonUtf8Source) {
  SnapshotInfo info;
  info.id = "20250101T000000Z-abcdef";
  info.time_ns = 7;
  info.source = "/home/\xff";
  info.tree = std::string(64, 'b');
  info.excludes = {"secrets", "k\xfe"};
  auto back = parse_info(serialize_info(info));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back.value().source, info.source);
  EXPECT_EQ(back.value().excludes, info.excludes);
}

TEST(Excludes, NormaliseAndMatch) {
  auto ex = normalize_excludes({"./secrets/", "keys", "keys"});
  ASSERT_TRUE(ex);
  EXPECT_EQ(ex.value(), (std::vector<std::string>{"secrets", "keys"}));
  EXPECT_TRUE(is_excluded("secrets", ex.value()));
  EXPECT_TRUE(is_excluded("secrets/token", ex.value()));
  EXPECT_FALSE(is_excluded("secrets2", ex.value()));
  EXPECT_FALSE(normalize_excludes({"../x"}));
  EXPECT_FALSE(normalize_excludes({"/abs"}));
  EXPECT_FALSE(normalize_excludes({"a/../b"}));
}

TEST(ObjectHash, ZeroBlocksHashTheSameWhetherHolesOrData) {
  std::string dense(3 * 65536 + 10, '\0');
  dense[65536 + 5] = 'x';
  std::string other = dense;
  other[65536 + 5] = 'y';
  EXPECT_NE(hash_bytes(dense), hash_bytes(other));
  EXPECT_NE(hash_bytes(std::string(10, '\0')), hash_bytes(std::string(11, '\0')));
  EXPECT_EQ(hash_bytes("").size(), 64u);
}
