#include "proxy/test_resolver.hpp"

#include <cstdio>
#include <cstdlib>

#include "common/host_rule.hpp"

namespace px::proxy {

std::vector<std::pair<std::string, boost::asio::ip::address>> parse_test_resolve(const std::string& text,
                                                                                 std::string& problems) {
  std::vector<std::pair<std::string, boost::asio::ip::address>> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? text.size() + 1 : comma + 1;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    std::string name;
    boost::system::error_code ec;
    const auto address = eq == std::string::npos ? boost::asio::ip::address()
                                                 : boost::asio::ip::make_address(item.substr(eq + 1), ec);
    if (eq == std::string::npos || check_dns_name(item.substr(0, eq), name) != NameProblem::none ||
        !host_rule_matches(name, "*.test") || ec || !address.is_loopback()) {
      problems += "PARALLEX_TEST_RESOLVE: ignored '" + item.substr(0, 100) +
                  "' (only NAME.test=LOOPBACK-ADDRESS entries are taken)\n";
      continue;
    }
    out.emplace_back(name, address);
  }
  return out;
}

Resolver resolver_from_environment() {
  const char* text = std::getenv("PARALLEX_TEST_RESOLVE");
  if (!text || !*text) return {};
  std::string problems;
  auto map = parse_test_resolve(text, problems);
  if (!problems.empty()) std::fputs(problems.c_str(), stderr);
  if (map.empty()) return {};
  return [map = std::move(map)](const std::string& host) -> Result<std::vector<boost::asio::ip::address>> {
    for (const auto& [name, address] : map)
      if (name == host) return std::vector<boost::asio::ip::address>{address};
    return system_resolver()(host);
  };
}

}  // namespace px::proxy
