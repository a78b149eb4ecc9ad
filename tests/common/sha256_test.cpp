// SHA-256 (common/sha256.hpp) against the standard's vectors and against
// OpenSSL's, at every length around the block and padding boundaries.
#include "common/sha256.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <string>

namespace {

std::string openssl_sha256_hex(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EXPECT_EQ(EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr), 1);
  std::string hex;
  static const char* digits = "0123456789abcdef";
  for (unsigned int i = 0; i < len; ++i) {
    hex.push_back(digits[md[i] >> 4]);
    hex.push_back(digits[md[i] & 0xf]);
  }
  return hex;
}

TEST(Sha256, StandardVectors) {
  using px::sha256_hex;
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, SameAsOpenSslAtEveryLengthAroundTheBlocks) {
  std::string data;
  for (int i = 0; i < 300; ++i) {
    EXPECT_EQ(px::sha256_hex(data), openssl_sha256_hex(data)) << "length " << data.size();
    data.push_back(static_cast<char>((i * 131 + 7) & 0xff));
  }
}

}  // namespace
