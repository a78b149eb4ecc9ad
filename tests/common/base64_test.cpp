// Base64 against RFC 4648's vectors, and what the strict decoder refuses.
#include "common/base64.hpp"

#include <gtest/gtest.h>

#include <string>

namespace px {
namespace {

TEST(Base64, TheStandardsVectorsBothWays) {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(base64_encode(plain), encoded);
    EXPECT_EQ(base64_decode(encoded), std::optional<std::string>(plain)) << encoded;
  }
}

TEST(Base64, EveryByteRoundTrips) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (std::size_t n = 0; n <= all.size(); n += 17) {
    const std::string part = all.substr(0, n);
    EXPECT_EQ(base64_decode(base64_encode(part)), part) << n;
  }
}

TEST(Base64, TheStrictDecoderRefusesWhatIsNotBase64) {
  for (const char* bad :
       {"Zg", "Zg=", "Zm9", "Z===", "====", "Zg==Zg==", "Zm9v!A==", "Zm 9v", "Zm-_", "=Zm9", "Zm=v"})
    EXPECT_EQ(base64_decode(bad), std::nullopt) << bad;
}

TEST(Base64, UrlSafeWithOrWithoutPadding) {
  EXPECT_EQ(base64url_decode("-_8"), std::optional<std::string>("\xfb\xff"));
  EXPECT_EQ(base64url_decode("-_8="), std::optional<std::string>("\xfb\xff"));
  EXPECT_EQ(base64url_decode("eyJleHAiOjF9"), std::optional<std::string>("{\"exp\":1}"));
  EXPECT_EQ(base64url_decode("+/8"), std::nullopt);
  EXPECT_EQ(base64url_decode("A"), std::nullopt);
}

}  // namespace
}  // namespace px
