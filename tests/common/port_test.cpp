// parse_port: the one reading of a port every input shares.
#include "common/port.hpp"

#include <gtest/gtest.h>

namespace px {
namespace {

TEST(ParsePort, TakesOneToSixtyFiveThousandInPlainDecimal) {
  EXPECT_EQ(parse_port("1"), 1);
  EXPECT_EQ(parse_port("443"), 443);
  EXPECT_EQ(parse_port("65535"), 65535);
  for (const char* bad : {"", "0", "0443", "00", "65536", "99999", "100000", "-1", "+443", " 443", "443 ",
                          "44a", "0x1bb", "4.4", "443:", "1e3"})
    EXPECT_FALSE(parse_port(bad)) << "'" << bad << "'";
}

}  // namespace
}  // namespace px
